"""Alembic environment: the URL comes from app.config (or the caller), the schema from app.store.models."""

from alembic import context

from app.config import get_settings
from app.store.db import make_engine
from app.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or get_settings().database_url
    engine = make_engine(url)
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite can barely ALTER; batch mode rebuilds tables instead.
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    if connection.in_transaction():
        connection.commit()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; run `bonnieboard migrate`")
run_migrations()
