"""Text reports -> CSV lines: against bonnie++'s own CSV line for real reports, the seeds' quoted reports, and
every way a pasted report can be unreadable (the error names the line)."""

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.ingest.parsing import (
    COLUMNS_103,
    COLUMNS_198,
    LineError,
    ParsedRun,
    control_or_separator,
    parse_line,
)
from app.ingest.report_text import _FILE_COLUMNS, MAX_REPORT_ROWS, convert_report, csv_format_of, looks_like_report

REPORTS = Path(__file__).resolve().parents[1] / "data" / "reports"
REAL = sorted(REPORTS.glob("real-*.txt"))
# Formats 1.93c-1.97 lack 1.98's seek_count and seek_proc_count (docs/bonnie-csv-format.md §3.1).
COLUMNS_197 = tuple(name for name in COLUMNS_198 if name not in ("seek_count", "seek_proc_count"))
COLUMNS = {"1.03": COLUMNS_103, "1.93c": COLUMNS_197, "1.96": COLUMNS_197, "1.97": COLUMNS_197, "1.98": COLUMNS_198}


def split_real(path: Path) -> tuple[str, str]:
    """bonnie++'s stdout: the text report, then the CSV line it printed with it."""
    *report, csv = path.read_text().rstrip("\n").split("\n")
    return "\n".join(report) + "\n", csv


def assert_same_as_bonnie(run, csv: str) -> None:
    """Column by column, what the report carries must equal bonnie++'s CSV; what it rounds must contain it."""
    assert isinstance(parse_line(run.csv_line, 1), ParsedRun), parse_line(run.csv_line, 1)
    ours, theirs = run.csv_line.split(","), csv.split(",")
    columns = COLUMNS[run.format_version]
    assert len(ours) == len(theirs) == len(columns)
    for column, mine, real in zip(columns, ours, theirs, strict=True):
        if column in run.missing or column.removesuffix("_cpu") in run.not_the_rate:
            assert mine == "", column
        elif column in run.assumed:
            assert mine in ("1", "5"), column
        elif column in run.bounds:
            low, high = run.bounds[column]
            assert math.floor(low) <= float(real) <= high, (column, real, run.bounds[column])
            assert low <= float(mine) <= high, (column, mine)
        elif column == "name" and run.name_may_be_cut:
            assert real.startswith(mine) and mine, (mine, real)
        else:
            assert mine == real, (column, mine, real)


@pytest.mark.parametrize("path", REAL, ids=lambda path: path.stem)
def test_real_reports_give_bonnies_own_csv_line(path):
    report, csv = split_real(path)
    converted = convert_report(report)
    assert converted.errors == []
    [run] = converted.runs
    assert_same_as_bonnie(run, csv)
    assert run.missing[0] == "seed"  # no 1.9x report shows the seed


def test_real_reports_cover_the_lossy_cases():
    """The files above include each kind of loss, so the comparison above is tested on each."""
    runs = {path.stem: convert_report(split_real(path)[0]).runs[0] for path in REAL}
    assert runs["real-gigabyte"].bounds.keys() == {"put_block", "rewrite"}  # 1.6g, 1.7g
    # 2.00a prints num_files*1024 where a measured file-test rate belongs (§3.3-5): those are left empty.
    report, csv = split_real(REPORTS / "real-measured-files-ext4.txt")
    assert re.search(r"^\s+48 +49152 ", report, re.MULTILINE)
    measured = runs["real-measured-files-ext4"]
    assert measured.not_the_rate == ("seq_create", "seq_del", "ran_create", "ran_del")
    # Shown, if wrongly: never called missing, neither the rate nor its %CPU (81 above, as in the CSV line).
    assert measured.missing == ("seed",)
    assert not [note for note in measured.notes if "seq_create" in note and "not in the text report" in note]
    assert runs["real-measured-files-ext4"].csv_line.split(",")[26:28] == ["", ""]
    assert csv.split(",")[26] not in ("", "49152")
    assert runs["real-long-name"].name_may_be_cut
    assert runs["real-chunk-seeks-procs"].assumed == ("seek_proc_count",)  # -s 256M:4k:2000:3 shows no 3
    assert runs["real-no-io-tests"].assumed == ("concurrency",)
    assert runs["real-concurrency"].csv_line.split(",")[3] == "4"


