"""The comparison pages' orchestration: the one part of app.compare that opens database sessions. It reads the
runs a view asks for, hands their figures to the pure analysis, and keeps the answer in the cache
(app/compare/cache.py) under the data generation it was made at."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from app.compare import engine, matrix
from app.compare.cache import CACHE
from app.compare.figures import RunFigures, figures_of
from app.compare.matrix import MatrixRequest
from app.compare.request import MAX_RUNS, ComparisonRequest, effective_min_effect
from app.config import get_settings
from app.errors import BadRequest
from app.store import generation
from app.store import runs as run_store
from app.store.db import get_engine, read_session

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FoundRuns:
    figures: list[RunFigures]
    missing: list[int]  # asked for and not stored (only with missing_ok)


def find_runs(session: Session, run_ids: Sequence[int], *, missing_ok: bool = False) -> FoundRuns:
    """The figures of the runs `run_ids` names, in the store's order; a missing one is a 404 unless `missing_ok`."""
    compared = run_store.runs_to_compare(session=session, run_ids=list(run_ids), missing_ok=missing_ok)
    return FoundRuns([figures_of(row, compared.tags[row.id]) for row in compared.rows], list(compared.missing))


def comparison(session: Session, request: ComparisonRequest) -> dict[str, Any]:
    """What GET /api/compare answers for `request`."""
    found = find_runs(session, request.run_ids)
    return engine.compare(
        found.figures,
        mode=request.mode,
        baseline=request.baseline,
        grouping=request.grouping,
        min_effect=effective_min_effect(request.min_effect),
    )


def matrix_runs(session: Session, request: MatrixRequest, *, missing_ok: bool = False) -> list[RunFigures]:
    """The runs of a matrix view: those it names, or the newest MAX_RUNS with both tag keys (a 400 when none)."""
    run_ids = list(request.run_ids) or run_store.runs_with_tags(
        session=session, keys=(request.rows, request.cols), limit=MAX_RUNS
    )
    figures = find_runs(session, run_ids, missing_ok=missing_ok).figures if run_ids else []
    if not figures:
        raise BadRequest(f"no runs have both tags {request.rows} and {request.cols}")
    return figures


def matrix_of(session: Session, request: MatrixRequest) -> dict[str, Any]:
    """What GET /api/matrix answers for `request`."""
    return matrix.build(matrix_runs(session, request), request)


def cached(key: Hashable, make: Callable[[Session], T], size_of: Callable[[T], int]) -> T:
    """`make(session)`'s value for `key`, from the cache while the database's data generation is the one it
    was made at; make() gets a read session (app.store.db.read_session) only when it has to run.

    The stamp is read first (one row by its key, on a plain connection: half the time of a session's, and no
    lock can hold it up to need the read timeout), make()'s
    data after it: the data is never older than the stamp it is kept under — a write that commits in between
    has replaced the stamp, so its readers miss this entry. Stamps are random (app/store/generation.py): an entry
    never matches another database's, so the key needs no database name."""
    max_bytes = get_settings().compare_cache_mib * 1024 * 1024
    stamp = None
    if max_bytes:
        with get_engine().connect() as connection:
            stamp = generation.current(connection)
    if stamp is not None:
        value = CACHE.get(key, stamp)
        if value is not None:
            return value  # type: ignore[return-value]  # stored by this function for this key: a T
    with read_session() as session:
        value = make(session)
    if stamp is not None:
        CACHE.put(key, stamp, value, size_of(value), max_bytes)
    return value
