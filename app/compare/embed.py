"""What the /compare page embeds for its charts (<script type="application/json" id="compare-data">, read by
static/charts.js): the comparison without what the page already says in HTML, and the view without its notes.

The per-cell statistics of GET /api/compare (median, SD, p-values, hints per cell, ...) are most of a comparison's
bytes — 700 KB of a 50-run page — and no chart reads them: the charts draw the view's bars (view.chart_bars),
which carry every value, error bar, status and verdict they show. The setup, the summary, the warnings and the
charts' notes and hints are text of the page itself. The same figures are not sent twice; GET /api/compare (linked
from the page) has them all.
"""

from __future__ import annotations

from typing import Any

from app.compare.comparison import Comparison

# Of each chart of the view: what the page writes as HTML.
VIEW_CHART_IN_THE_HTML = frozenset({"notes", "hint_list"})


def chart_data(data: Comparison, view: dict[str, Any], answer: list[dict[str, Any]]) -> dict[str, Any]:
    """The embedded JSON of a comparison `data` (engine.compare), its `view` (view.compare_view) and `answer`
    (answer.rows). Of the comparison: all but its setup, summary and warnings (the page writes them as HTML), and of
    each chart what the charts read (the bars come from the view), in the API's order."""
    compare = {
        "mode": data.mode,
        "baseline": data.baseline,
        "runs": data.runs,
        "group": data.group,
        "configurations": data.configurations,
        "baseline_configuration": data.baseline_configuration,
        "min_effect": data.min_effect,
        "error_control": data.error_control,
        "charts": [
            {"key": chart.key, "unit": chart.unit, "higher_is_better": chart.higher_is_better, "tests": chart.tests}
            for chart in data.charts
        ],
    }
    charts = [
        {key: value for key, value in chart.items() if key not in VIEW_CHART_IN_THE_HTML} for chart in view["charts"]
    ]
    return {"compare": compare, "view": view | {"charts": charts}, "answer": answer}
