"""app/bonnie.py is the one catalog of bonnie++'s tests: it agrees with what bonnie++ writes,
and the parser reads it rather than keeping a list of its own."""

import ast
import re
from pathlib import Path
from typing import get_args

from app import bonnie, limits
from app.compare import answer, engine, heat, matrix, view
from app.ingest import parsing
from app.ingest.parsing import parse_line
from app.web.schemas import MatrixFamilyOut
from tests.helpers import LINE_198

ROOT = Path(__file__).resolve().parent.parent
# The header bonnie++ 2.00a itself printed before a -x run's lines (sample_data/ holds real output).
BONNIE_HEADER = next(
    line
    for line in (ROOT / "sample_data" / "sweep-ext4-loop-sync.csv").read_text().splitlines()
    if line.startswith("format_version,")
).split(",")


def test_the_tests_are_bonnies_columns_in_its_order():
    rates = [name for name in BONNIE_HEADER if f"{name}_cpu" in BONNIE_HEADER]
    latencies = [name.removesuffix("_latency") for name in BONNIE_HEADER if name.endswith("_latency")]
    assert list(bonnie.TESTS) == rates == latencies
    assert len(bonnie.CATALOG) == 12 and len(bonnie.BY_NAME) == 12


def test_the_parser_reads_the_catalog():
    assert parsing.TESTS is bonnie.TESTS
    assert parsing.IO_TESTS is bonnie.IO_TESTS and parsing.FILE_TESTS is bonnie.FILE_TESTS


def test_what_each_test_is():
    # the -s file: five block I/O tests and the seeks, then the -n file tests (§4, bonnie++'s README)
    assert bonnie.IO_TESTS == ("putc", "put_block", "rewrite", "getc", "get_block", "seeks")
    assert bonnie.FILE_TESTS == ("seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del")
    assert bonnie.PER_CHAR_TESTS == ("putc", "getc")
    assert {bonnie.UNITS[test] for test in bonnie.family_tests(bonnie.BLOCK_IO)} == {"KiB/s"}
    assert bonnie.UNITS["seeks"] == "seeks/s" and {bonnie.UNITS[t] for t in bonnie.FILE_TESTS} == {"files/s"}
    assert [t.operation for t in bonnie.CATALOG if t.order == bonnie.SEQUENTIAL] == ["create", "stat", "delete"]
    assert [t.operation for t in bonnie.CATALOG if t.order == bonnie.RANDOM] == ["create", "stat", "delete"]
    assert (
        bonnie.raise_option("seeks") == "-s (file size)" and bonnie.raise_option("ran_stat") == "-n (number of files)"
    )
    # every family's tests are adjacent in bonnie++'s order
    assert sum((bonnie.family_tests(f) for f in bonnie.FAMILIES), ()) == bonnie.TESTS


def test_min_time_is_bonnies():
    assert bonnie.MIN_TIME_S == 0.5  # bonnie.h: #define MinTime (0.5)
    assert "under 0.5 s" in bonnie.TOO_FAST_EXPLANATION


# ==== Every family table derives from the catalog, and they agree ====


def test_the_rate_charts_split_the_families_and_hold_every_test_once():
    rate_charts = [spec for spec in engine.CHARTS if spec.measure == engine.VALUE]
    assert tuple(spec.key for spec in rate_charts) == engine.RATE_CHART_KEYS
    assert sorted(test for spec in rate_charts for test in spec.tests) == sorted(bonnie.TESTS)
    for spec in rate_charts:
        assert spec.family is not None and spec.unit == spec.family.unit
        assert all(bonnie.BY_NAME[test].family == spec.family for test in spec.tests), spec.key
        assert list(spec.tests) == [test for test in bonnie.TESTS if test in spec.tests], spec.key  # bonnie++'s order
    for family in bonnie.FAMILIES:
        drawn = [test for spec in rate_charts if spec.family == family for test in spec.tests]
        assert sorted(drawn) == sorted(bonnie.family_tests(family)), family.key
    for spec in engine.CHARTS:
        if spec.measure != engine.VALUE:
            assert spec.tests == bonnie.TESTS and spec.family is None


