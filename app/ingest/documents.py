"""A runner's document at ingest: stored once for its upload, and what a comparison needs of it taken out.

A document is one `document` row (shared by uploads that post the very same one) that each run of its upload
refers to, and the two facts a comparison reads of it are taken out here, once: the machine's RAM
(`document.ram_bytes`) and, per line, what the runner said limited each test (`run.limiters`); and the two
history reads: when the runner started (`document.started_at`) and the setup facts (`document.setup`). So an upload's
bytes on disk do not grow with lines x document, and a comparison never parses a document
(docs/decisions.md, "A document stored once").

line_facts() and limiters_of() are also how the run page reads a document, so the page and a comparison name the
same limiters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.bonnie import TESTS
from app.store.models import document_table


def line_facts(document_runs: Any, raw_line: str) -> dict[str, Any] | None:
    """The runner document's entry for this CSV line: one of document["runs"] (one per -x repeat), the one
    whose `csv` is the line (runner/README.md, "JSON document"); None for other documents."""
    if not isinstance(document_runs, list):
        return None
    return next((run for run in document_runs if isinstance(run, dict) and run.get("csv") == raw_line), None)


# What history reads of a limiter's evidence (runner/README.md, "What limited each test"), kept beside the limiter
# as (kept name, evidence name, highest valid value): the share of the test's time it waited for a CPU tells the
# machine's load from its storage; the share of the test's bytes its device moved (under 100 % when the page cache
# served or absorbed the rest; over 100 with writeback of metadata) tells the page cache from the device.
EVIDENCE_KEPT = (("cpu_wait_pct", "run_delay_pct", 100.0), ("device_share_pct", "device_share_pct", 1000.0))


def limiters_of(document_tests: Any) -> dict[str, dict[str, Any]]:
    """{test: {code, text}} from a line's per-test facts (line_facts(...)["tests"]), where a test has a
    valid limiter (runner/README.md, "What limited each test"); with `cpu_wait_pct` and `device_share_pct`
    (EVIDENCE_KEPT) where the runner measured them."""
    if not isinstance(document_tests, dict):
        return {}
    found: dict[str, dict[str, Any]] = {}
    for test in TESTS:
        facts = document_tests.get(test)
        limiter = facts.get("limiter") if isinstance(facts, dict) else None
        if isinstance(limiter, dict) and isinstance(limiter.get("code"), str) and isinstance(limiter.get("text"), str):
            found[test] = {"code": limiter["code"][:40], "text": limiter["text"][:500]}
            evidence = limiter.get("evidence")
            if not isinstance(evidence, dict):
                continue
            for kept, name, highest in EVIDENCE_KEPT:
                value = evidence.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= highest:
                    found[test][kept] = round(float(value), 1)
    return found


def limiters_by_line(document: Any) -> Iterator[tuple[str, dict[str, dict[str, Any]]]]:
    """(CSV line, its limiters) for each line the document has an entry for with at least one limiter: the first
    entry of a line, as line_facts() picks it. At most one per entry of document["runs"], so bounded by the
    document, not by the upload's lines."""
    runs = document.get("runs") if isinstance(document, dict) else None
    if not isinstance(runs, list):
        return
    seen: set[str] = set()
    for entry in runs:
        if not isinstance(entry, dict) or not isinstance(entry.get("csv"), str) or entry["csv"] in seen:
            continue
        seen.add(entry["csv"])
        limiters = limiters_of(entry.get("tests"))
        if limiters:
            yield entry["csv"], limiters


def ram_bytes_of(document: Any) -> int | None:
    """document["system"]["ram_bytes"] when it is a byte count a comparison can use (app.compare.figures.ram_mib_of
    reads it): a whole number above 0 and below 2**63 (a BIGINT; past it no measurement)."""
    system = document.get("system") if isinstance(document, dict) else None
    ram_bytes = system.get("ram_bytes") if isinstance(system, dict) else None
    if isinstance(ram_bytes, int) and 0 < ram_bytes < 2**63:
        return int(ram_bytes)
    return None


# A setup fact is a short text: a kernel release, mount options.
MAX_FACT_CHARS = 200


