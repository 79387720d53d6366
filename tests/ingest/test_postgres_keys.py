"""A PostgreSQL ingest skips the per-row foreign-key triggers where the role may (session_replication_role =
replica, its own transaction only), as SQLite's ingest turns foreign_keys off; a role that may not keeps every
check and stores the same rows. Sound only because an ingest refers to rows it wrote, or read under its lock.
A real server, and a real role without superuser rights."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.errors import InvalidUpload
from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES
from app.ingest.service import ingest_bytes
from app.store.db import make_engine
from app.store.models import tag_table
from tests.helpers import distinct_lines

pytestmark = pytest.mark.databases("postgresql")

PLAIN_ROLE = "bb_ingest_plain"


def upload_and_role(engine: Engine, data: bytes, **options) -> str:
    """Ingest `data` and commit; the transaction's session_replication_role while it wrote."""
    with Session(engine) as session:
        ingest_bytes(session=session, data=data, max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="test", **options)
        role = session.connection().exec_driver_sql("SHOW session_replication_role").scalar_one()
        session.commit()
    return role


def role_now(engine: Engine) -> str:
    with engine.connect() as connection:
        return connection.exec_driver_sql("SHOW session_replication_role").scalar_one()


def orphans(engine: Engine) -> tuple[int, int]:
    """(tags without their run, runs without their upload)."""
    with engine.connect() as connection:
        return (
            connection.scalar(
                text("SELECT count(*) FROM tag LEFT JOIN run ON run.id = tag.run_id WHERE run.id IS NULL")
            ),
            connection.scalar(
                text("SELECT count(*) FROM run LEFT JOIN upload ON upload.id = run.upload_id WHERE upload.id IS NULL")
            ),
        )


def upload_everything(engine: Engine, prefix: str) -> list[str]:
    """Tagged lines, the same lines again with another tag (added to the stored runs), and a refused upload:
    the roles each ingest wrote under, and after each what a new transaction on the pool gets."""
    lines = distinct_lines(prefix, 4)
    seen = [upload_and_role(engine, "\n".join(lines[:2]).encode() + b"\n", tags={"fs": "xfs", "disk": "nvme0"})]
    seen.append(role_now(engine))
    seen.append(upload_and_role(engine, "\n".join(lines).encode() + b"\n", tags={"raid": "10"}))
    seen.append(role_now(engine))
    with pytest.raises(InvalidUpload), Session(engine) as session:
        ingest_bytes(session=session, data=b"not,a,line\n", max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="test")
    seen.append(role_now(engine))
    with engine.connect() as connection:
        assert connection.scalar(text("SELECT count(*) FROM run")) == 4
        assert connection.scalar(text("SELECT count(*) FROM tag")) == 2 * 2 + 4
    assert orphans(engine) == (0, 0)
    with engine.begin() as connection, pytest.raises(IntegrityError):  # any other write is checked
        connection.execute(insert(tag_table).values(run_id=999_999, key="fs", value="xfs"))
    return seen


@pytest.fixture
def plain_role_engine(database_url, postgres) -> Iterator[Engine]:
    """An engine on the test database as a role that is no superuser, allowed to read and write its tables."""
    with postgres.engine.connect() as admin:
        admin.execute(text(f"DROP ROLE IF EXISTS {PLAIN_ROLE}"))
        admin.execute(text(f"CREATE ROLE {PLAIN_ROLE} LOGIN NOSUPERUSER"))
    owner = make_engine(database_url)
    with owner.begin() as connection:
        connection.execute(text(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {PLAIN_ROLE}"))
        connection.execute(text(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {PLAIN_ROLE}"))
        connection.execute(
            text(f"GRANT CREATE, TEMPORARY ON DATABASE {make_url(database_url).database} TO {PLAIN_ROLE}")
        )
    url = make_url(database_url).set(username=PLAIN_ROLE, password=None)
    engine = make_engine(url.render_as_string(hide_password=False))
    yield engine
    engine.dispose()
    with owner.begin() as connection:
        connection.execute(text(f"DROP OWNED BY {PLAIN_ROLE}"))  # its grants, the parameter's included
    owner.dispose()
    with postgres.engine.connect() as admin:
        admin.execute(text(f"DROP ROLE {PLAIN_ROLE}"))


def test_an_ingest_skips_key_triggers_in_its_own_transaction_only(database_url):
    engine = make_engine(database_url)  # the test cluster's superuser
    try:
        assert upload_everything(engine, "super") == ["replica", "origin", "replica", "origin", "origin"]
    finally:
        engine.dispose()


def test_a_role_that_may_not_skip_them_keeps_every_check_and_stores_the_same(plain_role_engine, database_url):
    assert upload_everything(plain_role_engine, "plain") == ["origin"] * 5


def test_a_role_granted_the_parameter_skips_them(plain_role_engine, database_url):
    owner = make_engine(database_url)
    with owner.begin() as connection:  # GRANT SET ON PARAMETER: PostgreSQL 15, the version the project runs
        connection.execute(text(f"GRANT SET ON PARAMETER session_replication_role TO {PLAIN_ROLE}"))
    owner.dispose()
    assert upload_everything(plain_role_engine, "granted") == ["replica", "origin", "replica", "origin", "origin"]
