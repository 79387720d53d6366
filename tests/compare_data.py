"""Shared by the comparison tests: a known sweep of two configurations, and the page's embedded JSON."""

import json
import re

import orjson

from app.compare.comparison import CELL_FIELDS, Cell, Comparison
from app.compare.engine import CELL_FIGURES
from tests.helpers import CONTRACT_LINE, with_field

# Two configurations x 3 runs (fields of the contract's 1.98 line: 2 machine, 11 put_block KiB/s, 15 getc KiB/s):
# put_block 20 % faster with 1 % spread; getc 1 % faster with 5 % spread.
SWEEP = {
    "ext4": [(100_000, 1000), (101_000, 1050), (99_000, 950)],
    "xfs": [(120_000, 1010), (121_200, 1060), (118_800, 960)],
}


def sweep_line(machine: str, put_block: int, getc: int) -> str:
    return with_field(with_field(with_field(CONTRACT_LINE, 2, machine), 11, str(put_block)), 15, str(getc))


def sweep_csv(fs: str) -> str:
    """The three lines of one configuration, machine `{fs}-box`."""
    return "".join(sweep_line(f"{fs}-box", *row) + "\n" for row in SWEEP[fs])


def cell_of(test: str, **figures) -> Cell:
    """A comparison's cell for `test` with the figures given: measured (status ok) with no runs, no hints and every
    other figure null unless given."""
    given = {"test": test, "status": "ok", "n": 0, "n_too_fast": 0, "n_not_run": 0, "hints": []} | figures
    return Cell(**{name: given.get(name) for name in CELL_FIELDS})


def json_form(comparison: Comparison) -> dict:
    """A comparison as orjson writes it for the page and /api/matrix (null figures kept): the JSON a test of the
    contract reads."""
    return orjson.loads(orjson.dumps(comparison))


def embedded_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="compare-data">(.*?)</script>', html, re.DOTALL)
    assert match, "the page has no embedded compare data"
    return json.loads(match.group(1))


def with_null_figures(api: dict) -> dict:
    """GET /api/compare's answer with the null figures it leaves out of each cell put back as None (in place)."""
    for chart in api["charts"]:
        for entry in chart["configurations"]:
            for cell in entry["tests"]:
                for key in CELL_FIGURES:
                    cell.setdefault(key, None)
    return api


def as_embedded(api: dict) -> dict:
    """What the compare page embeds of GET /api/compare's answer for the same view: all of it but what the page
    writes as HTML (setup, summary, warnings), and of each chart what the charts read (the bars are the view's)."""
    kept = {key: value for key, value in api.items() if key not in ("setup", "summary", "warnings", "charts")}
    kept["charts"] = [
        {key: chart[key] for key in ("key", "unit", "higher_is_better", "tests")} for chart in api["charts"]
    ]
    return kept


def assert_absolute_bars_are_the_apis_means(data: dict, api: dict) -> None:
    """In absolute mode every bar the page embeds is the API's mean of its cell, with its 95 % CI, N and verdict
    (None for the baseline configuration), and a cell without a mean has no bar."""
    assert api["mode"] == "absolute"
    with_null_figures(api)
    checked = 0
    for chart, view in zip(api["charts"], data["view"]["charts"], strict=True):
        assert view["key"] == chart["key"]
        bars = {bar["configuration"]: bar for bar in view["bars"]}
        assert list(bars) == [entry["configuration"] for entry in chart["configurations"]]
        for entry in chart["configurations"]:
            bar = bars[entry["configuration"]]
            base = entry["configuration"] == api["baseline_configuration"]
            for i, cell in enumerate(entry["tests"]):
                drawn = cell["status"] == "ok"
                assert bar["values"][i] == (cell["mean"] if drawn else None), (chart["key"], cell["test"])
                assert bar["errors"][i] == (cell["ci95"] if drawn else None)
                assert bar["n"][i] == cell["n"] and bar["verdicts"][i] == (None if base else cell["verdict"])
                checked += 1
    assert checked


BOUND = "bound"  # a relative bar that is the +++++ bound its verdict rests on (drawn with status "ok")


def drawn_reason(cell: dict, base: dict, *, relative: bool, rates: bool) -> str:
    """Written from the API's fields for the test oracles: why a cell has no bar ("ok" when it has one; BOUND when,
    relative, its bar is the +++++ bound a verdict rests on). Relative, on a chart of rates, +++++ not known to be
    above the baseline (+++++ there too, or measured above the +++++ runs' floor) has no bar."""
    reason = cell["status"]
    if relative and rates and cell["bound_ratio"] is not None and cell["verdict"] in ("better", "worse"):
        return BOUND
    floor = cell["too_fast_above"]
    above = floor is not None and not base["n_too_fast"] and base["mean"] is not None and floor > base["mean"]
    if relative and rates and reason == "too_fast" and not above:
        return "too_fast_unjudged"
    if relative and reason == "ok" and base["status"] != "ok":
        return "baseline_" + base["status"]
    if relative and reason == "ok" and cell["ratio"] is None:
        return "baseline_zero"
    return reason


def shown_ratio(cell: dict) -> float:
    """A relative bar's ratio: the geometric means' (the verdict's and its CI's), else the arithmetic one."""
    return cell["geo_ratio"] if cell["geo_ratio"] is not None else cell["ratio"]
