"""Read (and edit) services over stored runs. They take a session and return plain data."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, Select, bindparam, delete, false, func, insert, select, text, union_all, update
from sqlalchemy.orm import Session

from app.bonnie import HEADLINE_TESTS
from app.columns import (
    FILE_TEST_COLUMNS,
    IDENTITY_COLUMNS,
    LIMITERS,
    RAM_BYTES,
    RESULT_COLUMNS,
    SETUP_COLUMNS,
    result_column,
)
from app.errors import BadRequest, NotFound
from app.limits import MAX_TAGS_PER_RUN
from app.store import generation
from app.store.db import begin_write
from app.store.models import Run, Tag, Upload, document_table, run_in_flight_table, run_table, tag_table

# The export's first batch is small, so its first body bytes leave as soon as the query has started: 15 ms
# instead of 24 ms on PostgreSQL (docs/decisions.md, "A small first export batch"). The rest go EXPORT_BATCH at
# a time, memory flat.
EXPORT_FIRST_BATCH = 100
EXPORT_BATCH = 2000


@dataclass(frozen=True, slots=True)
class RunFilter:
    machine: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    format_version: str | None = None
    upload_id: int | None = None
    run_ids: tuple[int, ...] | None = None  # only these runs (the export of a comparison)


def _filtered(statement: Select, run_filter: RunFilter) -> Select:
    if run_filter.machine is not None:
        statement = statement.where(run_table.c.machine == run_filter.machine)
    if run_filter.format_version is not None:
        statement = statement.where(run_table.c.format_version == run_filter.format_version)
    if run_filter.upload_id is not None:
        statement = statement.where(run_table.c.upload_id == run_filter.upload_id)
    if run_filter.run_ids is not None:
        statement = statement.where(run_table.c.id.in_(run_filter.run_ids))
    # A join per tag, not EXISTS: the (key, value, run_id) index then hands the matching ids over in order,
    # so a rare tag is not looked for run by run among a million.
    for key, value in run_filter.tags.items():
        tag = tag_table.alias()
        statement = statement.join(tag, (tag.c.run_id == run_table.c.id) & (tag.c.key == key) & (tag.c.value == value))
    return statement


# Counting every match of a filter costs a scan of all of them (85 ms per page for a million runs on
# PostgreSQL): beyond this many, the list says "more than" or "about" instead.
COUNT_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class RunPage:
    runs: list[Any]  # rows of every run column (_RUN_SELECT); a runner's document is a row of its own
    tags: dict[int, dict[str, str]]  # run id -> its tags
    total: int  # exact, or with total_is_estimate: a lower bound (filtered) or an estimate (all runs)
    total_is_estimate: bool


def _matching_ids(run_filter: RunFilter) -> tuple[Select, ColumnElement[int]]:
    """The ids of matching runs, and the column they come from. With tags, the first tag's index rows
    drive the query (they are in run id order), so newest-first needs neither a sort nor a scan of runs."""
    if not run_filter.tags:
        return _filtered(select(run_table.c.id), run_filter), run_table.c.id
    (key, value), *more = run_filter.tags.items()
    first = tag_table.alias()
    run_id = first.c.run_id
    statement = select(run_id).where(first.c.key == key, first.c.value == value)
    for key, value in more:
        tag = tag_table.alias()
        statement = statement.join(tag, (tag.c.run_id == run_id) & (tag.c.key == key) & (tag.c.value == value))
    if replace(run_filter, tags={}) != RunFilter():
        statement = _filtered(statement.join(run_table, run_table.c.id == run_id), replace(run_filter, tags={}))
    return statement, run_id


# The runs list's orders: upload order (newest or oldest first) or by name (machine, then label). Runs without a
# label come first on both databases (SQLite puts NULL first, PostgreSQL last, unless told).
RUN_ORDERS = {
    "newest": (run_table.c.id.desc(),),
    "oldest": (run_table.c.id,),
    "name": (run_table.c.machine, run_table.c.label.nulls_first(), run_table.c.id),
}


def list_runs(
    *,
    session: Session,
    run_filter: RunFilter,
    limit: int,
    offset: int = 0,
    before: int | None = None,
    after: int | None = None,
    at_machine: str | None = None,
    order: str = "newest",
) -> RunPage:
    """Matching runs in `order` (RUN_ORDERS): newest first, those with ids below `before`, or oldest first,
    those with ids above `after` (keyset cursors: as fast deep down as at the top), or by name, those of machine
    `at_machine` and after (a cursor that skips whole machines; `offset` then counts within that machine's runs,
    and a deep `offset` without one is turned into one: _machine_at);
    after skipping `offset` of them; and how many match in all, counted up to COUNT_LIMIT."""
    ids, page_ids, counted = _page_ids(session, run_filter, limit, offset, before, after, at_machine, order)
    found, tags = _rows_and_tags(session, _RUN_SELECT, page_ids)
    total, is_estimate = counted or _count(session, run_filter, ids)
    return RunPage([found[i] for i in page_ids if i in found], tags, total, is_estimate)


def _rows_and_tags(
    session: Session, rows_select: Select, page_ids: list[int]
) -> tuple[dict[int, Any], dict[int, dict[str, str]]]:
    """The rows of `page_ids` by id, and their tags: two queries, no ORM objects (building 50 ORM runs cost as
    much as the rest of a page)."""
    found: dict[int, Any] = {}
    tags: dict[int, dict[str, str]] = {run_id: {} for run_id in page_ids}
    if page_ids:
        found = {row.id: row for row in session.execute(rows_select, {"run_ids": page_ids})}
        for run_id, key, value in session.execute(_COMPARE_TAGS, {"run_ids": page_ids}):
            tags[run_id][key] = value
    return found, tags


def list_run_rows(
    *,
    session: Session,
    run_filter: RunFilter,
    limit: int,
    offset: int = 0,
    before: int | None = None,
    after: int | None = None,
    at_machine: str | None = None,
    order: str = "newest",
) -> ListedPage:
    """list_runs' page as ListedRun rows: the columns the runs list shows, read without the ORM (building 50 ORM
    runs and their response models took a fifth of the front page's time at a million runs)."""
    ids, page_ids, counted = _page_ids(session, run_filter, limit, offset, before, after, at_machine, order)
    found, tags = _rows_and_tags(session, _LIST_SELECT, page_ids)
    total, is_estimate = counted or _count(session, run_filter, ids)
    return ListedPage([ListedRun.of(found[i], tags[i]) for i in page_ids if i in found], total, is_estimate)


