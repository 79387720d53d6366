"""The data behind a comparison as CSV: one row per chart, test and configuration, with
exactly the numbers of GET /api/compare (the JSON twin is that answer itself), so a spreadsheet and
the charts agree."""

from __future__ import annotations

import csv
import io
from typing import Any

from app.compare.engine import CELL_FIGURES, CHARTS

PAIRS = tuple(key for key in CELL_FIGURES if key.endswith("ci95"))  # [low, high] in JSON: two columns here
COLUMNS = ("chart", "unit", "test", "configuration", "name", "runs", "baseline") + tuple(
    column for key in CELL_FIGURES for column in ((f"{key}_low", f"{key}_high") if key in PAIRS else (key,))
)


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    """A free-text cell (a name from machine names, labels and tags) as text: a leading ' when a spreadsheet
    would read it as a formula, so `=HYPERLINK(...)` in a machine name is shown, not run."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def _cells(key: str, value: Any) -> tuple[Any, ...]:
    """A figure's CSV fields: a [low, high] pair as two, null as empty."""
    if key in PAIRS:
        return (value[0], value[1]) if value else ("", "")
    return ("" if value is None else value,)


def compare_csv(data: dict[str, Any]) -> str:
    """`data` (what app.compare.engine.compare() returned, absolute values) as CSV; empty fields for nulls."""
    configurations = {c["id"]: c for c in data["configurations"]}
    units = {spec.key: spec.unit for spec in CHARTS}  # of the means (a relative answer's "unit" is "%")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for chart in data["charts"]:
        for entry in chart["configurations"]:
            config = configurations[entry["configuration"]]
            for cell in entry["tests"]:
                writer.writerow(
                    [
                        chart["key"],
                        units[chart["key"]],
                        cell["test"],
                        config["id"],
                        _text(config["name"]),
                        " ".join(map(str, config["runs"])),
                        int(config["id"] == data["baseline_configuration"]),
                        *(part for key in CELL_FIGURES for part in _cells(key, cell[key])),
                    ]
                )
    return out.getvalue()