def test_the_heat_tables_group_the_families_in_bonnies_order():
    groups = heat.HEAT_GROUPS
    assert sum((tests for _, tests in groups), ()) == bonnie.TESTS
    for _, tests in groups:
        assert len({bonnie.BY_NAME[test].family for test in tests}) == 1
    # a family is one group, or its file tests' two rounds
    for family in bonnie.FAMILIES:
        mine = [tests for _, tests in groups if bonnie.BY_NAME[tests[0]].family == family]
        assert sum(mine, ()) == bonnie.family_tests(family)
        assert len(mine) == 1 or {bonnie.BY_NAME[tests[0]].order for tests in mine} == {
            bonnie.SEQUENTIAL,
            bonnie.RANDOM,
        }
    assert {tests[0] for _, tests in groups} == heat.HEAT_GROUP_STARTS


def matrix_family_keys() -> list[str]:
    """The catalog's families, each followed by the per-char tests it holds as a family of their own."""
    keys = []
    for family in bonnie.FAMILIES:
        keys.append(family.key)
        if set(bonnie.family_tests(family)) & set(bonnie.PER_CHAR_TESTS):
            keys.append(matrix.PER_CHAR)
    return keys


def test_the_matrix_families_are_the_catalogs_with_per_char_apart():
    assert list(matrix.FAMILIES) == matrix_family_keys()
    for family in bonnie.FAMILIES:
        title, tests = matrix.FAMILIES[family.key]
        per_char = tuple(t for t in bonnie.family_tests(family) if t in bonnie.PER_CHAR_TESTS)
        assert tests == tuple(t for t in bonnie.family_tests(family) if t not in per_char)
        assert title == (f"{family.title} (block tests)" if per_char else family.title)
        assert {bonnie.UNITS[test] for test in tests} == {family.unit}  # ratios of one unit only
    assert matrix.FAMILIES[matrix.PER_CHAR] == ("Per-char I/O", tuple(bonnie.PER_CHAR_TESTS))


def test_the_matrix_schema_names_the_catalogs_families():
    """The OpenAPI document lists the family keys as a literal (a type cannot be computed): it must be the catalog's."""
    assert list(get_args(MatrixFamilyOut.model_fields["family"].annotation)) == matrix_family_keys()


def test_no_title_names_two_different_sets_of_tests():
    """One title, one set of tests: "File create and delete" for bonnie++'s sequential round would also be the
    title of the chart that leaves its stat out."""
    named: dict[str, set[frozenset[str]]] = {}
    for spec in engine.CHARTS:
        if spec.measure == engine.VALUE:
            named.setdefault(spec.title, set()).add(frozenset(spec.tests))
    for title, tests in heat.HEAT_GROUPS:
        named.setdefault(title, set()).add(frozenset(tests))
    for title, tests in matrix.FAMILIES.values():
        named.setdefault(title, set()).add(frozenset(tests))
    assert {title: sets for title, sets in named.items() if len(sets) > 1} == {}


def test_the_heat_tables_columns_say_where_a_group_starts():
    parsed = parse_line(LINE_198, 1)
    run = engine.RunFigures(1, "vm", None, {}, parsed.format_version, parsed.bonnie_version, parsed.results)
    table = heat.heat_table(engine.compare([run]))
    for section in table["sections"]:
        columns = [table["columns"][i] for i in section["indexes"]]
        assert [c["test"] for c in columns if c["group_start"]] == [tests[0] for _, tests in heat.HEAT_GROUPS]
        assert section["families"] == [(title, len(tests)) for title, tests in heat.HEAT_GROUPS]


SLICE = re.compile(r"\bTESTS\[[^\]]*:")


def test_no_test_list_is_cut_by_position():
    """A test is chosen by what the catalog says it is: a slice such as TESTS[6:9] means other tests once the
    catalog's order changes."""
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted([*ROOT.glob("app/**/*.py"), *ROOT.glob("templates/**/*.html"), *ROOT.glob("static/*.js")])
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if SLICE.search(line)
    ]
    assert found == []
    # nor does a template list tests of its own
    quoted_test = re.compile("['\"](?:" + "|".join(bonnie.TESTS) + ")['\"]")
    for path in ROOT.glob("templates/**/*.html"):
        assert not quoted_test.search(path.read_text()), path


# ==== What +++++ means is said once ====

# A parse error names what a field holds ("seq_stat is +++++ (too fast to measure) but seq_stat_cpu is 12"):
# that is the line's content, not an explanation of +++++.
WORDING_EXEMPT = {"app/ingest/parsing.py"}


