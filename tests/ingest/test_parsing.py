"""The parser against real lines (hand-written expectations) and against every malformed shape."""

import pytest

from app.ingest import _plain_lines
from app.ingest.parsing import (
    TESTS,
    LineError,
    ParsedRun,
    control_or_separator,
    iter_parse,
    iter_parse_bytes,
    parse_line,
)
from tests.corpus_expected import EXPECTED
from tests.helpers import CORPUS_DIR, LINE_103, LINE_197, LINE_198, with_field
from tests.parsing_oracle import parse_bytes, parse_text


def shape(run):
    """A ParsedRun in the shape of tests/corpus_expected.py."""
    file_test = run.file_test
    return {
        "machine": run.machine,
        "format_version": run.format_version,
        "bonnie_version": run.bonnie_version,
        "concurrency": run.concurrency,
        "seed": run.seed,
        "file_size_mib": run.file_size_mib,
        "io_chunk_bytes": run.io_chunk_bytes,
        "seek_count": run.seek_count,
        "seek_procs": run.seek_procs,
        "file_test": None
        if file_test is None
        else {
            "num_files": file_test.num_files,
            "max_size": file_test.max_size,
            "min_size": file_test.min_size,
            "num_dirs": file_test.num_dirs,
            "link": file_test.link,
        },
        "results": {
            test: (r.status, r.value, r.cpu_pct, r.latency_us) for test, r in zip(TESTS, run.results, strict=True)
        },
    }


def test_every_corpus_line_has_an_expectation():
    lines = {
        (path.name, number)
        for path in CORPUS_DIR.glob("*.csv")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.strip()
    }
    assert lines == set(EXPECTED)


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda key: f"{key[0]}:{key[1]}")
def test_corpus_line_parses_to_the_spec_values(key):
    name, line_no = key
    lines = (CORPUS_DIR / name).read_text().split("\n")
    run = parse_line(lines[line_no - 1], line_no)
    assert shape(run) == EXPECTED[key]
    assert run.raw_line == lines[line_no - 1]
    for value in (r.value for r in run.results):
        assert value is None or type(value) in (int, float)
    assert type(run.results[TESTS.index("seeks")].value) in (float, type(None))


def test_whole_corpus_files_parse_without_errors():
    for path in CORPUS_DIR.glob("*.csv"):
        result = parse_bytes(path.read_bytes())
        assert result.errors == []
        assert len(result.runs) == len([line for line in path.read_text().splitlines() if line.strip()])


# ---- 1.03 forms (§2) ----


@pytest.mark.parametrize(
    ("size", "mib", "chunk"),
    [
        ("2G", 2048, None),
        ("300M", 300, None),
        ("2G:4k", 2048, 4096),
        ("2G:1024k", 2048, 1048576),
        ("300M:512", 300, 512),
    ],
)
def test_103_size_forms(size, mib, chunk):
    run = parse_line(with_field(LINE_103, 1, size), 1)
    assert (run.file_size_mib, run.io_chunk_bytes) == (mib, chunk)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("16", (16, None, None, None, None)),
        ("16:100000:16", (16, 100000, 16, None, None)),
        ("16:100000:0", (16, 100000, 0, None, None)),
        ("4:link", (4, None, None, None, "link")),
        ("4:symlink", (4, None, None, None, "symlink")),
        ("64/8", (64, None, None, 8, None)),
        ("10:100000:10/10", (10, 100000, 10, 10, None)),
    ],
)
def test_103_file_test_forms(spec, expected):
    ft = parse_line(with_field(LINE_103, 14, spec), 1).file_test
    assert (ft.num_files, ft.max_size, ft.min_size, ft.num_dirs, ft.link) == expected


def test_103_no_io_and_no_file_tests():
    no_io = parse_line("box" + "," * 13 + ",16,94,40,+++++,+++,15510,66,204,86,+++++,+++,906,83", 1)
    assert no_io.file_size_mib is None
    assert all(r.status == "not_run" for r in no_io.results[:6])
    no_files = parse_line(",".join(LINE_103.split(",")[:14]) + "," * 13, 1)
    assert no_files.file_test is None
    assert all(r.status == "not_run" for r in no_files.results[6:])


