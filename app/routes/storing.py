"""Storing an upload from a route (the API's and the upload page's): off the event loop, so a
worker keeps answering other requests meanwhile, and one upload at a time per worker process."""

import threading
from typing import Any

from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from app.ingest import IngestOutcome, ingest_bytes

# Writers take turns in the database anyway (SQLite's write lock, PostgreSQL's advisory lock);
# waiting here is free, where SQLite's busy handler sleeps in steps of up to 100 ms
# (bench/concurrent_uploads.py: 13 rather than 11 uploads/s on SQLite).
_UPLOAD_TURN = threading.Lock()


async def store_upload(*, session: Session, **upload: Any) -> IngestOutcome:
    """ingest_bytes() and commit, in a worker thread; InvalidUpload propagates uncommitted."""
    return await run_in_threadpool(_store, session=session, **upload)


def _store(*, session: Session, **upload: Any) -> IngestOutcome:
    with _UPLOAD_TURN:
        outcome = ingest_bytes(session=session, **upload)
        session.commit()
        return outcome