def test_the_runners_report_keeps_its_file_test_rates():
    report, csv = split_real(REPORTS / "runner-0.1.0.txt")
    [run] = convert_report(report).runs
    assert_same_as_bonnie(run, csv)
    assert run.bonnie_version == "bonnieboard-0.1.0"
    assert run.missing == ("seed",)
    assert run.csv_line.split(",")[26] == csv.split(",")[26] != "+++++"  # a measured seq_create


def test_several_reports_in_one_paste_each_give_a_line():
    texts = [split_real(REPORTS / f"real-{name}.txt") for name in ("default", "no-io-tests", "no-per-char")]
    paste = "".join(report + csv + "\n\nsome words in between\n" for report, csv in texts)
    converted = convert_report(paste)
    assert converted.errors == []
    assert [run.csv_line.split(",")[2] for run in converted.runs] == ["default", "no-io-tests", "no-per-char"]
    assert [run.line for run in converted.runs] == [4, 17, 25]
    for run, (_, csv) in zip(converted.runs, texts, strict=True):
        assert_same_as_bonnie(run, csv)


# ---- the reports quoted in the seeds ----


@pytest.mark.parametrize("name", ["seed-1.03d-nfs-client", "seed-1.94-jr4s"])
def test_seed_reports_quoted_with_their_csv_line(name):
    """Both write-ups quote the CSV line under the report (indented, with tabs, in the 1.03d one)."""
    text = (REPORTS / f"{name}.txt").read_text()
    csv = next(line.strip() for line in text.splitlines() if line.count(",") > 20)
    [run] = convert_report(text).runs
    assert_same_as_bonnie(run, csv)


def test_seed_1_03d_seeks_lose_their_decimal():
    [run] = convert_report((REPORTS / "seed-1.03d-nfs-client.txt").read_text()).runs
    assert run.line == 17
    assert run.bounds == {"seeks": (2635.5, 2636.5)}  # the report says 2636, the CSV 2635.7
    assert run.missing == () and not run.name_may_be_cut


def test_seed_1_94_with_spacing_lost():
    """A report pasted through a web page loses its runs of spaces: -f's empty cells are still placed."""
    text = (REPORTS / "seed-1.94-jr4s.txt").read_text()
    csv = text.splitlines()[-1]
    [run] = convert_report(re.sub(" +", " ", text)).runs
    assert_same_as_bonnie(run, csv)


@pytest.mark.parametrize(
    ("name", "line", "csv"),
    [
        (
            "seed-1.03e-fedora-kvm",
            6,
            "9d219ce8-cf52-40,2G,52384,23,47334,3,31938,3,74866,67,1009669,61,+++++,+++" + "," * 13,
        ),
        (
            "seed-1.03e-smartos",
            6,
            "smartos1.local,2G,162464,99,72027,86,65222,99,251249,99,2426619,99,+++++,+++" + "," * 13,
        ),
        (
            "seed-1.03e-setbuffer",
            4,
            "9d219ce8-cf52-40,2G,61952,38,65644,5,64024,8,72127,64,984495,70,+++++,+++" + "," * 13,
        ),
    ],
)
def test_seed_1_03e_reports_quoted_without_their_file_tests(name, line, csv):
    """The write-up cut the reports after the I/O row ("[...]"); the values are read by hand from the quote."""
    [run] = convert_report((REPORTS / f"{name}.txt").read_text()).runs
    assert (run.line, run.csv_line) == (line, csv)
    assert run.name_may_be_cut == name.endswith(("kvm", "setbuffer"))  # a 16-character name beside "2G"


