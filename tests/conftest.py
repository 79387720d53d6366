"""Fixtures: a migrated database on a temporary SQLite file, a session on it, and an app client."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app import config, db
from app.main import create_app
from app.migrate import upgrade

DATA_DIR = Path(__file__).parent / "data"
CORPUS_DIR = DATA_DIR / "corpus"


def _reset_caches() -> None:
    config.get_settings.cache_clear()
    if db.get_engine.cache_info().currsize:
        db.get_engine().dispose()
    db.get_engine.cache_clear()
    db.get_sessionmaker.cache_clear()


@pytest.fixture
def database_url(tmp_path, monkeypatch) -> Iterator[str]:
    """A fresh, migrated database that the app's settings point at."""
    url = f"sqlite:///{tmp_path / 'bonnieboard.db'}"
    monkeypatch.setenv("BONNIEBOARD_DATABASE_URL", url)
    for name in ("API_TOKEN", "PRIVATE_READS", "MAX_LINE_BYTES", "MAX_UPLOAD_BYTES"):
        monkeypatch.delenv(f"BONNIEBOARD_{name}", raising=False)
    _reset_caches()
    upgrade(url)
    yield url
    _reset_caches()


@pytest.fixture
def session(database_url) -> Iterator[Session]:
    with db.get_sessionmaker()() as session:
        yield session


@pytest.fixture
def client(database_url) -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


def set_setting(monkeypatch, name: str, value: str) -> None:
    """Change one BONNIEBOARD_ setting for the rest of a test."""
    monkeypatch.setenv(f"BONNIEBOARD_{name}", value)
    config.get_settings.cache_clear()