def _page_ids(
    session: Session,
    run_filter: RunFilter,
    limit: int,
    offset: int,
    before: int | None,
    after: int | None,
    at_machine: str | None,
    order: str,
) -> tuple[Select, list[int], tuple[int, bool] | None]:
    """(the select of every matching id, the ids of the page asked for, in order, and _count()'s answer where the
    order needed it: the caller's count then costs no second look at the data's stamp)."""
    ids, run_id = _matching_ids(run_filter)
    counted = None
    if order == "newest":
        newest = ids if before is None else ids.where(run_id < before)
        blocks = _blocks_in_flight(session)
        ordered = _stepping_over(newest, run_id, blocks, limit + offset) if blocks else newest.order_by(run_id.desc())
    elif order == "oldest":
        ordered = ids.order_by(run_id)
        if after is not None:
            ordered = ordered.where(run_id > after)
    else:
        ordered = _filtered(select(run_table.c.id), run_filter).order_by(*RUN_ORDERS[order])
        if at_machine is None and offset >= NAME_SEEK_FROM_OFFSET:
            seek = _machine_at(session, run_filter, offset)
            if seek is None:  # past the last run
                ordered = ordered.where(false())
            else:
                at_machine, offset = seek
        if at_machine is not None:
            ordered = ordered.where(run_table.c.machine >= at_machine)
        if run_filter.tags:
            counted = _count(session, run_filter, ids)
            if not _few_match(*counted):
                walked = _walked_by_name(session, run_filter, at_machine, limit, offset)
                if walked is not None:
                    return ids, walked, counted
            ordered = _sorted_by_name(run_filter, at_machine)
    # Ids first, then their rows: skipping `offset` rows reads only an index, not the wide rows.
    return ids, list(session.scalars(ordered.limit(limit).offset(offset))), counted


