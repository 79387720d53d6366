"""app.compare.request: the one reading of /compare's and /api/compare's query."""

import pytest

from app.compare import engine
from app.compare.grouping import DEFAULT, UNGROUPED
from app.compare.request import (
    ComparisonRequest,
    baseline_of,
    of_runs,
    parse_group,
    parse_id_filter,
    parse_run_ids,
    permalink,
    read_page_request,
    read_request,
    settle,
)
from app.errors import BadRequest


def test_parse_run_ids():
    assert parse_run_ids(["3,1,2"]) == [3, 1, 2]
    assert parse_run_ids(["3", "1", "3", "2,1"]) == [3, 1, 2]
    assert parse_run_ids(["1, 2 ,,3"]) == [1, 2, 3]
    assert parse_run_ids([]) == []
    for bad in ("1;2", "-1", "x", "1.5", "٣", "99999999999"):
        with pytest.raises(BadRequest, match="run ids"):
            parse_run_ids([bad])
    with pytest.raises(BadRequest, match="at most 100"):
        parse_run_ids([",".join(str(i) for i in range(1, 102))])
    assert len(parse_run_ids([",".join(str(i) for i in range(1, 101)) + ",1,2"])) == 100  # repeats count once


def test_group_spellings():
    assert parse_group(None) == parse_group("") == parse_group("params") == DEFAULT
    assert parse_group("none").kind == UNGROUPED and parse_group("none").spelling == "none"
    fs_raid = parse_group(" fs , raid,fs ")
    assert fs_raid.keys == ("fs", "raid") and fs_raid.spelling == "fs,raid"
    for bad in ("a=b", ",", "x\x00"):
        with pytest.raises(BadRequest, match="group must be"):
            parse_group(bad)
    # a key with a space is refused where it is typed, naming it (a run's tag cannot hold one)
    with pytest.raises(BadRequest, match="a tag key has no spaces \\('my key'\\); separate keys with commas"):
        parse_group("fs,my key")


def test_id_filter_keeps_order_and_drops_ids_no_run_can_have():
    assert parse_id_filter(" 3,1, 3 ,,2") == (3, 1, 2)
    assert parse_id_filter("5,99999999999") == (5,)
    with pytest.raises(BadRequest, match="'x' is not an id"):
        parse_id_filter("1,x")


def test_one_baseline_rule_for_the_engine_and_the_request():
    """engine.compare() and settle() both ask baseline_of(): strict, no runs and a baseline not compared are 400s."""
    assert baseline_of([4, 5], "relative", None, strict=True) == 4
    assert baseline_of([4, 5], "absolute", None, strict=True) is None
    assert baseline_of([4, 5], "relative", 9, strict=False) == 4
    assert baseline_of([], "relative", 9, strict=False) is None
    with pytest.raises(BadRequest, match="no runs to compare"):
        baseline_of([], "absolute", 9, strict=True)
    with pytest.raises(BadRequest, match="no runs to compare"):
        engine.compare([], baseline=9)  # as the API has said it since before the rule had one place


def test_the_page_request_and_links_of_runs():
    read = read_page_request(
        runs=["3,1", "2"], add="4,x", remove="1", mode=None, baseline="", group="none", min_effect=""
    )
    assert read.asked == ComparisonRequest((3, 2), grouping=parse_group("none")) and "'x' is not an id" in read.notice
    assert permalink(of_runs([7, 8], ["fs", "raid"])) == "/compare?runs=7,8&group=fs,raid"
    assert permalink(of_runs([7])) == "/compare?runs=7"


def test_read_settle_and_permalink():
    asked = read_request(runs=["3,1", "2"], mode="relative", baseline="", group="fs,raid")
    assert asked == ComparisonRequest((3, 1, 2), "relative", None, parse_group("fs,raid"))
    settled = settle(asked, [3, 2], strict=True)
    assert settled.baseline == 3 and settled.run_ids == (3, 2)
    assert permalink(settled) == "/compare?runs=3,2&baseline=3&mode=relative&group=fs,raid"
    assert (
        permalink(settle(read_request(runs=["5"], mode=None, baseline=None, group="params"), [5], strict=True))
        == "/compare?runs=5"
    )
    wrong = read_request(runs=["1,2"], mode=None, baseline="9", group=None)
    assert settle(wrong, [1, 2], strict=False).baseline is None
    with pytest.raises(BadRequest, match="baseline 9 is not one of the runs"):
        settle(wrong, [1, 2], strict=True)
    for kwargs, words in (({"mode": "sideways"}, "mode must be"), ({"baseline": "x1"}, "baseline must be a run id")):
        with pytest.raises(BadRequest, match=words):
            read_request(**{"runs": ["1"], "mode": None, "baseline": None, "group": None} | kwargs)
