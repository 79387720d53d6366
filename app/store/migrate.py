"""Bring a database to the newest schema with Alembic (migrations/ beside the package)."""

from alembic import command
from alembic.config import Config

from app.paths import MIGRATIONS_DIR


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str) -> None:
    command.upgrade(alembic_config(database_url), "head")