def started_at_of(document: Any) -> datetime | None:
    """document["started_at"] (ISO 8601) as an aware UTC time; None when absent or not a time."""
    value = document.get("started_at") if isinstance(document, dict) else None
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def setup_of(document: Any) -> dict[str, str] | None:
    """The document's setup facts as short texts; None when it names none."""
    system = document.get("system") if isinstance(document, dict) else None
    if not isinstance(system, dict):
        return None
    kernel, filesystem = _object(system, "kernel"), _object(system, "filesystem")
    block, cgroup = _object(system, "block_device"), _object(system, "cgroup")
    facts = {
        "kernel": _text(kernel.get("release")),
        "filesystem": _text(filesystem.get("type")),
        "mount_options": _mount_options(filesystem),
        "raid": _raid(block.get("md")),
        "ram": _ram(system.get("ram_bytes")),
        "io_throttle": _throttle(cgroup.get("io_limits")),
    }
    kept = {key: value for key, value in facts.items() if value is not None}
    return kept or None


def _object(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value[:MAX_FACT_CHARS] if isinstance(value, str) and value else None


def _mount_options(filesystem: dict[str, Any]) -> str | None:
    """The mount's options and the filesystem's own (its superblock's: ext4's data=, commit=, dirsync), each once,
    as mount(8) would list them."""
    options = [
        option
        for key in ("mount_options", "super_options")
        if isinstance(filesystem.get(key), str)
        for option in filesystem[key].split(",")
        if option
    ]
    return _text(",".join(dict.fromkeys(options)))


def _raid(md: Any) -> str | None:
    if not isinstance(md, dict):
        return None
    parts = [str(md.get("level") or "md")]
    if isinstance(md.get("chunk_bytes"), int) and md["chunk_bytes"] > 0:
        parts.append(f"{md['chunk_bytes'] // 1024} KiB chunk")
    if isinstance(md.get("raid_disks"), int):
        parts.append(f"{md['raid_disks']} disks")
    return _text(", ".join(parts))


def _ram(ram_bytes: Any) -> str | None:
    return f"{ram_bytes // 2**20} MiB" if isinstance(ram_bytes, int) and 0 < ram_bytes < 2**63 else None


def _rate(bps: Any) -> str | None:
    return f"{bps / 2**20:g} MiB/s" if isinstance(bps, int) and bps > 0 else None


def _throttle(limits: Any) -> str | None:
    """`read 16 MiB/s, write 16 MiB/s on loop1`, one per limited device; None when nothing is limited."""
    if not isinstance(limits, list):
        return None
    texts = []
    for limit in limits:
        if not isinstance(limit, dict):
            continue
        rates = [
            f"{way} {rate}"
            for way, key in (("read", "read_bps"), ("write", "write_bps"))
            if (rate := _rate(limit.get(key))) is not None
        ]
        rates += [
            f"{way} {limit[key]} IO/s"
            for way, key in (("read", "read_iops"), ("write", "write_iops"))
            if isinstance(limit.get(key), int)
        ]
        if rates:
            texts.append(f"{', '.join(rates)} on {limit.get('name') or limit.get('device') or 'a device'}")
    return _text("; ".join(sorted(texts))) if texts else None


def body_hash(document: Any) -> bytes:
    """blake2b-128 of the document's JSON text as stored (json.dumps, as SQLAlchemy's JSON type writes it)."""
    return hashlib.blake2b(json.dumps(document).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def store_document(session: Session, document: Any) -> int | None:
    """The id of the `document` row holding `document`, written now unless the very same document is stored
    already; None for no document. Within the upload's write (app.store.db.begin_write)."""
    if document is None:
        return None
    values = {
        "body_hash": body_hash(document),
        "ram_bytes": ram_bytes_of(document),
        "started_at": started_at_of(document),
        "setup": setup_of(document),
        "body": document,
    }
    if session.get_bind().dialect.name == "postgresql":
        # DO UPDATE rather than DO NOTHING: it locks the stored row until this upload commits, so a run deletion
        # that would remove the document as no run's waits, and then finds this upload's runs
        # (app.store.runs.delete_run). An update that leaves body alone keeps its TOAST: no copy of the body.
        statement = postgresql.insert(document_table).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=["body_hash"], set_={"body_hash": statement.excluded.body_hash}
        )
        return session.execute(statement.returning(document_table.c.id)).scalar_one()
    # SQLite: this transaction holds the write lock, so nothing deletes the row between these two statements.
    session.execute(sqlite.insert(document_table).values(values).on_conflict_do_nothing(index_elements=["body_hash"]))
    return session.execute(
        select(document_table.c.id).where(document_table.c.body_hash == values["body_hash"])
    ).scalar_one()