def _blocks_in_flight(session: Session) -> list[tuple[int, int, int]]:
    """(first id, last id, upload id) of each block of run ids a PostgreSQL upload is writing, newest first
    (app.store.models.run_in_flight_table; SQLite's readers never meet an open write)."""
    if session.get_bind().dialect.name != "postgresql":
        return []
    blocks = select(run_in_flight_table).order_by(run_in_flight_table.c.first_id.desc())
    return [(row.first_id, row.last_id, row.upload_id) for row in session.execute(blocks)]


def _stepping_over(ids: Select, run_id: ColumnElement[int], blocks: list[tuple[int, int, int]], count: int) -> Select:
    """The first `count` of `ids`, newest first, in one statement that reads a block of an upload in flight only
    if that upload is committed when the statement starts: PostgreSQL checks that once, before the block's scan,
    so the upload's uncommitted rows at the top of the index are not visited one by one. Between the blocks, and
    above and below them, ids are read as usual (runs written meanwhile by anything else included)."""
    parts = []
    above: int | None = None
    for first_id, last_id, upload_id in blocks:
        parts.append(ids.where(run_id > last_id) if above is None else ids.where(run_id > last_id, run_id < above))
        committed = select(Upload.id).where(Upload.id == upload_id).exists()
        parts.append(ids.where(run_id.between(first_id, last_id), committed))
        above = first_id
    parts.append(ids.where(run_id < above))
    newest = union_all(*(part.order_by(run_id.desc()).limit(count) for part in parts)).subquery()
    return select(newest.c[0]).order_by(newest.c[0].desc())


class ListedResult(NamedTuple):
    """A result as the runs list shows it: its status and value (the list shows no %CPU or latency)."""

    status: str
    value: float | None


@dataclass(frozen=True, slots=True)
class ListedRun:
    """A run as the runs list shows it: its attributes are those of the API's RunOut that the list reads, and the
    results of bonnie.HEADLINE_TESTS, the list's columns."""

    id: int
    machine: str
    label: str | None
    format_version: str
    file_size_mib: int | None
    created_at: datetime
    tags: dict[str, str]
    results: dict[str, ListedResult]

    @classmethod
    def of(cls, row: Any, tags: dict[str, str]) -> ListedRun:
        created_at = row.created_at
        return cls(
            id=row.id,
            machine=row.machine,
            label=row.label,
            format_version=row.format_version,
            file_size_mib=row.file_size_mib,
            # SQLite gives back naive datetimes; every run was stored in UTC.
            created_at=created_at if created_at.tzinfo else created_at.replace(tzinfo=UTC),
            tags=tags,
            results={test: ListedResult._make(row[start : start + _LISTED_PARTS]) for test, start in _HEADLINE_STARTS},
        )


@dataclass(frozen=True, slots=True)
class ListedPage:
    runs: list[ListedRun]
    total: int  # as RunPage's
    total_is_estimate: bool


# Lists never show a runner's document (up to BONNIEBOARD_MAX_DOCUMENT_BYTES each): it is not in run's row.
_RUN_SELECT = select(*run_table.c).where(run_table.c.id.in_(bindparam("run_ids", expanding=True)))
_LIST_HEAD = ("id", "machine", "label", "format_version", "file_size_mib", "created_at")
# The list's columns only: each headline test's status and value (ListedResult's fields), 12 of the 48 result
# columns, each read and built for every row of every page.
_LIST_SELECT = select(
    *(run_table.c[name] for name in _LIST_HEAD),
    *(run_table.c[result_column(test, part)] for test in HEADLINE_TESTS for part in ListedResult._fields),
).where(run_table.c.id.in_(bindparam("run_ids", expanding=True)))
_LISTED_PARTS = len(ListedResult._fields)
# Where each headline test's status and value start in a row of _LIST_SELECT: a slice of the row is a ListedResult.
_HEADLINE_STARTS = tuple((test, len(_LIST_HEAD) + _LISTED_PARTS * i) for i, test in enumerate(HEADLINE_TESTS))


