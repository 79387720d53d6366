"""Docs stay honest: the tables in README.md and runner/README.md are parsed and compared row by row, in order,
with the code they describe, and every citation of a document in the code names a file and section that exist."""

import re
from pathlib import Path

import pytest

from app.config import Settings
from app.ingest.parsing import COLUMNS_198

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


# ---- Markdown tables ----


def table_rows(markdown: str, heading: str) -> list[list[str]]:
    """The body rows of the first table under `heading` (a whole heading line), each a list of its cells."""
    lines = markdown.splitlines()
    try:
        start = lines.index(heading)
    except ValueError:
        pytest.fail(f"no heading {heading!r}")
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break  # the table has ended
    if len(rows) < 2 or not set(rows[1][0]) <= set("-: "):
        pytest.fail(f"no Markdown table (header row, then |---| row) under {heading!r}")
    return rows[2:]


def code_span(cell: str) -> str:
    """The text of the cell's first `code span`, or the cell itself when it has none."""
    match = re.search(r"`([^`]*)`", cell)
    return match[1] if match else cell


def compare_in_order(documented: list[str], actual: list[str], what: str, where: str) -> None:
    """Fails with the first row that differs, naming both sides, rather than a diff of two long lists."""
    for index, (doc, real) in enumerate(zip(documented, actual, strict=False)):
        if doc != real:
            pytest.fail(f"{where}, {what} row {index}: the document says {doc!r}, the code has {real!r}")
    if len(documented) < len(actual):
        pytest.fail(f"{where} stops after {len(documented)} {what} rows; the code also has {actual[len(documented) :]}")
    if len(documented) > len(actual):
        pytest.fail(
            f"{where} has {len(documented) - len(actual)} {what} rows the code does not: {documented[len(actual) :]}"
        )


def test_csv_column_table_of_the_runner_is_columns_198_in_order():
    rows = table_rows((ROOT / "runner" / "README.md").read_text(), "### CSV columns (format 1.98, 50 fields)")
    numbers = [row[0] for row in rows]
    compare_in_order(numbers, [str(index) for index in range(len(rows))], "column number", "runner/README.md")
    compare_in_order([code_span(row[1]) for row in rows], list(COLUMNS_198), "column", "runner/README.md")


