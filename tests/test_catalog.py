"""app/bonnie.py is the one catalog of bonnie++'s tests (issue #20): it agrees with what bonnie++ writes,
and the parser reads it rather than keeping a list of its own."""

from pathlib import Path

from app import bonnie, parsing

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
    assert parsing.UNITS is bonnie.UNITS


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
