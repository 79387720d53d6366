"""Change detection after an upload (the API's or the upload page's), as a background task of its request: the
upload is committed and answered first, then the machines it added runs to are analysed, so that /changes and
the first /history find it done (app/history/snapshot.py)."""

from __future__ import annotations

import logging

from app.config import get_settings
from app.history import changes as history_changes
from app.history import snapshot as history_snapshot
from app.store.db import without_autocheckpoint
from app.web.deps import own_session

log = logging.getLogger(__name__)


def detect_after_upload(upload_id: int) -> None:
    """A failure is logged, never the upload's: the next page of the machine analyses it again."""
    try:
        with own_session() as session:
            without_autocheckpoint(session)
            machines = history_changes.machines_of_upload(session, upload_id)
            history_snapshot.refresh(session, machines, get_settings().min_effect)
    except Exception:
        log.exception("change detection after upload %d failed", upload_id)
