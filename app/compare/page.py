"""The comparison pages' orchestration: the one part of app.compare that opens database sessions. It reads the
runs a view asks for, hands their figures to the pure analysis, and keeps the answer in the cache
(app/compare/cache.py) under the data generation it was made at.

A comparison is read once for every format, as datasette does: page_data() finds the runs, settles the request
(request.baseline_of's one baseline rule) and computes the answer; GET /api/compare and compare.csv serialise its
`data`, the /compare page renders page_context() of it. The routes only pick the format."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, TypeVar
from urllib.parse import urlencode

from sqlalchemy.orm import Session

from app.compare import answer, embed, engine, grouping, heat, matrix, summary
from app.compare.cache import CACHE
from app.compare.comparison import Comparison
from app.compare.figures import RunFigures, figures_of
from app.compare.matrix import MatrixRequest
from app.compare.request import (
    MAX_RUNS,
    RELATIVE,
    ComparisonRequest,
    effective_min_effect,
    of_runs,
    permalink,
    settle,
)
from app.compare.view import compare_view
from app.config import get_settings
from app.errors import BadRequest
from app.store import generation, samples
from app.store import runs as run_store
from app.store.db import get_engine, read_session
from app.units import BYTES_PER_MIB

T = TypeVar("T")
_log = logging.getLogger("bonnieboard")


@dataclass(frozen=True, slots=True)
class FoundRuns:
    figures: list[RunFigures]
    missing: list[int]  # asked for and not stored (only with missing_ok)


def find_runs(session: Session, run_ids: Sequence[int], *, missing_ok: bool = False) -> FoundRuns:
    """The figures of the runs `run_ids` names, in the store's order; a missing one is a 404 unless `missing_ok`."""
    compared = run_store.runs_to_compare(session=session, run_ids=list(run_ids), missing_ok=missing_ok)
    if compared.missing:
        reads_beyond_named_runs()  # a run left out now may be stored by the next upload
    return FoundRuns([figures_of(row, compared.tags[row.id]) for row in compared.rows], list(compared.missing))


@dataclass(frozen=True, slots=True)
class PageData:
    """One comparison as every format shows it: the request settled for the runs found, their figures, the ids
    asked for and not stored (only when not strict), and compare()'s answer (None when no run was found)."""

    request: ComparisonRequest
    figures: list[RunFigures]
    missing: list[int]
    data: Comparison | None

    @property
    def url(self) -> str:
        """The view's permalink."""
        return permalink(self.request)

    @property
    def missing_notice(self) -> str | None:
        if not self.missing:
            return None
        return f"No run {', '.join(f'#{run_id}' for run_id in self.missing)}: left out."

    def answer(self) -> Comparison:
        """compare()'s answer; a strict page_data() always has one (no runs is a 400 there)."""
        if self.data is None:
            raise BadRequest("no runs to compare: give their ids as runs=1,2,3")
        return self.data


def page_data(session: Session, asked: ComparisonRequest, *, strict: bool) -> PageData:
    """The comparison `asked` for. Strict (the API): a run not stored is a 404, no runs or a baseline not among
    them a 400. Else (the pages) what is missing is left out, and said (missing_notice)."""
    found = find_runs(session, asked.run_ids, missing_ok=not strict)
    figures = found.figures
    settled = settle(asked, [f.id for f in figures], strict=strict)
    data = compare_figures(figures, settled) if figures else None
    return PageData(settled, figures, found.missing, data)