def test_103_machine_that_looks_like_a_version():
    run = parse_line(with_field(LINE_103, 0, "1.96"), 1)
    assert (run.format_version, run.machine) == ("1.03", "1.96")


# ---- names (§1.4) ----


@pytest.mark.parametrize("name", ["node1,rack2", "a,b,c", ",", "my host.example.org", ""])
def test_machine_names_with_commas_spaces_dots_or_nothing(name):
    for line, index in ((LINE_198, 2), (LINE_197, 2), (LINE_103, 0)):
        run = parse_line(with_field(line, index, name), 7)
        assert run.machine == name, line
        assert run.results[TESTS.index("put_block")].status in ("ok", "too_fast")


def test_198_comma_name_keeps_every_value():
    run = parse_line(with_field(LINE_198, 2, "node1,rack2"), 1)
    assert run.seek_count == 8192 and run.seek_procs == 5
    assert run.results[0].value == 869 and run.results[-1].latency_us == 6909


def test_47_field_line_with_a_comma_in_the_name():
    line = "1.96,1.96,fs,lab3,1,1374655110,,,,,,,,,,,,,,60,32,32,,,1702,14,2025,12,1332,4,1873,16,2047,13,1266,3,,,,,,,3874ms,6645ms,8659ms,505ms,7257ms,9627ms"
    run = parse_line(line, 1)
    assert run.machine == "fs,lab3"
    assert run.file_test.num_files == 60 and run.file_test.max_size == 32
    assert run.results[6].value == 1702


SHORT_196 = "1.96,1.96,NAME,1,1374655110,,,,,,,,,,,,,,60,32,32,,,1702,14,2025,12,1332,4,1873,16,2047,13,1266,3,,,,,,,3874ms,6645ms,8659ms,505ms,7257ms,9627ms"
FULL_196 = SHORT_196.replace(",,,,,,,,,,,,,,60,", ",,,,,,,,,,,,,,,60,")


@pytest.mark.parametrize("name", ["fslab3", "fs,lab3", "a,b,c", ""])
def test_196_no_io_lines_of_47_and_48_fields_keep_name_concurrency_and_seed(name):
    """§3.3-3, §7.4: the 47-field layout has 13 empty fields after the (never empty) seed, the 48-field one 14."""
    for line in (SHORT_196.replace("NAME", name), FULL_196.replace("NAME", name)):
        run = parse_line(line, 1)
        assert (run.machine, run.concurrency, run.seed) == (name, 1, "1374655110"), line
        assert run.file_size_mib is None and run.file_test.num_files == 60 and run.results[6].value == 1702


# ---- encodings (§1.1-§1.3) ----


@pytest.mark.parametrize(("cell", "expected_us"), [("117us", 117), ("228ms", 228000), ("105s", 105000000), ("0us", 0)])
def test_latency_units(cell, expected_us):
    run = parse_line(with_field(LINE_198, 38, cell), 1)
    assert run.results[0].latency_us == expected_us


def test_cpu_above_100_and_decimal_seeks():
    run = parse_line(with_field(with_field(LINE_198, 19, "13116"), 20, "160"), 1)
    seeks = run.results[TESTS.index("seeks")]
    assert (seeks.status, seeks.value, seeks.cpu_pct) == ("ok", 13116.0, 160)
    assert parse_line(LINE_103, 1).results[5].value == 56.7


def test_too_fast_keeps_its_latency():
    rewrite = parse_line(LINE_198, 1).results[TESTS.index("rewrite")]
    assert rewrite == type(rewrite)("too_fast", None, None, 1098)