def test_the_original_bonnie_is_not_bonnie_plus_plus():
    converted = convert_report((REPORTS / "seed-original-bonnie.txt").read_text())
    assert converted.runs == []
    [error] = converted.errors
    assert error.line == 3 and "column heading" in error.error


def test_a_report_template_with_no_version_is_refused():
    converted = convert_report((REPORTS / "seed-readme-template.txt").read_text())
    [error] = converted.errors
    assert error.line == 2 and "'Version @version@'" in error.error


# ---- errors name the line ----

DEFAULT = split_real(REPORTS / "real-default.txt")[0]


def broken(old: str, new: str, text: str = DEFAULT) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        (broken("564k", "564x"), 4, "putc", "'564x', not a rate like 1193k"),
        (broken(" 564k  42", " 564k  4x"), 4, "putc_cpu", "'4x', not a whole number"),
        (broken("+++++ +++", "+++++  12"), 4, "put_block", "+++++ goes with +++"),
        (broken(" 256M ", " 256Q "), 4, "file_size", "'256Q' is not a file size"),
        (broken("default        256M", "default"), 4, None, "not a row of results"),
        (broken("79330us", "79330xs"), 5, "putc_latency", "'79330xs' is not like 870us"),
        (broken("  709k  40", ""), 4, None, "10 figures after the size"),
        (broken("Name:Size etc", "Name etc"), 3, None, "column heading"),
        (broken("              files", "              fils"), 8, None, "column heading"),
        (broken("                  4 ", "                  4x "), 9, "num_files", "'4x' is not a file-test spec"),
        ("just words\nand a CSV line 1.98,2.00a,x\n", 1, None, "no bonnie++ report here"),
        (
            DEFAULT.split("\n", 4)[0] + "\n" + DEFAULT.split("\n", 4)[1] + "\n" + DEFAULT.split("\n", 4)[2],
            3,
            None,
            "ends before its first row",
        ),
        (broken("Version 2.00a", "Version 1.92b"), 1, None, "'Version 1.92b'"),
    ],
)
def test_unreadable_rows_are_named(text, line, field, words):
    converted = convert_report(text)
    assert converted.runs == []  # nothing half-converted
    [error] = converted.errors
    assert (error.line, error.field) == (line, field), error
    assert words in error.error


def test_looks_like_report():
    assert looks_like_report(DEFAULT)
    assert looks_like_report((REPORTS / "seed-1.03d-nfs-client.txt").read_text())
    assert not looks_like_report(split_real(REPORTS / "real-default.txt")[1])
    assert not looks_like_report("name,file_size,putc\n")


@pytest.mark.parametrize(
    ("version", "fmt"),
    [
        ("1.03e", "1.03"),
        ("1.02b", "1.03"),
        ("1.94", "1.93c"),
        ("1.96", "1.96"),
        ("1.97", "1.97"),
        ("2.00a", "1.98"),
        ("bonnieboard-0.1.0", "1.98"),
        ("1.92b", None),
        ("@version@", None),
    ],
)
def test_csv_format_of(version, fmt):
    assert csv_format_of(version) == fmt


# ---- anything pasted gives runs or errors, never an exception ----

PASTES = [split_real(path)[0] for path in REAL[:4]] + [(REPORTS / "seed-1.94-jr4s.txt").read_text()]


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PASTES), st.integers(0, 2000), st.integers(0, 40), st.text(max_size=12))
def test_a_damaged_report_gives_runs_or_an_error(paste, at, length, insert):
    """Cut and splice a real report anywhere: the answer is runs whose lines parse, or one error naming a line."""
    at %= len(paste) + 1
    text = paste[:at] + insert + paste[at + length :]
    converted = convert_report(text)
    assert bool(converted.runs) != bool(converted.errors)
    for run in converted.runs:
        assert isinstance(parse_line(run.csv_line, 1), ParsedRun), (text, run.csv_line)
    for error in converted.errors:
        assert 1 <= error.line <= text.count("\n") + 1


FILE_TITLE = "Version 1.98 ------Sequential Create------ --------Random Create--------"


