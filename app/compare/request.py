"""The one reading of a comparison's URL, shared by the /compare page and GET /api/compare.

Both accept the same query (docs: README "Compare configurations"):

- `runs=1,2,3` — run ids separated by commas (or spaces), and/or repeated `run=1&run=2` (what the runs
  list's checkboxes send); in the order given, each once, at most MAX_RUNS;
- `mode=absolute|relative` (default absolute);
- `baseline=ID` — one of the runs; its configuration is the one the others are compared with (in
  relative mode it defaults to the first run; verdicts always have a baseline configuration: that of
  this run, else the first configuration);
- `group=params|none|KEY,KEY` — how runs form configurations (app/compare/grouping.py; default params);
- `min_effect=1.1` — the smallest ratio (either way) a verdict calls better or worse (default the setting
  BONNIEBOARD_MIN_EFFECT, itself app.config.DEFAULT_MIN_EFFECT unless set). It changes the answer, so it is part of the request: of the
  cache key and, when it differs from the setting, of the permalink.

The API answers 400 for a baseline that is not among the runs found; the page leaves it out and
redirects to its permalink (`permalink()`), as it does for every other spelling of the same view.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from app.compare.grouping import BY_PARAMS, DEFAULT, MAX_GROUP_KEYS, UNGROUPED, Grouping
from app.config import MIN_EFFECT_RANGE, get_settings
from app.errors import BadRequest
from app.limits import MAX_ID

ABSOLUTE, RELATIVE = "absolute", "relative"
MODES = (ABSOLUTE, RELATIVE)
# A chart with hundreds of bars per test reads as noise, and the page must stay fast.
MAX_RUNS = 100
_MAX_ID_DIGITS = len(str(MAX_ID))


@dataclass(frozen=True, slots=True)
class ComparisonRequest:
    run_ids: tuple[int, ...]
    mode: str = ABSOLUTE
    baseline: int | None = None
    grouping: Grouping = DEFAULT
    min_effect: float | None = None  # None: the setting's (the request then reads the same under any spelling)


def parse_run_ids(values: Iterable[str], *, limit: int | None = MAX_RUNS) -> list[int]:
    """`runs=1,2,3` (and/or repeated `run=` values) -> ids in order, each once (a dict keeps the
    order and answers "seen?" in constant time). More than `limit` distinct ids is a 400."""
    ids: dict[int, None] = {}
    for value in values:
        for part in value.replace(" ", ",").split(","):
            if not part:
                continue
            if not (part.isdigit() and part.isascii()) or len(part) > _MAX_ID_DIGITS or (run_id := int(part)) > MAX_ID:
                raise BadRequest(f"runs must be run ids separated by commas, like 1,2,3; {part[:30]!r} is not an id")
            ids[run_id] = None
            if limit is not None and len(ids) > limit:
                raise BadRequest(f"at most {limit} runs can be compared at once; more were asked for")
    return list(ids)


def parse_id_filter(text: str) -> tuple[int, ...]:
    """`runs=1,2,3` as a filter (the export): ids in order, each once; an id beyond any run's simply
    matches nothing. Anything but digits, commas and spaces is a 400."""
    parts = [part for part in text.replace(" ", ",").split(",") if part]
    bad = next((part for part in parts if not (part.isdigit() and part.isascii())), None)
    if bad is not None:
        raise BadRequest(f"runs must be run ids separated by commas, like 1,2,3; {bad[:30]!r} is not an id")
    return tuple(dict.fromkeys(int(part) for part in parts if len(part) <= _MAX_ID_DIGITS and int(part) <= MAX_ID))


def parse_mode(mode: str | None) -> str:
    mode = mode or ABSOLUTE
    if mode not in MODES:
        raise BadRequest(f"mode must be 'absolute' or 'relative', not {mode[:30]!r}")
    return mode


def parse_baseline(baseline: str | int | None) -> int | None:
    """A run id, or None for "" / absent."""
    if baseline is None or baseline == "":
        return None
    text = str(baseline).strip()
    if not (text.isdigit() and text.isascii()) or len(text) > _MAX_ID_DIGITS or int(text) > MAX_ID:
        raise BadRequest(f"baseline must be a run id, not {text[:30]!r}")
    return int(text)


def parse_group(group: str | None) -> Grouping:
    """`params` (default), `none`, or tag keys separated by commas."""
    text = (group or "").strip()
    if text in ("", BY_PARAMS):
        return DEFAULT
    if text == UNGROUPED:
        return Grouping(kind=UNGROUPED)
    keys = tuple(dict.fromkeys(key.strip() for key in text.split(",") if key.strip()))
    spaced = next((key for key in keys if any(c.isspace() for c in key)), None)
    if spaced is not None:
        raise BadRequest(f"group: a tag key has no spaces ({spaced[:30]!r}); separate keys with commas, like fs,raid")
    if not keys or len(keys) > MAX_GROUP_KEYS or any("=" in key or "\x00" in key or len(key) > 200 for key in keys):
        raise BadRequest(
            f"group must be 'params', 'none' or up to {MAX_GROUP_KEYS} tag keys separated by commas, like fs,raid"
        )
    return Grouping(keys=keys, kind="tags")


def parse_min_effect(text: str | float | None) -> float | None:
    """A ratio of at least 1, like 1.1; None for "" / absent and for the setting's own value (one request,
    one cache entry and one permalink, however the default is spelt)."""
    if text is None or text == "":
        return None
    low, high = MIN_EFFECT_RANGE
    try:
        value = float(str(text).strip())
    except ValueError:
        value = math.nan
    if not low <= value <= high:  # NaN fails both comparisons
        raise BadRequest(f"min_effect must be a ratio from {low:g} to {high:g}, like 1.1, not {str(text)[:30]!r}")
    value = round(value, 4)
    return None if value == get_settings().min_effect else value


def effective_min_effect(asked: float | None) -> float:
    """The minimum effect a request asks for (its min_effect): its own, else the setting's."""
    return get_settings().min_effect if asked is None else asked