# By name, a page this deep starts from the machine its first run belongs to (_machine_at) rather than from
# the top: skipping reads and sorts every run before the page (1.2-1.8 s at page 10,000 of a million runs),
# counting each machine's runs reads only the (machine, id) index.
NAME_SEEK_FROM_OFFSET = 5_000


# By name with a tag filter, the runs are first read in name order (ix_run_machine_label_id) and each checked for
# its tags, at most this many times the runs the page needs, the shorter walk first: a common tag fills the page
# from the first few hundred runs, where joining every match and sorting them all took 151-184 ms at a million runs
# (a third of them match). A walk checks every run it reads (the order is then sorted out of them), so one sized
# for a tag a third of the runs have is tried before one for a tag one in 20 has. A rarer tag fills neither, and
# its matches, few, are joined and sorted instead.
NAME_WALK_FACTORS = (4, 20)


# A filter that this many runs or fewer match is sorted by name at once, without a walk: its count is exact (and
# kept), and PostgreSQL's planner, taking a rare tag for one row, checked a walk's runs against all its matches
# (15 ms for a tag one run in 1,000 has, against 4 ms to sort them).
NAME_SORT_MATCHES = COUNT_LIMIT


def _few_match(total: int, is_estimate: bool) -> bool:
    return not is_estimate and total <= NAME_SORT_MATCHES


def _walked_by_name(
    session: Session, run_filter: RunFilter, at_machine: str | None, limit: int, offset: int
) -> list[int] | None:
    """The page's ids by name, found among the first NAME_WALK_FACTORS[i] * (limit + offset) runs in name order
    that pass the filter's other conditions; None when even the longest walk does not hold limit + offset matches
    and more runs follow (the caller then joins and sorts every match: _sorted_by_name)."""
    wanted = limit + offset
    for factor, longer in zip(NAME_WALK_FACTORS, (*NAME_WALK_FACTORS[1:], None), strict=True):
        walked, complete = _walk_by_name(session, run_filter, at_machine, wanted, wanted * factor)
        if complete:
            return walked[offset:]
        # A longer walk is read only if, as common among its runs as among these, the tags would fill the page:
        # a tag one run in 1,000 has goes to the sort after one short walk.
        if longer is None or len(walked) * longer < wanted * factor:
            break
    return None


def _walk_by_name(
    session: Session, run_filter: RunFilter, at_machine: str | None, wanted: int, scanned: int
) -> tuple[list[int], bool]:
    """The first `wanted` matches by name among the first `scanned` runs by name, and whether they are the page's:
    `wanted` of them, or every run left was read."""
    first = _filtered(select(run_table.c.id, run_table.c.machine, run_table.c.label), replace(run_filter, tags={}))
    if at_machine is not None:
        first = first.where(run_table.c.machine >= at_machine)
    runs = first.order_by(*RUN_ORDERS["name"]).limit(scanned).subquery()
    has_tags = []
    for key, value in run_filter.tags.items():
        tag = tag_table.alias()
        has_tags.append(select(tag.c.run_id).where(tag.c.run_id == runs.c.id, tag.c.key == key, tag.c.value == value))
    rows = session.execute(
        select(runs.c.id)
        .where(*(has.exists() for has in has_tags))
        .order_by(runs.c.machine, runs.c.label.nulls_first(), runs.c.id)
        .limit(wanted)
    ).all()
    complete = len(rows) == wanted or (session.scalar(select(func.count()).select_from(runs)) or 0) < scanned
    return [row[0] for row in rows], complete


