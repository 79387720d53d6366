"""Storing an upload for a request (the API's and the upload page's): parse, ingest and commit in a
worker thread, so the event loop keeps answering other requests, one upload at a time per worker process.

Writers take turns in the database anyway (SQLite's write lock, PostgreSQL's advisory lock); waiting
here is free, where SQLite's busy handler sleeps in steps of up to 100 ms (bench/concurrent_uploads.py:
13 rather than 11 uploads/s on SQLite). The turn is waited for on the event loop, not in a thread: waiting
in threads, a burst of 120 uploads holds all 40 of a worker's threads and /api/health takes 4-5 s
(docs/decisions.md, "Uploads wait on the event loop").
"""

import asyncio
import logging
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from app.ingest.service import IngestOutcome, ingest_bytes
from app.store import generation
from app.store import runs as run_store
from app.store.db import checkpoint_wal

log = logging.getLogger(__name__)

# One lock per event loop: an asyncio.Lock belongs to the loop it first waited on (tests start several).
_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _upload_turn() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    turn = _turns.get(loop)
    if turn is None:
        turn = _turns[loop] = asyncio.Lock()
    return turn


async def store_upload(*, session: Session, **upload: Any) -> IngestOutcome:
    """ingest_bytes() and commit; InvalidUpload (or any failure) propagates, rolled back."""
    async with _upload_turn():
        # The thread cannot be abandoned when the request is cancelled (anyio's default), so the
        # turn is held until the transaction has ended either way.
        outcome = await run_in_threadpool(_store, session=session, **upload)
    engine = session.get_bind()
    if engine.dialect.name == "sqlite":
        # The upload's commit skipped SQLite's automatic checkpoint (app.ingest.sqlite_bulk): it is done here,
        # after the answer, by one thread, so uploads queue at most one checkpoint each.
        _checkpoints.submit(_checkpoint, engine)
    return outcome


_checkpoints = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wal-checkpoint")


def _checkpoint(engine: Any) -> None:
    try:
        checkpoint_wal(engine)
    except Exception:  # a full disk, say: the data is committed in the WAL, and the next write retries
        log.exception("checkpoint after an upload failed")


def _store(*, session: Session, **upload: Any) -> IngestOutcome:
    try:
        outcome = ingest_bytes(session=session, **upload)
        if not outcome.replayed:  # an upload answered from its Idempotency-Key changed nothing
            # Cached comparisons of the runs it names stay current unless this gave stored runs new tags.
            stamp = generation.bump(session, stored_runs_changed=bool(outcome.tagged))
            run_store.runs_added(stamp, len(outcome.created))
        session.commit()
    except BaseException:
        session.rollback()  # inside the turn: the next upload finds the write lock free
        raise
    return outcome