def documented_default(value: object) -> str:
    """A setting's default as README's table writes it."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def test_settings_table_of_the_readme_is_the_settings_class_in_order():
    rows = table_rows((ROOT / "README.md").read_text(), "## Configuration")
    fields = Settings.model_fields
    compare_in_order(
        [code_span(row[0]) for row in rows], [f"BONNIEBOARD_{name.upper()}" for name in fields], "setting", "README.md"
    )
    for row, (name, field) in zip(rows, fields.items(), strict=True):
        expected = documented_default(field.default)
        cell = code_span(row[1]) if row[1].startswith("`") else row[1]
        # "unset" may be followed by what happens then ("unset: a random key per serve").
        ok = cell.startswith("unset") if expected == "unset" else cell == expected
        assert ok, (
            f"README.md, setting BONNIEBOARD_{name.upper()}: default documented as {row[1]!r}, the code's is {expected!r}"
        )


def test_table_parsing_notices_a_deleted_row():
    """The check above can fail: a table with one row removed differs from the code at that row."""
    text = (ROOT / "runner" / "README.md").read_text()
    without_seeks = "\n".join(line for line in text.splitlines() if not line.startswith("| 19 | `seeks`"))
    rows = table_rows(without_seeks, "### CSV columns (format 1.98, 50 fields)")
    with pytest.raises(pytest.fail.Exception, match="row 19: the document says 'seeks_cpu', the code has 'seeks'"):
        compare_in_order([code_span(row[1]) for row in rows], list(COLUMNS_198), "column", "runner/README.md")


# ---- Citations of documents in the code ----

# Where the code cites documents: the Python, C, JavaScript, templates and tests we write (not vendored files).
CITING_FILES = [
    *ROOT.glob("app/**/*.py"),
    *ROOT.glob("app/**/*.c"),
    *ROOT.glob("tests/**/*.py"),
    *ROOT.glob("bench/*.py"),
    *ROOT.glob("runner/src/*.[ch]"),
    *ROOT.glob("runner/tests/*.c"),
    *ROOT.glob("templates/**/*.html"),
    *[path for path in ROOT.glob("static/*.js") if not re.search(r"\d+\.\d+", path.name)],  # vendored: versioned
]
# Sections are numbered (§N) only in this document, so a bare § cites it.
NUMBERED_DOC = "bonnie-csv-format.md"

DOC = r"((?:[\w.-]+/)*[\w-]+\.md)(?![\w.;\[])"  # a path ending in .md, not C's `b.md.found` or `b->block.md;`
DOC_NAME = re.compile(r"(?<![\w/.>-])" + DOC)
SECTION = re.compile(r"§(\d+(?:\.\d+)*)(?:-(\d+))?")
SECTIONS_WORD = re.compile(DOC + r",? sections? (\d+(?:\.\d+)*)(?:-(\d+(?:\.\d+)*))?")
TITLE_AFTER = re.compile(DOC + r"[,:]? \"([^\"]+)\"")
TITLE_BEFORE = re.compile(r"\"([^\"]+)\" section of " + DOC)
HEADING = re.compile(r"^(#{1,6}) (.*)$")
NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+)*)\.? ")
LIST_ITEM = re.compile(r"^(\d+)\. ")


def resolve_doc(name: str) -> Path | None:
    """A cited document: a path from the repository root, or a bare name in docs/ (or at the root)."""
    if "/" in name:
        path = ROOT / name
        return path if path.is_file() else None
    for path in (DOCS / name, ROOT / name):
        if path.is_file():
            return path
    return None


def outline(doc: Path) -> tuple[dict[str, list[str]], list[str]]:
    """{section number: the body lines under its heading} and every heading's title."""
    sections: dict[str, list[str]] = {}
    titles = []
    current: list[str] | None = None
    for line in doc.read_text().splitlines():
        heading = HEADING.match(line)
        if heading:
            titles.append(heading[2])
            number = NUMBERED_HEADING.match(heading[2])
            current = sections.setdefault(number[1], []) if number else None
        elif current is not None:
            current.append(line)
    return sections, titles


def section_exists(doc: Path, number: str, item: str | None) -> bool:
    """§3.3 is a heading "3.3"; §3.3-3 is item 3 of the list under it; §7.3 with no heading "7.3" is item 3 of §7."""
    sections, _ = outline(doc)
    if number not in sections:
        parent, _, last = number.rpartition(".")
        if not parent or item is not None or parent not in sections:
            return False
        number, item = parent, last
    if item is None:
        return True
    return any((m := LIST_ITEM.match(line)) and m[1] == item for line in sections[number])


def citations() -> list[tuple[str, str, str | None, str | None]]:
    """(where, document name, section number or title, list item) for every citation in CITING_FILES."""
    found: list[tuple[str, str, str | None, str | None]] = []
    for path in CITING_FILES:
        for line_no, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            where = f"{path.relative_to(ROOT)}:{line_no}"
            for name in DOC_NAME.findall(line):
                found.append((where, name, None, None))
            for match in SECTION.finditer(line):
                found.append((where, NUMBERED_DOC, match[1], match[2]))
            for match in SECTIONS_WORD.finditer(line):
                for number in filter(None, (match[2], match[3])):
                    found.append((where, match[1], number, None))
            for match in TITLE_AFTER.finditer(line):
                found.append((where, match[1], f'"{match[2]}"', None))
            for match in TITLE_BEFORE.finditer(line):
                found.append((where, match[2], f'"{match[1]}"', None))
    return found