def _sorted_by_name(run_filter: RunFilter, at_machine: str | None) -> Select:
    """Every match of a filter with tags whose walk fell short (few match), by name. Sorted on expressions equal to
    the columns, so that no index gives the order: SQLite otherwise reads ix_run_machine_label_id from its start and
    checks each run for the tags (400 ms for a tag one run in 1,000 has) rather than sort its few matches (6 ms)."""
    machine, label = run_table.c.machine + "", run_table.c.label + ""
    ordered = _filtered(select(run_table.c.id), run_filter).order_by(machine, label.nulls_first(), run_table.c.id)
    return ordered if at_machine is None else ordered.where(run_table.c.machine >= at_machine)


def _machine_at(session: Session, run_filter: RunFilter, offset: int) -> tuple[str, int] | None:
    """(the machine of the run at position `offset` of the list by name, how many of that machine's runs come
    before it), or None when the list is shorter. Runs are ordered by machine first, so the runs before
    that machine's are exactly those of the machines before it."""
    per_machine = (
        _filtered(select(run_table.c.machine, func.count().label("runs")), run_filter)
        .group_by(run_table.c.machine)
        .subquery()
    )
    through = func.sum(per_machine.c.runs).over(order_by=per_machine.c.machine)
    running = select(per_machine.c.machine, per_machine.c.runs, through.label("through")).subquery()
    found = session.execute(
        select(running.c.machine, running.c.through - running.c.runs)
        .where(running.c.through > offset)
        .order_by(running.c.machine)
        .limit(1)
    ).first()
    return None if found is None else (found[0], offset - int(found[1]))


def _count(session: Session, run_filter: RunFilter, ids: Select) -> tuple[int, bool]:
    """(how many runs match, whether that is an estimate): counted once per data generation and filter, then
    kept (COUNTS), as the count cost a sixth of the front page's time at a million runs."""
    stamps = generation.current(session)
    stamp = None if stamps is None else stamps.every_write  # a new run changes a count
    key = _count_key(run_filter)
    if stamp is not None:
        kept = COUNTS.get(key, stamp)
        if kept is not None:
            return kept
    counted = _count_now(session, run_filter, ids)
    # Kept only if no write committed meanwhile (stamps never repeat): on PostgreSQL each statement of a read
    # sees the latest commits, and a kept count must be the count at its stamp, exactly (runs_added adds to it).
    if stamp is not None and stamps == generation.current(session):
        COUNTS.put(key, stamp, counted)
    return counted


def runs_added(replaced: generation.Replaced, added: int) -> None:
    """Call between the bump and the commit of a write that only adds `added` runs: the exact count of all runs
    kept under the stamp it replaced, plus `added`, is the count at its new stamp, served from the first read that
    sees that stamp. So the first list after an upload does not count every run again (on PostgreSQL the first
    count of 100,000 new runs also sets their hint bits: 30-80 ms, in which other reads wait). Nothing else can
    commit between the bump and the commit (the bump holds the stamp's row), and a stamp that is never committed
    is never read: a write that fails leaves the carried count unused."""
    COUNTS.carry(_count_key(RunFilter()), replaced, added)


def _count_key(run_filter: RunFilter) -> Hashable:
    """The filter, and the limit it was counted up to (a count made under another limit is another answer)."""
    tags = tuple(sorted(run_filter.tags.items()))
    return (COUNT_LIMIT, run_filter.machine, tags, run_filter.format_version, run_filter.upload_id, run_filter.run_ids)


def _count_now(session: Session, run_filter: RunFilter, ids: Select) -> tuple[int, bool]:
    if run_filter == RunFilter():
        estimate = _estimated_run_count(session)
        if estimate > COUNT_LIMIT:
            return estimate, True
        return session.scalar(select(func.count()).select_from(run_table)) or 0, False
    counted = session.scalar(select(func.count()).select_from(ids.limit(COUNT_LIMIT + 1).subquery())) or 0
    return (COUNT_LIMIT, True) if counted > COUNT_LIMIT else (counted, False)


