"""app/web/heat_html.py builds the heat tables' cells in Python for speed: the same HTML the template's loop wrote
(kept here as the reference), for every corpus line alone and for grouped runs with verdicts, absolute and
relative; and every text in it is escaped."""

from jinja2 import Environment

from app.compare import engine, heat
from app.compare.request import parse_group
from app.ingest.parsing import parse_line
from app.web import heat_html
from tests.helpers import CORPUS_DIR, HOSTILE

# The heat cells as a Jinja template draws them: the reference app/web/heat_html.py must match byte for byte.
REFERENCE = Environment(autoescape=True).from_string(
    """{% for i in section.indexes %}{% set cell = row.cells[i] %}{% set column = table.columns[i] %}"""
    """<td class="num{% if column.test in ('putc', 'seeks', 'seq_create', 'ran_create') %} group-start{% endif %} """
    """{{ cell.status }}{% if cell.verdict == 'better' %} heat-better{% elif cell.verdict == 'worse' %} heat-worse"""
    """{% endif %}" data-verdict="{{ cell.verdict or '' }}">
          {%- if cell.text == "+++++" %}<span title="the test took under 0.5 s: too fast to measure">+++++</span>"""
    """{% else %}{{ cell.text }}{% endif %}
          {%- if cell.n > 1 %}<small class="n">N={{ cell.n }}</small>{% endif %}
          {%- if cell.ci %}<small class="ci">CI {{ cell.ci }}</small>{% endif %}
          {%- if cell.relative %}<small class="rel">{{ cell.relative }}</small>{% endif %}</td>{% endfor %}"""
)


def corpus_runs() -> list[engine.RunFigures]:
    runs: list[engine.RunFigures] = []
    for path in sorted(CORPUS_DIR.glob("*.csv")):
        for line in path.read_text().splitlines():
            parsed = parse_line(line, 1) if line and not line.startswith("#") else None
            if parsed is None or not hasattr(parsed, "results"):
                continue  # headers and the corpus's deliberately broken lines
            run_id = len(runs) + 1
            tags = {"cfg": str(run_id % 4)}
            runs.append(
                engine.RunFigures(
                    run_id, parsed.machine, None, tags, parsed.format_version, parsed.bonnie_version, parsed.results
                )
            )
    return runs


def test_the_cells_are_the_templates_for_every_corpus_comparison():
    runs = corpus_runs()
    assert len(runs) > 20
    checked = 0
    for group in ("none", "cfg", "params"):
        for mode in ("absolute", "relative"):
            data = engine.compare(runs, mode=mode, baseline=runs[3].id, grouping=parse_group(group))
            table = heat.heat_table(data)
            for section in table["sections"]:
                built = heat_html.section_cells(table, section)
                for row, cells in zip(table["rows"], built, strict=True):
                    assert str(cells) == REFERENCE.render(section=section, row=row, table=table), (group, mode)
                    checked += 1
    assert checked > 100


def test_every_text_of_a_cell_is_escaped():
    table = {
        "columns": [{"test": "putc", "measure": "value", "unit": "KiB/s", "group_start": True}],
        "rows": [
            {
                "cells": [
                    {"text": HOSTILE, "relative": HOSTILE, "ci": HOSTILE, "status": "ok", "verdict": "better", "n": 2}
                ]
            },
        ],
    }
    [cells] = heat_html.section_cells(table, {"indexes": [0]})
    assert HOSTILE not in cells and "&lt;img" in cells
    assert str(cells) == REFERENCE.render(section={"indexes": [0]}, row=table["rows"][0], table=table)