def page_context(shown: PageData, notice: str | None) -> dict[str, Any]:
    """What templates/_compare.html reads of `shown`, `notice` said above it; `chart_data` is the charts' JSON as
    a value (the route writes it into its <script> block)."""
    settled = shown.request
    context: dict[str, Any] = {
        "url": shown.url,
        "mode": settled.mode,
        "group": settled.grouping.spelling,
        "notice": notice,
        "recent_url": "/compare/recent?" + urlencode({"runs": ",".join(map(str, settled.run_ids))}),
    }
    if shown.data is None:
        return context
    data, figures = shown.data, shown.figures
    rows = answer.rows(data, engine.RATE_CHART_KEYS)
    keys = [chart.key for chart in data.charts]
    lead = answer.lead_chart(rows)
    charts_view = compare_view(figures, data)
    return context | {
        "figures": figures,
        "data": data,
        "answer": rows,
        "answer_lead": answer.lead(data, rows),
        "answer_legend": answer.legend(data),
        "answer_caveat": answer.shared_caveat(rows),
        "words": summary.fold(data, engine.TEST_TITLES, engine.FAMILY_RATE_CHARTS),
        # the chart of the family the answer leads with comes first: on a desktop's first screen
        "chart_order": sorted(range(len(keys)), key=lambda i: keys[i] != lead),
        "view": charts_view,
        "chart_data": embed.chart_data(data, charts_view, rows),
        "setup_url": permalink(settled, "/compare/setup"),
        "figures_url": permalink(settled, "/compare/figures"),
        "baseline": data.baseline,
        "csv_url": permalink(settled, "/api/compare.csv"),
        "matrix_url": matrix.link_for(settled, figures),
        "matrix_keys": matrix.matrix_keys(settled, figures),
    }


def table_context(shown: PageData, table: str) -> dict[str, Any]:
    """What the setup table's or the figures tables' template reads of `shown` (table "setup" or "figures")."""
    context: dict[str, Any] = {"url": shown.url}
    if shown.data is None:
        return context
    data = shown.data
    context.update(data=data, names={c.id: c.name for c in data.configurations})
    if table == "figures":
        context["table"] = heat.heat_table(data)
    return context


def compare_figures(figures: Sequence[RunFigures], request: ComparisonRequest) -> Comparison:
    """engine.compare() of `figures` as `request` asks: its mode, baseline, grouping and minimum effect."""
    return engine.compare(
        figures,
        mode=request.mode,
        baseline=request.baseline,
        grouping=request.grouping,
        min_effect=effective_min_effect(request.min_effect),
    )


@dataclass(frozen=True, slots=True)
class UploadLinks:
    """The comparisons an upload's answer offers as its next step: the runs grouped by the one tag key that tells
    them apart (`key`; else as their parameters group them), and with that key the same relative to the first run's
    configuration, named `baseline` (without it, what a configuration is, and so the baseline, is the reader's to
    say)."""

    grouped: str
    key: str | None
    relative: str | None = None
    baseline: str | None = None


def upload_links(session: Session, run_ids: Sequence[int]) -> UploadLinks | None:
    """The links after an upload of the runs `run_ids` (created or already stored, in the file's order): none for
    no runs or more than a comparison holds. Each is the permalink of its view, so that it opens without a
    redirect."""
    if not 0 < len(run_ids) <= MAX_RUNS:
        return None
    tags = run_store.tags_of_runs(session=session, run_ids=run_ids)
    key = grouping.telling_key([tags[run_id] for run_id in run_ids])
    asked = of_runs(run_ids, (key,) if key else ())
    if key is None:
        return UploadLinks(permalink(asked), key)
    relative = settle(replace(asked, mode=RELATIVE), run_ids, strict=False)
    baseline = f"{key}={tags[run_ids[0]].get(key, grouping.UNSET)}"
    return UploadLinks(permalink(asked), key, permalink(relative), baseline)


def matrix_runs(session: Session, request: MatrixRequest, *, missing_ok: bool = False) -> list[RunFigures]:
    """The runs of a matrix view: those it names, or the newest MAX_RUNS with both tag keys and its tag filters (a
    400 when none). The sample data only when no other runs have them, or a filter names it: a board's own sweep
    is never mixed with the sample runs."""
    run_ids = list(request.run_ids)
    if not run_ids:
        reads_beyond_named_runs()  # the next upload may bring a newer run with both tags
        keys = (request.rows, request.cols)
        asks_for_samples = any(key == samples.SOURCE_KEY for key, _ in request.tags)
        sample_tag = (samples.SOURCE_KEY, samples.SOURCE_VALUE)
        if not asks_for_samples:
            run_ids = run_store.runs_with_tags(
                session=session, keys=keys, limit=MAX_RUNS, tags=request.tags, without=sample_tag
            )
        if not run_ids:
            run_ids = run_store.runs_with_tags(session=session, keys=keys, limit=MAX_RUNS, tags=request.tags)
    figures = find_runs(session, run_ids, missing_ok=missing_ok).figures if run_ids else []
    if not figures:
        filtered = "".join(f" and {key}={value}" for key, value in request.tags)
        raise BadRequest(f"no runs have both tags {request.rows} and {request.cols}{filtered}")
    return figures


