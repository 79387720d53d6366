"""Bring a database to the newest schema with Alembic (migrations/ beside the package)."""

from typing import Any

from alembic import command
from alembic.config import Config

from app.models import SQLITE_ONLY_INDEXES
from app.paths import MIGRATIONS_DIR


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str) -> None:
    command.upgrade(alembic_config(database_url), "head")


def autogenerate_options(dialect_name: str) -> dict[str, Any]:
    """MigrationContext options for comparing a database of this dialect with app.models: Alembic does not read
    Index.ddl_if (sqlalchemy/alembic#1491), so the SQLite-only indexes are left out elsewhere."""

    def include_object(item: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
        return not (type_ == "index" and name in SQLITE_ONLY_INDEXES and dialect_name != "sqlite")

    return {"include_object": include_object}