def test_io_chunk_of_9x_formats():
    assert parse_line(with_field(LINE_197, 6, "4k"), 1).io_chunk_bytes == 4096
    assert parse_line(with_field(LINE_197, 6, "1m"), 1).io_chunk_bytes == 1048576
    assert parse_line(with_field(LINE_197, 6, "512"), 1).io_chunk_bytes == 512


def test_9x_file_test_columns_and_links():
    run = parse_line(LINE_198.replace(",16,,,,,", ",16,4096,1024,,4,"), 1)
    assert (run.file_test.max_size, run.file_test.min_size, run.file_test.num_dirs) == (4096, 1024, 4)
    run = parse_line(LINE_198.replace(",16,,,,,", ",4,link,,,,"), 1)
    assert (run.file_test.num_files, run.file_test.link, run.file_test.max_size) == (4, "link", None)


# ---- skipped lines and line numbers ----


def test_headers_comments_blank_lines_crlf_and_bom_are_skipped_and_counted():
    text = (
        "\ufeffformat_version,bonnie_version,name,concurrency,seed,file_size\r\n"
        "# a comment\r\n"
        "\r\n"
        f"{LINE_198}\r\n"
        "name,file_size,putc,putc_cpu\r\n"
        "   \r\n"
        f"{LINE_103}\r\n"
    )
    result = parse_text(text)
    assert result.errors == []
    assert [(r.line_no, r.raw_line) for r in result.runs] == [(4, LINE_198), (7, LINE_103)]


def test_bom_before_a_data_line_is_not_part_of_it():
    (run,) = parse_bytes(b"\xef\xbb\xbf" + LINE_198.encode()).runs
    assert run.raw_line == LINE_198 and run.format_version == "1.98"


@pytest.mark.parametrize("where", ["line start", "name", "name end", "seed"])
def test_bom_anywhere_but_the_start_of_the_input_is_an_error_naming_the_line(where):
    line = {
        "line start": "\ufeff" + LINE_198,
        "name": LINE_198.replace(",vm,", ",v\ufeffm,"),
        "name end": LINE_198.replace(",vm,", ",vm\ufeff,"),
        "seed": LINE_198.replace(",1795352513,", ",\ufeff1795352513,"),
    }[where]
    text = f"{LINE_103}\n{line}\n"
    for items in (
        list(iter_parse(text)),
        list(iter_parse_bytes(text.encode())),
        list(iter_parse_bytes(b"\xef\xbb\xbf" + text.encode())),
    ):
        assert len(items) == 2 and not isinstance(items[0], LineError)
        assert isinstance(items[1], LineError) and items[1].line == 2 and "byte order mark" in items[1].error
    assert not _plain_lines.line_is_plain(line.encode())  # the compiled SQLite path leaves it to the parser


def test_only_one_bom_is_skipped():
    result = parse_text("\ufeff\ufeff" + LINE_198)
    assert result.runs == [] and result.errors[0].line == 1


def test_plain_line_check_takes_only_ascii_digits():
    assert _plain_lines.line_is_plain(LINE_198.encode())  # app/ingest/_plain_lines.c's check
    arabic = LINE_198.replace(",1,1795352513,512M,", ",\u0663,1795352513,\u0665\u0661\u0662M,").replace(
        "869", "\u0668\u0666\u0669"
    )
    assert not _plain_lines.line_is_plain(arabic.encode())
    (item,) = iter_parse(arabic)
    assert isinstance(item, LineError) and item.field == "concurrency"


@pytest.mark.parametrize(
    ("index", "cell", "field"),
    [
        (5, "\u0665\u0661\u0662M", "file_size"),
        (19, "\u0662\u0666\u0662.3", "seeks"),
        (38, "\u0661\u0661us", "putc_latency"),
    ],
)
def test_non_ascii_digits_are_not_numbers(index, cell, field):
    item = parse_line(with_field(LINE_198, index, cell), 1)
    assert isinstance(item, LineError) and item.field == field, item


def test_a_format_version_with_non_ascii_digits_is_not_one():
    # "١.98" is no version: the line is read as 1.03 (§7.3) and refused there.
    assert isinstance(parse_line(with_field(LINE_198, 0, "\u0661.98"), 1), LineError)