def test_the_code_cites_documents():
    """Guards the scan itself: the parser's §-citations and the schema's document must be found."""
    cited = {(name, section) for _, name, section, _ in citations()}
    assert (NUMBERED_DOC, "3.3") in cited
    assert ("api-contract.md", None) in cited


def test_every_cited_document_and_section_exists():
    problems = []
    for where, name, section, item in citations():
        doc = resolve_doc(name)
        if doc is None:
            problems.append(f"{where}: cites {name}, which is neither in docs/ nor at that path")
        elif section is None:
            continue
        elif section.startswith('"'):
            if not any(section.strip('"') in title for title in outline(doc)[1]):
                problems.append(f"{where}: cites {name} {section}, but no heading of {name} says that")
        elif not section_exists(doc, section, item):
            cited = f"§{section}" + (f"-{item}" if item else "")
            problems.append(f"{where}: cites {name} {cited}, which {name} does not have")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("number", "item", "exists"),
    [
        ("3.3", None, True),
        ("3.3", "3", True),
        ("3.3", "9", False),
        ("7.3", None, True),
        ("7.99", None, False),
        ("9", None, False),
    ],
)
def test_section_lookup(number, item, exists):
    assert section_exists(DOCS / NUMBERED_DOC, number, item) is exists


def test_no_example_puts_a_token_on_the_command_line():
    """A runner benchmark lasts hours: a token in its arguments is in `ps` and /proc/PID/cmdline all that time."""
    for readme in (ROOT / "README.md", ROOT / "runner" / "README.md"):
        examples = "\n".join(re.findall(r"```(?:sh|bash)?\n(.*?)```", readme.read_text(), re.DOTALL))
        assert re.search(r"--token[ =]", examples) is None, readme


# ---- Decisions, and no issue numbers ----

DECISIONS = DOCS / "decisions.md"
# A decision is cited by its exact title, on one line: the document's path, a comma, the title in double quotes.
DECISION_MENTION = re.compile(r"docs/decisions\.md,")
DECISION_CITATION = re.compile(r"docs/decisions\.md, \"([^\"]+)\"")
# "issue #8", "Issue 12.7", "issues #5, #8", "(#8 item 6)": numbers of an issue tracker the repository does not hold.
ISSUE_NUMBER = re.compile(r"\bissues? #?\d|\(#\d", re.IGNORECASE)
# The code we write, outside runner/ (vendored JavaScript has a version in its name).
OUR_SOURCES = [
    *ROOT.glob("app/**/*.py"),
    *ROOT.glob("app/**/*.c"),
    *ROOT.glob("templates/**/*.html"),
    *[path for path in ROOT.glob("static/*.js") if not re.search(r"\d+\.\d+", path.name)],
]
RUNNER_SOURCES = [*ROOT.glob("runner/src/*.[ch]")]
DECISION_CITING_FILES = [
    *OUR_SOURCES,
    *RUNNER_SOURCES,
    *ROOT.glob("tests/**/*.py"),
    *ROOT.glob("bench/*.py"),
]


def decision_titles() -> set[str]:
    """The title of every decision: each `## ` heading of docs/decisions.md."""
    return {m[1] for line in DECISIONS.read_text().splitlines() if (m := re.match(r"## (.+)$", line))}


def decision_citations_in(text: str, name: str) -> list[tuple[str, str | None]]:
    """(where, title) for every citation of docs/decisions.md in `text`; title None when a line names the
    document but not a quoted title after it (a citation broken across lines, say)."""
    found: list[tuple[str, str | None]] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        titles = DECISION_CITATION.findall(line)
        found.extend((f"{name}:{line_no}", title) for title in titles)
        if len(DECISION_MENTION.findall(line)) > len(titles):
            found.append((f"{name}:{line_no}", None))
    return found


def decision_citations(paths: list[Path]) -> list[tuple[str, str | None]]:
    return [
        found
        for path in paths
        for found in decision_citations_in(path.read_text(errors="replace"), str(path.relative_to(ROOT)))
    ]


