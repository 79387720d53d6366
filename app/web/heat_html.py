"""The cells of the compare page's heat tables as HTML (app/compare/heat.py gives their data,
templates/_compare_figures.html draws the rest of them).

Built here rather than in the template: Jinja spent about 22 µs per cell on attribute lookups and escaping,
40 ms for the 1,800 cells of a 50-run comparison — two thirds of the page's time whenever it is not cached
(the first view after every upload). Same markup as a template would write; every text is escaped.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup, escape

from app.bonnie import TOO_FAST_MARK, TOO_FAST_TITLE
from app.compare.heat import TOO_FAST_TEXT

TOO_FAST_CELL = f'<span title="{escape(TOO_FAST_TITLE)}">{escape(TOO_FAST_MARK)}</span>'
VERDICT_CLASSES = {"better": " heat-better", "worse": " heat-worse"}
_NEEDS_ESCAPING = re.compile("[&<>'\"]")


def _text(text: str) -> str:
    """escape(text), without making a Markup of each of thousands of short plain texts (most of the time)."""
    return escape(text) if _NEEDS_ESCAPING.search(text) else text


def section_cells(table: dict[str, Any], section: dict[str, Any]) -> list[Markup]:
    """Per row of `table` (app.compare.heat.heat_table()), the <td> cells of `section`."""
    columns = table["columns"]
    starts = [" group-start" if columns[i]["group_start"] else "" for i in section["indexes"]]
    html = []
    for row in table["rows"]:
        cells = row["cells"]
        parts = []
        for i, start in zip(section["indexes"], starts, strict=True):
            cell = cells[i]
            verdict = cell["verdict"] or ""
            text = TOO_FAST_CELL if cell["text"] == TOO_FAST_TEXT else _text(cell["text"])
            n = f'<small class="n">N={cell["n"]}</small>' if cell["n"] > 1 else ""
            ci = f'<small class="ci">CI {_text(cell["ci"])}</small>' if cell["ci"] else ""
            relative = f'<small class="rel">{_text(cell["relative"])}</small>' if cell["relative"] else ""
            parts.append(
                f'<td class="num{start} {_text(cell["status"])}{VERDICT_CLASSES.get(verdict, "")}"'
                f' data-verdict="{_text(verdict)}">{text}{n}{ci}{relative}</td>'
            )
        html.append(Markup("".join(parts)))
    return html