def test_103_non_ascii_digits_in_sizes_are_not_numbers():
    assert parse_line(with_field(LINE_103, 1, "\u0661G"), 1).field == "file_size"
    assert parse_line(with_field(LINE_103, 14, "\u0661\u0666"), 1).field == "num_files"


# ---- errors name the line and the field ----


def error_of(line, line_no=3):
    item = parse_line(line, line_no)
    assert item.__class__.__name__ == "LineError", item
    assert item.line == line_no
    return item.field, item.error


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        (",".join(LINE_198.split(",")[:40]), None, "too few fields"),
        ("just,some,text", None, "too few fields"),
        (with_field(LINE_198, 15, "fast"), "getc", "not a whole number"),
        (with_field(LINE_198, 16, "+++"), "getc", "not +++++"),
        (with_field(LINE_198, 13, "+++++").replace(",+++++,+++,1443", ",+++++,12,1443"), "rewrite_cpu", "not +++"),
        (with_field(LINE_198, 41, "12xs"), "getc_latency", "not a latency"),
        (with_field(LINE_198, 41, "1.5ms"), "getc_latency", "not a latency"),
        (with_field(LINE_198, 9, "-5"), "putc", "negative"),
        (with_field(LINE_198, 9, "9" * 16), "putc", "too large"),
        (with_field(LINE_198, 10, ""), "putc_cpu", "putc_cpu is empty but putc is '869'"),
        # §7.4: an extra field is read as a comma in the name ("vm,1"), so the seed lands in concurrency.
        (with_field(LINE_198, 19, "12,5"), "concurrency", "'1795352513': too large"),
        (with_field(LINE_198, 0, "1.92b"), "format_version", "unsupported CSV format '1.92b'"),
        (with_field(LINE_198, 0, "2.01"), "format_version", "unsupported CSV format '2.01'"),
        (with_field(LINE_198, 5, ""), "putc", "file_size is empty"),
        (with_field(LINE_198, 5, "512X"), "file_size", "not a size"),
        (with_field(LINE_198, 21, ""), "seq_create", "num_files is empty"),
        (with_field(LINE_198, 24, "3"), "num_dirs", "always leaves it empty"),
        (with_field(LINE_198, 3, "x"), "concurrency", "not a whole number"),
        (with_field(LINE_103, 1, "2T"), "file_size", "not a size"),
        (with_field(LINE_103, 14, "16:abc"), "num_files", "file-test spec"),
        (with_field(LINE_103, 12, "fast"), "seeks", "seeks per second"),
        (LINE_198 + ",", "concurrency", "'1795352513': too large"),  # §7.8: an error, not a guess
        (LINE_198.replace("vm", "v\x00m"), None, "NUL"),
    ],
)
def test_malformed_lines_name_line_and_field(line, field, words):
    got_field, message = error_of(line)
    assert got_field == field
    assert words in message


def test_trailing_comma_shifts_the_name_rather_than_being_guessed():
    run = parse_line(LINE_103 + ",", 1)
    assert run.__class__.__name__ == "LineError"


def test_results_present_for_tests_that_did_not_run_is_an_error():
    line = "1.98,2.00a,vm,1,1795358315,,,,,,,,,,,,,,,,,4,,,,,1090,98,+++++,+++,+++++,+++,1122,98,+++++,+++,+++++,+++,,,,,,,8127us,1405us,3849us,5611us,58us,787us"
    assert parse_line(line, 1).file_size_mib is None
    assert error_of(with_field(line, 38, "12us")) == (
        "putc_latency",
        "putc_latency has a value but file_size is empty, which says the test did not run",
    )
    assert error_of(with_field(with_field(line, 11, "5"), 12, "1"))[0] == "put_block"


