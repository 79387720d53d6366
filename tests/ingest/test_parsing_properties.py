"""Property-based: whatever text or bytes come in, the parser answers with runs or per-line errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.ingest.parsing import ParsedRun
from tests.helpers import LINE_103, LINE_197, LINE_198
from tests.parsing_oracle import parse_bytes, parse_text

REAL_LINES = [LINE_198, LINE_197, LINE_103]
CELLS = st.sampled_from(
    [
        "",
        "+++++",
        "+++",
        "1",
        "-1",
        "1.5",
        "12us",
        "3ms",
        "7s",
        "16",
        "link",
        "1.98",
        "1.96",
        "x",
        ",",
        "\x00",
        "\r",
        "ÿ",
        "9" * 30,
    ]
)


def check(result, text_lines):
    for run in result.runs:
        assert isinstance(run, ParsedRun)
        assert len(run.results) == 12
        assert 1 <= run.line_no <= text_lines
    for error in result.errors:
        assert 1 <= error.line <= text_lines and error.error
    assert len({r.line_no for r in result.runs} | {e.line for e in result.errors}) == len(result.runs) + len(
        result.errors
    )


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text())
def test_any_text(text):
    check(parse_text(text), text.count("\n") + 1)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary())
def test_any_bytes(data):
    check(parse_bytes(data), data.count(b"\n") + 1)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.sampled_from(REAL_LINES), st.lists(st.tuples(st.integers(0, 60), CELLS), max_size=6))
def test_real_lines_with_mutated_fields(line, mutations):
    fields = line.split(",")
    for index, cell in mutations:
        if index < len(fields):
            fields[index] = cell
    text = ",".join(fields)
    check(parse_text(text), text.count("\n") + 1)