def read_request(
    *,
    runs: Iterable[str],
    mode: str | None,
    baseline: str | int | None,
    group: str | None,
    min_effect: str | None = None,
) -> ComparisonRequest:
    """The query of /compare or /api/compare, checked (400 with a message naming the parameter)."""
    return ComparisonRequest(
        tuple(parse_run_ids(runs)),
        parse_mode(mode),
        parse_baseline(baseline),
        parse_group(group),
        parse_min_effect(min_effect),
    )


@dataclass(frozen=True, slots=True)
class PageRequest:
    """The /compare page's query read: the view it asks for, and what the page says of what it left out."""

    asked: ComparisonRequest
    notice: str | None


def read_page_request(
    *,
    runs: Iterable[str],
    add: str,
    remove: str,
    mode: str | None,
    baseline: str | int | None,
    group: str | None,
    min_effect: str | None,
) -> PageRequest:
    """The query of the /compare page: read_request()'s, and the page's own add= and remove= of run ids. A bad
    add= or more than MAX_RUNS runs is said on the page (the first MAX_RUNS are shown), not refused."""
    notice = None
    wanted = parse_run_ids(runs, limit=None)
    try:
        added = parse_run_ids([add], limit=None)
    except BadRequest as exc:
        added, notice = [], exc.detail
    removed = set(parse_run_ids([remove], limit=None))
    run_ids = [run_id for run_id in dict.fromkeys(wanted + added) if run_id not in removed]
    if len(run_ids) > MAX_RUNS:
        notice = f"At most {MAX_RUNS} runs can be compared at once."
    asked = ComparisonRequest(
        tuple(run_ids[:MAX_RUNS]),
        parse_mode(mode),
        parse_baseline(baseline),
        parse_group(group),
        parse_min_effect(min_effect),
    )
    return PageRequest(asked, notice)


def of_runs(run_ids: Sequence[int], group_keys: Sequence[str] = ()) -> ComparisonRequest:
    """The comparison of `run_ids` (the first MAX_RUNS), grouped by the tag keys `group_keys` if any: a link's."""
    grouping = Grouping(keys=tuple(group_keys), kind="tags") if group_keys else DEFAULT
    return ComparisonRequest(tuple(run_ids[:MAX_RUNS]), grouping=grouping)


def baseline_of(found: Sequence[int], mode: str, baseline: int | None, *, strict: bool) -> int | None:
    """The one baseline rule, for the runs `found` (in order): strict (the API, the engine), no runs and a
    baseline not among them are a 400; else that baseline is left out. Relative mode defaults it to the
    first run."""
    if strict and not found:
        raise BadRequest("no runs to compare: give their ids as runs=1,2,3")
    if baseline is not None and baseline not in found:
        if strict:
            raise BadRequest(f"baseline {baseline} is not one of the runs compared")
        baseline = None
    if mode == RELATIVE and baseline is None and found:
        baseline = found[0]
    return baseline


def settle(request: ComparisonRequest, found: Sequence[int], *, strict: bool) -> ComparisonRequest:
    """The request for the runs `found` (in order), its baseline as baseline_of() rules."""
    return replace(
        request, run_ids=tuple(found), baseline=baseline_of(found, request.mode, request.baseline, strict=strict)
    )


def permalink(request: ComparisonRequest, path: str = "/compare") -> str:
    """The one URL of a view: /compare?runs=1,2,3&baseline=1&mode=relative&group=fs,raid&min_effect=1.1."""
    if not request.run_ids:
        return path
    params = {"runs": ",".join(map(str, request.run_ids))}
    if request.baseline is not None:
        params["baseline"] = str(request.baseline)
    if request.mode != ABSOLUTE:
        params["mode"] = request.mode
    if request.grouping != DEFAULT:
        params["group"] = request.grouping.spelling
    if request.min_effect is not None:
        params["min_effect"] = f"{request.min_effect:g}"
    return f"{path}?{urlencode(params, safe=',')}"
