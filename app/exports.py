"""The data behind a comparison as CSV (issue #11): one row per chart, test and configuration, with
exactly the numbers of GET /api/compare (the JSON twin is that answer itself), so a spreadsheet and
the charts agree."""

from __future__ import annotations

import csv
import io
from typing import Any

from app.charts import CHARTS

COLUMNS = (
    "chart",
    "unit",
    "test",
    "configuration",
    "name",
    "runs",
    "baseline",
    "status",
    "n",
    "n_too_fast",
    "n_not_run",
    "mean",
    "median",
    "sd",
    "cv_pct",
    "ci95_low",
    "ci95_high",
    "ratio",
    "ratio_ci95_low",
    "ratio_ci95_high",
    "verdict",
)


def _pair(value: list[float] | None) -> tuple[Any, Any]:
    return (value[0], value[1]) if value else ("", "")


def compare_csv(data: dict[str, Any]) -> str:
    """`data` (what app.charts.compare() returned, absolute values) as CSV; empty fields for nulls."""
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
                        config["name"],
                        " ".join(map(str, config["runs"])),
                        int(config["id"] == data["baseline_configuration"]),
                        cell["status"],
                        cell["n"],
                        cell["n_too_fast"],
                        cell["n_not_run"],
                        *("" if cell[k] is None else cell[k] for k in ("mean", "median", "sd", "cv_pct")),
                        *_pair(cell["ci95"]),
                        "" if cell["ratio"] is None else cell["ratio"],
                        *_pair(cell["ratio_ci95"]),
                        cell["verdict"] or "",
                    ]
                )
    return out.getvalue()
