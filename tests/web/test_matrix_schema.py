"""GET /api/matrix has a response model (MatrixOut) in the OpenAPI schema, so schemathesis checks its bodies
(tests/web/test_api_schema.py); the JSON itself is as it was: the model describes every field, adds none."""

from __future__ import annotations

from typing import Any

import pytest

from app.compare.engine import CELL_FIGURES
from app.web.schemas import CellStatsOut, MatrixCellOut, MatrixOut
from tests.compare_data import sweep_line
from tests.helpers import post_csv

# Two raid levels x two file systems, one cell empty, one cell a single run (no CI, verdict unknown).
SWEEP = {("5", "ext3"): [(100_000, 1000), (102_000, 1020)], ("6", "xfs"): [(120_000, 990), (122_400, 1010)]}


@pytest.fixture
def sweep(client) -> None:
    for (raid, fs), rows in SWEEP.items():
        lines = "".join(sweep_line(f"raid{raid}-{fs}", *row) + "\n" for row in rows)
        assert post_csv(client, lines, tag=[f"raid={raid}", f"fs={fs}"]).status_code == 201
    assert post_csv(client, sweep_line("single", 90_000, 900), tag=["raid=6", "fs=ext3"]).status_code == 201


def test_the_openapi_schema_documents_the_matrix_body(client):
    schema = client.get("/openapi.json").json()
    ok = schema["paths"]["/api/matrix"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/MatrixOut"}
    cell = schema["components"]["schemas"]["MatrixCellOut"]
    assert set(CELL_FIGURES) <= set(cell["properties"]) and set(cell["required"]) == set(cell["properties"])


def dump(model: MatrixOut) -> dict[str, Any]:
    return model.model_dump(mode="json")


@pytest.mark.parametrize("query", ["rows=raid&cols=fs", "rows=fs&cols=raid&test=getc", "rows=raid&cols=fs&test=seeks"])
def test_every_matrix_body_is_the_model_field_for_field(client, sweep, query):
    body = client.get(f"/api/matrix?{query}").json()
    # Forbidding extra fields: a field build() adds that the model lacks fails here, as does a missing one.
    strict = type("StrictMatrixOut", (MatrixOut,), {"model_config": {"extra": "forbid"}})
    assert dump(strict.model_validate(body)) == body
    cells = [cell for row in body["rows"] for cell in row["cells"]]
    assert None in cells and any(cell and cell["ci95"] is None for cell in cells)  # the nullable paths are taken
    with_baseline = client.get(f"/api/matrix?{query}&baseline={body['runs'][-1]}").json()
    assert dump(MatrixOut.model_validate(with_baseline)) == with_baseline and with_baseline["baseline"] is not None


def test_the_cell_figures_are_typed_as_the_compare_apis():
    for name in CELL_FIGURES:
        assert MatrixCellOut.model_fields[name].annotation == CellStatsOut.model_fields[name].annotation, name
