"""The comparison's typed form (app/compare/comparison.py): its JSON is the API's, field for field."""

import orjson

from app.compare import engine, stats
from app.compare.comparison import CELL_FIELDS, Cell, api_answer, cell_without_nulls
from app.compare.grouping import Grouping
from app.ingest.parsing import parse_line
from tests.compare_data import cell_of
from tests.helpers import LINE_103, LINE_197, LINE_198


def _runs() -> list[engine.RunFigures]:
    runs = []
    for run_id, line in enumerate((LINE_198, LINE_197, LINE_103, LINE_198, LINE_197), start=1):
        parsed = parse_line(line, 1)
        tags = {"cfg": "a" if run_id % 2 else "b"}
        runs.append(
            engine.RunFigures(
                run_id, parsed.machine, None, tags, parsed.format_version, parsed.bonnie_version, parsed.results
            )
        )
    return runs


def _generic(cell: Cell) -> dict:
    return {name: value for name in CELL_FIELDS if (value := getattr(cell, name)) is not None}


def test_a_cell_without_its_nulls_is_every_field_in_order_but_the_null_ones():
    every = cell_of("putc", **{name: 1 for name in CELL_FIELDS if name not in ("test", "hints")})
    assert list(cell_without_nulls(every)) == list(CELL_FIELDS)
    assert cell_without_nulls(cell_of("putc")) == {
        "test": "putc",
        "status": "ok",
        "n": 0,
        "n_too_fast": 0,
        "n_not_run": 0,
        "hints": [],
    }
    for grouping in (Grouping(kind="none"), Grouping(keys=("cfg",), kind="tags")):
        data = engine.compare(_runs(), mode="relative", grouping=grouping)
        for chart in data.charts:
            for entry in chart.configurations:
                for cell in entry.tests:
                    assert list(cell_without_nulls(cell).items()) == list(_generic(cell).items())


def test_the_api_answer_is_the_comparison_s_json_without_its_cells_nulls():
    data = engine.compare(_runs(), mode="relative", grouping=Grouping(keys=("cfg",), kind="tags"))
    full = orjson.loads(orjson.dumps(data))
    # the verdicts' scratch is no part of the answer, even while it is set
    scratch = cell_of("putc")
    scratch._power, scratch._rank = stats.Spreads(0.01, 3, 0.02, 3), True
    assert list(orjson.loads(orjson.dumps(scratch))) == list(CELL_FIELDS)
    for chart in full["charts"]:
        for entry in chart["configurations"]:
            entry["tests"] = [{k: v for k, v in cell.items() if v is not None} for cell in entry["tests"]]
    assert orjson.dumps(api_answer(data)) == orjson.dumps(full)