def matrix_of(session: Session, request: MatrixRequest) -> dict[str, Any]:
    """What GET /api/matrix answers for `request`."""
    return matrix.build(matrix_runs(session, request), request)


def matrix_context(session: Session, asked: MatrixRequest) -> dict[str, Any]:
    """What templates/matrix.html reads of the matrix `asked` for, besides the form's own fields."""
    shown_runs = matrix_runs(session, asked, missing_ok=True)
    data = matrix.comparison(shown_runs, asked)
    built = matrix.build_from(shown_runs, asked, data)
    # The matrix keeps only its cells' figures; the answer reads the whole comparison (hints, caveats).
    rows_shown = answer.rows(data, engine.RATE_CHART_KEYS)
    return {
        "m": built,
        "answer": rows_shown,
        "answer_lead": answer.lead(data, rows_shown) if rows_shown else "",
        "answer_legend": answer.legend(data),
        "answer_caveat": answer.shared_caveat(rows_shown),
        "url": matrix.permalink(asked),
        "api_url": matrix.permalink(asked, "/api/matrix"),
        "shown": matrix.display(built),
    }


def cached(
    key: Hashable,
    make: Callable[[Session], T],
    size_of: Callable[[T], int],
    also: Callable[[T], Hashable | None] | None = None,
    rewarm: bool = True,
) -> T:
    """`make(session)`'s value for `key`, from the cache while the database holds the data generation's stamp
    it depends on; make() gets a read session (app.store.db.read_session) only when it has to run.

    What it depends on: an answer that reads only the runs it names depends on the stored runs' stamp, which
    uploads of new runs leave alone; make() calls reads_beyond_named_runs() when it reads anything else (a run
    it names that is not stored, the newest runs with some tags), and then the answer depends on every write
    (docs/decisions.md, "New runs leave comparisons of named runs as made").

    The stamps are read first (two rows by their keys, on a plain connection: half the time of a session's, and
    no lock can hold it up to need the read timeout), make()'s data after them: the data is never older than the
    stamp it is kept under — a write that commits in between has replaced the stamp, so its readers miss this
    entry. Stamps are random (app/store/generation.py): an entry never matches another database's, so the key
    needs no database name.

    `also(value)`: another key the same value answers, kept with it (a link's canonical spelling, which the
    browser is redirected to: the comparison is not made again for it).

    The view is remembered (REWARM): after the next write it is made again in the background, so its next reader
    finds it made; unless not `rewarm` (a view cheap enough for its first reader to make)."""
    max_bytes = get_settings().compare_cache_mib * BYTES_PER_MIB
    stamps = _current_stamps() if max_bytes else None
    if stamps is None:
        with read_session() as session:
            return make(session)
    made = functools.partial(_made, make, stamps)
    if also is not None:
        made = functools.partial(_made_as_well, made, key, stamps, also, size_of, max_bytes)
    value = CACHE.fetch(key, stamps, made, size_of, max_bytes)
    # Once answered (a view that fails is not made again): the first reader of another process's write has
    # its own view made before the others are.
    if rewarm:
        REWARM.served(key, _View(make, size_of), stamps)
    return value


def _current_stamps() -> generation.Stamps | None:
    with get_engine().connect() as connection:
        return generation.current(connection)


# Set while a make() runs: [True] once it read beyond the runs it names.
_BEYOND_NAMED_RUNS: ContextVar[list[bool] | None] = ContextVar("beyond_named_runs", default=None)


def reads_beyond_named_runs() -> None:
    """Says that the answer being made depends on more than the runs it names (see cached())."""
    flag = _BEYOND_NAMED_RUNS.get()
    if flag is not None:
        flag[0] = True


def _made(make: Callable[[Session], T], stamps: generation.Stamps) -> tuple[T, int]:
    """make()'s answer and the stamp of `stamps` it depends on."""
    flag = [stamps.stored_runs is None]  # a database without that stamp yet: every write
    token = _BEYOND_NAMED_RUNS.set(flag)
    try:
        with read_session() as session:
            value = make(session)
    finally:
        _BEYOND_NAMED_RUNS.reset(token)
    return value, stamps.every_write if flag[0] or stamps.stored_runs is None else stamps.stored_runs