@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param("x" + " " * 200_000 + "y", id="spaces-before-the-end"),  # the lazy name regex was quadratic
        pytest.param("x " * 100_000 + "-Create--", id="words-and-spaces"),
        pytest.param("\t" * 200_000, id="tabs"),  # expanded eightfold before
    ],
)
def test_a_hostile_long_line_in_a_report_is_named_not_searched(hostile):
    converted = convert_report(f"{FILE_TITLE}\n{hostile}\n")
    assert converted.runs == []
    [error] = converted.errors
    assert error.line == 2 and f"line is {len(hostile.encode())} bytes long; the limit is 4096" in error.error


def test_a_long_line_outside_a_report_is_prose():
    """Around a pasted report, a long paragraph is skipped (never matched against a title), as before."""
    text = "word " * 10_000 + "\n" + DEFAULT + "\n" + "word " * 10_000 + "\n"
    assert looks_like_report(text) and not looks_like_report("word " * 10_000)
    converted = convert_report(text)
    assert converted.errors == [] and len(converted.runs) == 1


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("lab1-tmpfs       -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--", "lab1-tmpfs"),
        ("a b  c     -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--", "a b  c"),
        ("                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--", None),
    ],
)
def test_a_file_header_names_its_machine(header, name):
    """The file block's column header: the machine name before it, as the lazy pattern read it."""
    match = _FILE_COLUMNS.fullmatch(header.strip())
    assert match is not None and match["name"] == name


def test_a_hostile_report_upload_is_a_422_naming_the_line(client):
    body = f"{FILE_TITLE}\nx{' ' * 200_000}y\n"
    response = client.post("/api/runs", content=body, headers={"Content-Type": "text/plain"})
    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert error["line"] == 2 and "200002 bytes long" in error["error"]


# ---- bon_csv2txt's tables (docs/bonnie-csv-format.md §8.1) ----

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
# Every real format-1.98 line at hand: bonnie++ 2.00a's (the reports' own lines and the corpus) and the runner's.
REAL_198 = {path.stem: split_real(path)[1] for path in [*REAL, REPORTS / "runner-0.1.0.txt"] if split_real(path)[1]} | {
    f"{path.stem}-{number}": line
    for path in sorted(CORPUS.glob("*.csv"))
    for number, line in enumerate(path.read_text().splitlines(), 1)
    if line.startswith("1.98,")
}