def test_the_meaning_of_too_fast_is_written_only_in_the_catalog():
    wording = re.compile(r"0\.5 ?s\b|too fast to measure|MinTime")
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted([*ROOT.glob("app/**/*.py"), *ROOT.glob("templates/**/*.html")])
        if path.name != "bonnie.py" and str(path.relative_to(ROOT)) not in WORDING_EXEMPT
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if wording.search(line)
    ]
    assert found == []


def test_the_wording_reads_as_before():
    assert bonnie.TOO_FAST_STATUS == "+++++ too fast to measure"
    assert bonnie.TOO_FAST_TITLE == "the test took under 0.5 s: too fast to measure"
    assert bonnie.TOO_FAST_MEANING == "+++++ (under 0.5 s: too fast to measure, not zero)"
    assert (
        bonnie.TOO_FAST_EXPLANATION
        == "bonnie++ prints +++++ when a test took under 0.5 s: too fast to measure, not zero."
    )


# ==== The catalog and the limits are leaves; limits are read from app/limits.py ====


def app_imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names) of every `import app...` / `from app... import names` in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "app":
            found.append((node.module, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names if alias.name.split(".")[0] == "app"]
    return found


def test_the_catalog_and_the_limits_import_nothing_of_the_app():
    for name in ("bonnie.py", "limits.py"):
        assert app_imports(ROOT / "app" / name) == [], name


LIMIT_NAMES = {name for name in vars(limits) if name.isupper()}


def test_limits_are_imported_from_the_limits_module():
    found = []
    for path in sorted(ROOT.glob("app/**/*.py")):
        where = str(path.relative_to(ROOT))
        if path.name == "limits.py":
            continue
        for module, names in app_imports(path):
            if module != "app.limits" and LIMIT_NAMES & set(names):
                found.append(f"{where}: {sorted(LIMIT_NAMES & set(names))} from {module}")
    assert found == []
    # and none is defined anywhere else
    for path in sorted(ROOT.glob("app/**/*.py")):
        if path.name != "limits.py":
            defined = {
                target.id
                for node in ast.parse(path.read_text()).body
                if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Name)
            }
            assert not defined & LIMIT_NAMES, path


# ==== static/charts.js only draws: the view ships the bars, their statuses and colours ====


def test_the_palette_size_is_the_stylesheets():
    css = (ROOT / "static" / "app.css").read_text()
    assert sorted(map(int, re.findall(r"--run-(\d+):", css))) == list(range(view.PALETTE_COLOURS))
    assert sorted(map(int, re.findall(r"\.run-color-(\d+) ", css))) == list(range(view.PALETTE_COLOURS))
    assert sorted(map(int, re.findall(r"\.run-pattern-(\d+) ", css))) == list(range(1, view.PALETTE_PATTERNS))


def test_the_charts_script_derives_no_figure_status_or_colour():
    script = (ROOT / "static" / "charts.js").read_text()
    # the code without its comments (not the "//" of a URL)
    code = "\n".join(
        re.sub(r"(?<!:)//.*", "", line) for line in script.splitlines() if not line.lstrip().startswith(("*", "/*"))
    )
    # no figure of /api/compare's cells (means, CIs, ratios): the view's bars hold what is drawn
    assert not re.search(r"\.(mean|ci95|ratio|ratio_ci95)\b", code)
    # no reason for a missing bar worked out here, no palette size, no verdict marks or +++++ words of its own
    assert not re.search(r"[\"']baseline_", code) and not re.search(r"[%/] *12\b|COLOURS|PATTERNS", code)
    assert not re.search(r"[▲▼]|\+\+\+|too fast|not measured", code)


def test_the_runs_list_shows_the_block_tests_seeks_and_the_creates():
    assert bonnie.HEADLINE_TESTS == ("put_block", "rewrite", "get_block", "seeks", "seq_create", "ran_create")


def test_each_answer_question_is_drawn_on_the_chart_of_its_family():
    charts = {spec.key: spec for spec in engine.CHARTS}
    for question in answer.QUESTIONS:
        assert charts[question.chart].family == question.family, question.key
        assert set(question.tests) <= set(bonnie.family_tests(question.family)), question.key