def test_line_length_limit_and_non_utf8():
    long_line = with_field(LINE_198, 4, "7" * 5000)  # a seed is free text, as long as its line
    result = parse_bytes(f"{LINE_198}\n{long_line}\n".encode() + b"\xff\xfe,broken\n" + LINE_103.encode())
    assert [r.line_no for r in result.runs] == [1, 4]
    assert [(e.line, e.field) for e in result.errors] == [(2, None), (3, None)]
    assert "limit is 4096" in result.errors[0].error
    assert "not UTF-8" in result.errors[1].error and "0xff" in result.errors[1].error
    assert parse_text(long_line, max_line_bytes=10_000).runs[0].seed == "7" * 5000


def test_a_machine_name_is_at_most_500_characters_in_either_family():
    for line, field in ((LINE_198, 2), (LINE_103, 0)):
        assert parse_text(with_field(line, field, "\u20ac" * 500)).runs[0].machine == "\u20ac" * 500
        # with commas, the name is the fields joined (§1.4): their characters count, and the commas
        errors = parse_text(with_field(line, field, ",".join(["x" * 250] * 2))).errors
        assert [(e.field, e.error) for e in errors] == [
            ("name", "the machine name is 501 characters; the limit is 500")
        ]


@pytest.mark.parametrize("char", ["\x01", "\t", "\x1c", "\x7f", "\x85", "\x9f", "\u2028", "\u2029"])
def test_no_text_field_holds_a_control_or_line_separator_in_either_family(char):
    """control_or_separator(): the C0 and C1 controls, DEL and U+2028/U+2029, which str.splitlines (and so a page or
    a spreadsheet reading the export) takes for line ends; the compiled path leaves such a line to the parser."""
    assert control_or_separator(f"a{char}b") == char
    for line, index, field in ((LINE_198, 2, "name"), (LINE_198, 1, "bonnie_version"), (LINE_198, 4, "seed")):
        changed = with_field(line, index, f"a{char}b")
        assert not _plain_lines.line_is_plain(changed.encode())
        [error] = parse_text(changed).errors
        assert error.field == field and f"U+{ord(char):04X}" in error.error, error
    [error] = parse_text(with_field(LINE_103, 0, f"a{char}b")).errors
    assert error.field == "name"


@pytest.mark.parametrize("name", ["a\u00a0b", "caf\u00e9", "a\u200bb", "\u202eevil", "\u3000x", "x\u2027"])
def test_other_characters_are_names_as_before(name):
    """Spaces of other kinds, format characters and punctuation are text: only control and separator characters
    are refused."""
    assert control_or_separator(name) is None
    assert parse_text(with_field(LINE_198, 2, name)).runs[0].machine == name


@pytest.mark.parametrize("name", ["1.5,rack2", "1.96,x", "2.0,a,b"])
def test_103_name_that_looks_like_a_version_and_holds_commas(name):
    run = parse_line(with_field(LINE_103, 0, name), 1)
    assert (run.format_version, run.machine) == ("1.03", name)


def test_long_comment_and_header_lines_are_held_to_the_limit():
    result = parse_text("#" + "x" * 5000 + "\n" + "name,file_size," + "y" * 5000 + "\n" + LINE_103)
    assert [(e.line, e.field) for e in result.errors] == [(1, None), (2, None)]
    assert [r.line_no for r in result.runs] == [3]


def test_a_47_field_line_with_no_seed_is_the_short_no_io_layout():
    # What the text-report converter writes for a 1.94 `-s 0` report (the report never shows the seed):
    # exactly 47 fields, so no 48-field reading exists (§3.3-3, §8).
    line = (
        "1.93c,1.94,jr4s,1,,"
        + ",".join([""] * 13)
        + ",16,,,,,"
        + ",".join(["11262", "48"] * 6)
        + ",,,,,,,1us,2us,3us,4us,5us,6us"
    )
    assert len(line.split(",")) == 47
    run = parse_line(line, 1)
    assert isinstance(run, ParsedRun), run
    assert (run.machine, run.seed, run.file_size_mib, run.file_test.num_files) == ("jr4s", None, None, 16)