def issue_numbers(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line_no}: {line.strip()}"
        for path in paths
        for line_no, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if ISSUE_NUMBER.search(line)
    ]


def test_the_code_cites_decisions():
    """Guards the scan itself: the files that cite decisions are found, and so are their citations."""
    cited = {title for _, title in decision_citations(DECISION_CITING_FILES)}
    assert "Frozen heap at start" in cited and "Ingest within 2x of sqlite3's .import" in cited


def test_every_cited_decision_exists():
    titles = decision_titles()
    problems = [
        f"{where}: cites docs/decisions.md without a title on the same line"
        if title is None
        else f"{where}: cites docs/decisions.md {title!r}, which is not a heading there (## {title})"
        for where, title in decision_citations(DECISION_CITING_FILES)
        if title not in titles
    ]
    assert not problems, "\n".join(problems)


def test_decision_scan_notices_a_missing_title_and_a_broken_citation():
    """The check above can fail: an unknown title, and a citation whose title went to the next line."""
    doc = "docs/decisions" + ".md"  # spelled in two parts, so that this file cites nothing
    probe = f'# Frozen ({doc}, "No such decision").\n# Wrapped ({doc},\n# "Frozen heap at start").\n'
    assert decision_citations_in(probe, "probe") == [("probe:1", "No such decision"), ("probe:2", None)]
    assert "No such decision" not in decision_titles()


def test_our_sources_cite_no_issue_numbers():
    """An issue number resolves nowhere in the repository: a comment says why the code is so, and a number that
    needs its story cites docs/decisions.md."""
    found = issue_numbers(OUR_SOURCES)
    assert not found, "\n".join(found)


def test_issue_number_scan_finds_the_forms_in_use():
    lines = ["(issue #13)", "Issue 12.7: x", "(issues #5, #8)", "(#8 item 6)", "before #20"]
    assert [line for line in lines if ISSUE_NUMBER.search(line)] == lines[:4]
    assert not ISSUE_NUMBER.search("what each test issues. 3 of them")


def test_runner_sources_cite_no_issue_numbers():
    """As test_our_sources_cite_no_issue_numbers, for runner/src."""
    found = issue_numbers(RUNNER_SOURCES)
    assert not found, "\n".join(found)


def test_the_proxy_examples_pass_the_host_with_its_port():
    """nginx's $host drops a port other than 80 or 443: behind `listen 8443`, every write from a page was a 403,
    its Origin naming a port its Host did not. $http_host is the browser's header as sent."""
    blocks = re.findall(r"```nginx\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 2
    for block in blocks:
        assert "proxy_set_header Host $http_host;" in block and "$host;" not in block, block


def _how_to_items() -> list[str]:
    """docs/how-to-add-a-column.md cut into its list items and paragraphs: each names files and what is in them."""
    text = (ROOT / "docs" / "how-to-add-a-column.md").read_text()
    return [item for item in re.split(r"\n(?=\d+\. )|\n\n", text) if item.strip()]


def test_how_to_add_a_column_names_files_that_hold_what_it_says():
    checked = 0
    for item in _how_to_items():
        files = [ROOT / path for path in re.findall(r"\b((?:app|tests|migrations)/[\w/.]+\.(?:py|c))\b", item)]
        for path in files:
            assert path.is_file(), f"docs/how-to-add-a-column.md names {path.relative_to(ROOT)}, which does not exist"
        if not files:
            continue
        sources = "\n".join(path.read_text() for path in files)
        for name in re.findall(r"`([A-Za-z_][\w.]*)`", item):
            if "/" in name or name.count(".") > 2 or re.search(r"\.(py|c|md)$", name):
                continue  # a file's name, not a name in a file
            last = name.rsplit(".", 1)[-1]
            assert re.search(rf"\b{re.escape(last)}\b", sources), (
                f"docs/how-to-add-a-column.md: {name!r} is in none of {[str(p.relative_to(ROOT)) for p in files]}"
            )
            checked += 1
    assert checked > 20  # the page's names were read, not skipped