class CountCache:
    """Counts of the runs matching a filter, kept under the data generation they were counted at
    (app/store/generation.py): served while the database holds that stamp, so a write is counted at once.
    A count is kept only if the stamps read before and after it are the same: it is the count at its stamp. At
    most MAX_COUNTS filters, the least recently used out first."""

    MAX_COUNTS = 256

    def __init__(self) -> None:
        self._stamp: int | None = None
        self._counts: OrderedDict[Hashable, tuple[int, bool]] = OrderedDict()
        self._carried: tuple[int, Hashable, tuple[int, bool]] | None = None  # (stamp, key, count): carry()
        self._lock = threading.Lock()

    def get(self, key: Hashable, stamp: int) -> tuple[int, bool] | None:
        with self._lock:
            if stamp != self._stamp and self._carried is not None and self._carried[0] == stamp:
                # The write that carried a count committed: its stamp is the current one now.
                self._stamp, carried_key, carried = self._carried
                self._counts.clear()
                self._counts[carried_key] = carried
                self._carried = None
            if stamp != self._stamp:
                return None
            counted = self._counts.get(key)
            if counted is not None:
                self._counts.move_to_end(key)
            return counted

    def carry(self, key: Hashable, replaced: generation.Replaced, added: int) -> None:
        """`key`'s exact count at the stamp `replaced` names as before, plus `added`: the count at its new stamp,
        kept until that stamp is read (runs_added). The count at `before` may itself be one carried (uploads one
        after another, no read between: `before` was read from the database, so that write committed). Nothing
        if that count is not kept or is an estimate."""
        with self._lock:
            counted = None
            if self._stamp == replaced.before:
                counted = self._counts.get(key)
            elif self._carried is not None and self._carried[:2] == (replaced.before, key):
                counted = self._carried[2]
            if counted is not None and not counted[1]:
                self._carried = (replaced.after, key, (counted[0] + added, False))

    def put(self, key: Hashable, stamp: int, counted: tuple[int, bool]) -> None:
        with self._lock:
            if stamp != self._stamp:  # counts made under another stamp are stale, or another database's
                self._counts.clear()
                self._stamp = stamp
            self._counts[key] = counted
            while len(self._counts) > self.MAX_COUNTS:
                self._counts.popitem(last=False)


COUNTS = CountCache()


def _estimated_run_count(session: Session) -> int:
    """The number of runs without counting them: PostgreSQL's planner statistics (kept by autovacuum).
    SQLite's count(*) of a million runs reads its smallest index in ~10 ms: exact there."""
    if session.get_bind().dialect.name != "postgresql":
        return 0
    return int(session.scalar(text("SELECT reltuples::bigint FROM pg_class WHERE oid = 'run'::regclass")) or 0)