def _made_as_well(
    made: Callable[[], tuple[T, int]],
    key: Hashable,
    stamps: generation.Stamps,
    also: Callable[[T], Hashable | None],
    size_of: Callable[[T], int],
    max_bytes: int,
) -> tuple[T, int]:
    """made()'s answer, kept under also()'s key too, under the same stamp: it read the same data."""
    value, stamp = made()
    other = also(value)
    if other is not None and other != key:
        CACHE.put(other, stamps, stamp, value, size_of(value), max_bytes)
    return value, stamp


@dataclass(frozen=True, slots=True)
class _View:
    make: Callable[[Session], Any]
    size_of: Callable[[Any], int]


# The views made again after a write: the most recently served ones. Each costs one computation per write
# (a 50-run page: 25-60 ms of one core), so a burst of uploads costs at most this many per write, and a pass
# that a newer write overtakes stops and starts over for the new data.
REWARM_VIEWS = 8
# A write's pass starts this long after it, so that the writes of one burst (one upload per run of a sweep)
# make one pass, not one each.
REWARM_DELAY_S = 0.02


class Rewarmer:
    """Makes the views last served again after the data changed, in a background thread (one per worker),
    off every request's path; a request for a view being made waits for it (ResponseCache.fetch) rather than
    making it twice. It learns of a change from this process's writes as they commit
    (app.store.generation.on_commit) and, for another process's (the CLI, another worker), from the first
    request that reads the new stamp."""

    def __init__(self, max_views: int = REWARM_VIEWS) -> None:
        self.max_views = max_views
        self._views: OrderedDict[Hashable, _View] = OrderedDict()
        self._seen_stamp: int | None = None  # every_write's
        self._changed = False
        self._busy = False
        self._thread: threading.Thread | None = None
        self._condition = threading.Condition()
        self.passes = 0  # passes finished: the tests wait on it
        self.made = 0  # views made by passes

    def served(self, key: Hashable, view: _View, stamps: generation.Stamps) -> None:
        with self._condition:
            self._views[key] = view
            self._views.move_to_end(key)
            while len(self._views) > self.max_views:
                self._views.popitem(last=False)
            if self._seen_stamp is not None and stamps.every_write != self._seen_stamp:
                self._wake_locked()
            self._seen_stamp = stamps.every_write

    def data_changed(self) -> None:
        with self._condition:
            if self._views:
                self._wake_locked()

    def forget(self) -> None:
        """Drop the views remembered (the tests: another database)."""
        with self._condition:
            self._views.clear()
            self._seen_stamp = None

    def wait_idle(self, timeout_s: float) -> bool:
        """Whether every change signalled so far has had its pass, within timeout_s (for the tests)."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._changed and not self._busy, timeout_s)

    def _wake_locked(self) -> None:
        self._changed = True
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="bonnieboard-rewarm", daemon=True)
            self._thread.start()
        self._condition.notify_all()

    def _loop(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._changed)
                self._busy = True
            time.sleep(REWARM_DELAY_S)
            with self._condition:
                self._changed = False
                views = list(reversed(self._views.items()))  # the most recently served first
            try:
                self._pass(views)
            except Exception:  # noqa: BLE001 - a view that fails now fails for its reader, who is told why
                _log.debug("re-warming the comparison cache failed", exc_info=True)
            with self._condition:
                self._busy = False
                self.passes += 1
                self._condition.notify_all()

    def _pass(self, views: list[tuple[Hashable, _View]]) -> None:
        max_bytes = get_settings().compare_cache_mib * BYTES_PER_MIB
        stamps = _current_stamps() if max_bytes else None
        if stamps is None:
            return
        with self._condition:
            self._seen_stamp = stamps.every_write
        for key, view in views:
            if self._changed:
                return  # overtaken by a newer write: the next pass makes them for it
            if CACHE.holds(key, stamps):
                continue  # it depends on runs the write left alone, or another reader made it
            try:
                make = functools.partial(_made, view.make, stamps)
                CACHE.fetch(key, stamps, make, view.size_of, max_bytes, counted=False)
                self.made += 1
            except Exception:  # noqa: BLE001 - e.g. a compared run deleted since: its reader gets the 404
                _log.debug("re-warming %r failed", key, exc_info=True)


REWARM = Rewarmer()
generation.on_commit(REWARM.data_changed)