def csv2txt(*lines: str) -> str:
    """What bonnie++'s own bon_csv2txt prints for these CSV lines."""
    tool = shutil.which("bon_csv2txt")
    if tool is None:
        pytest.fail("bon_csv2txt is missing: run `apt-get install -y bonnie++`")
    done = subprocess.run([tool], input="".join(f"{line}\n" for line in lines), capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def spec_reads_two_ways(line: str) -> bool:
    """bon_csv2txt writes the file-test spec's non-empty columns after ':'s: with the smallest size empty (and the
    largest not a link), 'N:4096' is the largest size or the directories, 'N:4096:4' max and min or max and dirs."""
    num, largest, smallest = line.split(",")[-29:-26]
    return bool(num) and largest not in ("", "link", "symlink") and smallest == ""


@pytest.mark.parametrize("name", sorted(REAL_198))
def test_bon_csv2txt_of_a_real_line_gives_the_line_back(name):
    """bon_csv2txt's table is read as what it is: size::seeks:procs (not bonnie++'s size::concurrency:seeks),
    '0k +++' for +++++, the real file-test rates, the name cut beside the size and on the file-test row."""
    line = REAL_198[name]
    table = csv2txt(line)
    converted = convert_report(table)
    if spec_reads_two_ways(line):
        [error] = converted.errors
        file_row = next(n for n, text in enumerate(table.splitlines(), 1) if re.match(r"\S.* \d+:\d+ ", text))
        assert (error.line, error.field) == (file_row, "num_files") and "reads as either" in error.error
        return
    assert converted.errors == []
    [run] = converted.runs
    assert run.layout == "bon_csv2txt" and run.format_version == "1.98"
    assert_same_as_bonnie(run, line)
    # The title's version is bon_csv2txt's own; bon_csv2txt never shows the seed or the concurrency.
    assert run.missing[:2] == ("bonnie_version", "seed") and run.assumed == ("concurrency",)
    assert run.not_the_rate == (), "bon_csv2txt's file rates are real"


def test_bon_csv2txt_seeks_are_not_a_concurrency():
    """`512M::8192:5` is the size, the chunk (never written by 1.98), 8192 seeks and 5 seekers; and 49,152 files/s
    there is a measured rate, not 2.00a's garbage."""
    line = REAL_198["bonnie200-sample-4"]
    table = csv2txt(line)
    assert "512M::8192:5" in table
    [run] = convert_report(table).runs
    fields = run.csv_line.split(",")
    assert (fields[3], fields[5:9]) == ("1", ["512M", "", "8192", "5"])
    assert fields[21:26] == ["16", "4096", "1024", "", "4"]  # '16:4096:1024:4': the directories after a ':'
    assert fields[26:28] == ["3213", "94"]


def test_bon_csv2txt_pairs_its_two_tables_by_order_and_says_so():
    lines = [REAL_198["bonnie200-sample-1"], REAL_198["bonnie200-sample-2"], REAL_198["real-lab1-run2"]]
    runs = convert_report(csv2txt(*lines)).runs
    assert len(runs) == 3
    for run, line in zip(runs, lines, strict=True):
        assert_same_as_bonnie(run, line)
        assert run.paired_by_order and any("paired by their order" in note for note in run.notes)


def test_bon_csv2txt_tables_of_different_lengths_are_refused():
    """bonnie200-sample.csv mixes -n 0 and -s 0 lines: 6 I/O rows, 7 file-test rows; which belong together is lost."""
    table = csv2txt(*(CORPUS / "bonnie200-sample.csv").read_text().splitlines())
    converted = convert_report(table)
    [error] = converted.errors
    file_title = next(n for n, text in enumerate(table.splitlines(), 1) if "Sequential Create" in text)
    assert (error.line, error.field) == (file_title, None) and "6 I/O rows and 7 file-test rows" in error.error
    assert converted.runs == []


def test_bon_csv2txt_with_its_spacing_lost_is_read_by_its_rows():
    """A web page collapses the spaces: the title no longer tells, but '0k +++' and 8192 beside the size do."""
    line = REAL_198["real-default"]
    [run] = convert_report(re.sub(" +", " ", csv2txt(line))).runs
    assert run.layout == "bon_csv2txt"
    assert_same_as_bonnie(run, line)


def test_a_size_that_reads_two_ways_is_refused_when_nothing_tells():
    """The table of a line run with -s 63G:0:100:3 -n 0 (100 seeks, 3 seekers; by the rules of bonnie++'s report,
    -c 100 and 3 seeks), its spacing lost and no +++++ among its rates: which table it is cannot be told."""
    fields = REAL_198["public-sample-29"].split(",")  # ANDREW-PC: every block rate measured
    fields[7:9] = ["100", "3"]
    with_files = ",".join(fields)
    fields[21:38], fields[44:50] = [""] * 17, [""] * 6
    table = csv2txt(",".join(fields))
    assert "63G::100:3" in table and "0k +++" not in table and "Sequential Create" not in table
    [error] = convert_report(re.sub(" +", " ", table)).errors
    assert (error.line, error.field) == (4, "file_size") and "nothing else here tells which" in error.error
    # With its spacing, the title is bon_csv2txt's; with the file tests, so are its named file-test rows.
    for text in (table, re.sub(" +", " ", csv2txt(with_files))):
        [run] = convert_report(text).runs
        assert run.csv_line.split(",")[3:9] == ["1", "", "63G", "", "100", "3"]


def test_a_table_mixing_both_layouts_is_refused():
    table = csv2txt(REAL_198["real-default"], REAL_198["real-lab1-run1"])
    lines = table.splitlines()
    assert lines[5].split()[4:6] == ["0k", "+++"]  # the second row's put_block: +++++ in bon_csv2txt's words
    lines[5] = lines[5].replace("   0k +++", "+++++ +++", 1)
    [error] = convert_report("\n".join(lines)).errors
    assert (error.line, error.field) == (6, "put_block") and "mix bonnie++'s report and bon_csv2txt's" in error.error


# ---- the name, the size and the version, whatever the spacing ----


def test_a_size_left_of_column_19_stays_out_of_the_name():
    """Re-spaced by hand, the size ends before column 19: its digits are not read into the machine name."""
    row = next(line for line in DEFAULT.splitlines() if line.startswith("default "))
    moved = "default 256M" + " " * 7 + row[19:]  # the figures where they were
    assert len(moved) == len(row) and moved[19] == " "
    [run] = convert_report(DEFAULT.replace(row, moved)).runs
    assert run.csv_line == convert_report(DEFAULT).runs[0].csv_line


RESPACEABLE = [split_real(path) for path in REAL if "Sequential Output" in split_real(path)[0]]


@settings(max_examples=200)
@given(st.sampled_from(RESPACEABLE), st.lists(st.integers(1, 30), min_size=14, max_size=14), st.integers(0, 1))
def test_an_io_row_spaced_anyhow_gives_the_same_line(report_and_csv, gaps, before):
    """Any spacing of the I/O row after its name (a web page's, an editor's) gives bonnie++'s own CSV line back."""
    report, csv = report_and_csv
    lines = report.split("\n")
    at = next(index for index, line in enumerate(lines) if re.match(r".*\d[MG](?::\S*)? ", line))
    row = lines[at]
    size = re.search(r" (\d+[MG]\S*) ", row)
    assert size is not None
    name, rest = row[: size.start()].rstrip(), row[size.start() :].split()
    lines[at] = " " * before + name + "".join(" " * gap + token for gap, token in zip(gaps, rest, strict=False))
    [run] = convert_report("\n".join(lines)).runs
    assert_same_as_bonnie(run, csv)


@pytest.mark.parametrize("version", ["bonnieboard-0.1,x", "2.00a,x", "0.1.0,x"])
def test_a_version_that_would_split_the_csv_line_is_refused(version):
    """The runner's report titles itself with its version: a comma there moved every field of the line, the
    name among them, and the line was stored so."""
    report = split_real(REPORTS / "runner-0.1.0.txt")[0]
    converted = convert_report(report.replace("Version 0.1.0", f"Version {version}"))
    assert converted.runs == []
    [error] = converted.errors
    assert (error.line, error.field) == (1, "bonnie_version") and "holds a comma" in error.error


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029", "\x7f", "\x1c", "\x01"])
def test_a_control_or_line_separator_in_a_name_is_refused_on_both_paths(char):
    """One rule (parsing.control_or_separator) for a report's machine name and a CSV line's."""
    name = f"lab{char}1"
    converted = convert_report(DEFAULT.replace("default", name))
    [error] = converted.errors
    assert (error.line, error.field) == (4, "name") and f"U+{ord(char):04X}" in error.error
    parsed = parse_line(split_real(REPORTS / "real-default.txt")[1].replace("default", name), 1)
    assert isinstance(parsed, LineError) and parsed.field == "name" and f"U+{ord(char):04X}" in parsed.error
    assert control_or_separator(name) == char


def test_a_report_of_more_rows_than_the_limit_is_refused_at_the_first_row_past_it():
    head, row = "".join(DEFAULT.splitlines(True)[:3]), DEFAULT.splitlines(True)[3]
    assert len(convert_report(head + row * MAX_REPORT_ROWS).runs) == MAX_REPORT_ROWS
    converted = convert_report(head + row * (MAX_REPORT_ROWS + 1))
    [error] = converted.errors
    assert error.line == 3 + MAX_REPORT_ROWS + 1 and f"more than {MAX_REPORT_ROWS} rows" in error.error
    assert converted.runs == []
