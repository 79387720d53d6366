"""Shared by the comparison tests: a known sweep of two configurations, and the page's embedded JSON."""

import json
import re

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


def embedded_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="compare-data">(.*?)</script>', html, re.DOTALL)
    assert match, "the page has no embedded compare data"
    return json.loads(match.group(1))