def get_run(*, session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise NotFound(f"run {run_id} does not exist")
    return run


def export_batches(
    *, sessions: Callable[[], AbstractContextManager[Session]], run_filter: RunFilter
) -> Iterator[list[str]]:
    """Every matching run's raw line, oldest first: EXPORT_FIRST_BATCH lines, then EXPORT_BATCH at a time.

    Each batch is read in a short session of its own from `sessions` (keyset on id), closed before the batch is
    yielded: a client that leaves mid-stream abandons this generator without closing it, and a session held across
    a yield would never go back to the pool (16 aborted downloads would empty it). Memory stays flat; a run stored
    while the export is sent is in it if it is newer than the last line sent.
    """
    after_id, limit = 0, EXPORT_FIRST_BATCH
    while True:
        with sessions() as session:
            page = session.execute(_export_batch(run_filter, after_id, limit)).all()  # one fetchall, not one per row
        if page:
            yield [line for _, line in page]
        if len(page) < limit:
            return
        after_id, limit = page[-1][0], EXPORT_BATCH


def _export_batch(run_filter: RunFilter, after_id: int, limit: int) -> Select:
    """The next `limit` matching runs' (id, raw line) after `after_id`, oldest first."""
    lines = select(run_table.c.id, run_table.c.raw_line)
    if not run_filter.tags:
        return _filtered(lines, run_filter).where(run_table.c.id > after_id).order_by(run_table.c.id).limit(limit)
    # With tags, the bound goes on the first tag's index rows the ids come from: on run.id past the join, SQLite
    # read that index from its start for every batch (7x slower at 200,000 runs).
    ids, run_id = _matching_ids(run_filter)
    batch_ids = ids.where(run_id > after_id).order_by(run_id).limit(limit).scalar_subquery()
    return lines.where(run_table.c.id.in_(batch_ids)).order_by(run_table.c.id)


def update_run(*, session: Session, run_id: int, changes: dict[str, Any]) -> Run:
    """Replace the run's label and/or tag set; BadRequest beyond MAX_TAGS_PER_RUN tags."""
    tags = changes.get("tags")
    if tags is not None and len(tags) > MAX_TAGS_PER_RUN:
        raise BadRequest(f"a run has at most {MAX_TAGS_PER_RUN} tags; {len(tags)} were given")
    _lock_run(session, run_id)
    if "label" in changes:
        session.execute(update(run_table).where(run_table.c.id == run_id).values(label=changes["label"]))
    if "tags" in changes:
        session.execute(delete(Tag).where(Tag.run_id == run_id))
        if tags:
            session.execute(insert(Tag), [{"run_id": run_id, "key": k, "value": v} for k, v in tags.items()])
    generation.bump(session)
    return session.get_one(Run, run_id, populate_existing=True)


def delete_run(*, session: Session, run_id: int) -> None:
    """Delete the run, its tags, and its document when no other run refers to it."""
    # PostgreSQL: the document's row is locked before the run's, in the order an upload takes them (the document
    # it shares, then the runs its duplicate lines name), so the two never wait for each other. A run's
    # document_id never changes, so it can be read before the run is locked. SQLite: _lock_run ends this read
    # and takes the write lock, which serialises everything.
    document_id = session.scalar(select(run_table.c.document_id).where(run_table.c.id == run_id))
    if document_id is not None:
        session.execute(select(document_table.c.id).where(document_table.c.id == document_id).with_for_update())
    _lock_run(session, run_id)
    # The tags go with it: ON DELETE CASCADE.
    session.execute(delete(run_table).where(run_table.c.id == run_id))
    if document_id is not None:
        # Locked above: another deletion of one of its runs waits, then sees this run gone; an upload sharing it
        # holds it until it commits (app.ingest.documents.store_document), and its runs are seen here then.
        still_used = select(run_table.c.id).where(run_table.c.document_id == document_id).exists()
        session.execute(delete(document_table).where(document_table.c.id == document_id, ~still_used))
    generation.bump(session)


def _lock_run(session: Session, run_id: int) -> None:
    """Start a write by locking the run's row, or raise NotFound.

    Every writer of a run takes this lock first, so concurrent edits and deletes of one run queue
    up instead of deadlocking on tag and run rows taken in opposite orders; and each statement
    after it sees the row as it is, not as an earlier read in this transaction saw it.
    PostgreSQL: SELECT ... FOR UPDATE, which waits for another holder and then finds the row gone
    if that one deleted it. SQLite: begin_write's write lock already serialises writers.
    """
    begin_write(session)
    if session.execute(select(run_table.c.id).where(run_table.c.id == run_id).with_for_update()).first() is None:
        raise NotFound(f"run {run_id} does not exist")


# ==== Comparisons: only the columns the charts need (docs/decisions.md, "Comparison rows without the ORM") ====

# Selected by name: app/compare/figures.py reads them by these names (the run's result columns from app/columns.py).
COMPARE_COLUMNS = (
    *(run_table.c[name] for name in (*IDENTITY_COLUMNS, *SETUP_COLUMNS, *FILE_TEST_COLUMNS)),
    # What a comparison needs of the runner's document, taken out at ingest (app.ingest.documents): a comparison
    # never reads a document, which can be 1 MB (docs/decisions.md, "A document stored once").
    document_table.c.ram_bytes.label(RAM_BYTES),
    run_table.c.limiters.label(LIMITERS),
    *(run_table.c[name] for name in RESULT_COLUMNS),
)


# Built once: making a 53-column select costs more than SQLite takes to run it.
_COMPARE_SELECT = (
    select(*COMPARE_COLUMNS)
    .select_from(run_table.outerjoin(document_table, document_table.c.id == run_table.c.document_id))
    .where(run_table.c.id.in_(bindparam("run_ids", expanding=True)))
)
_COMPARE_TAGS = (
    select(Tag.run_id, Tag.key, Tag.value).where(Tag.run_id.in_(bindparam("run_ids", expanding=True))).order_by(Tag.key)
)


@dataclass(frozen=True, slots=True)
class ComparedRuns:
    rows: list[Any]  # COMPARE_COLUMNS of each run found, in the order asked
    tags: dict[int, dict[str, str]]  # run id -> its tags
    missing: list[int]  # ids asked for that do not exist


def runs_to_compare(
    *, session: Session, run_ids: list[int], missing_ok: bool = False, with_tags: bool = True
) -> ComparedRuns:
    """The runs asked for, as rows of COMPARE_COLUMNS, and their tags (all empty without with_tags);
    without missing_ok, NotFound names the first missing id."""
    found = {row.id: row for row in session.execute(_COMPARE_SELECT, {"run_ids": run_ids})} if run_ids else {}
    missing = [run_id for run_id in run_ids if run_id not in found]  # a dict lookup each: linear
    if missing and not missing_ok:
        raise NotFound(f"run {missing[0]} does not exist")
    tags: dict[int, dict[str, str]] = {run_id: {} for run_id in found}
    if found and with_tags:
        for run_id, key, value in session.execute(_COMPARE_TAGS, {"run_ids": list(found)}):
            tags[run_id][key] = value
    return ComparedRuns([found[run_id] for run_id in run_ids if run_id in found], tags, missing)


def tags_of_runs(*, session: Session, run_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    """The tags of each of `run_ids` (an empty dict for a run without any), in one query."""
    tags: dict[int, dict[str, str]] = {run_id: {} for run_id in run_ids}
    if tags:
        for run_id, key, value in session.execute(_COMPARE_TAGS, {"run_ids": list(tags)}):
            tags[run_id][key] = value
    return tags


def recent_runs(*, session: Session, limit: int, exclude: list[int]) -> list[Any]:
    """The newest runs' (id, machine, label), leaving out `exclude`."""
    statement = (
        select(run_table.c.id, run_table.c.machine, run_table.c.label).order_by(run_table.c.id.desc()).limit(limit)
    )
    if exclude:
        statement = statement.where(run_table.c.id.not_in(exclude))
    return list(session.execute(statement))


def runs_with_tags(
    *,
    session: Session,
    keys: tuple[str, str],
    limit: int,
    tags: tuple[tuple[str, str], ...] = (),
    without: tuple[str, str] | None = None,
) -> list[int]:
    """The newest runs that have both tag keys (and every KEY=VALUE of `tags`, but not the tag `without`), oldest of
    them first (the order of a sweep)."""
    first = select(Tag.run_id).where(Tag.key == keys[0])
    both = select(Tag.run_id).where(Tag.key == keys[1], Tag.run_id.in_(first))
    for key, value in tags:
        both = both.where(Tag.run_id.in_(select(Tag.run_id).where(Tag.key == key, Tag.value == value)))
    if without is not None:
        both = both.where(Tag.run_id.not_in(select(Tag.run_id).where(Tag.key == without[0], Tag.value == without[1])))
    return sorted(session.scalars(both.order_by(Tag.run_id.desc()).limit(limit)))
