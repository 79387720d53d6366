"""What several test modules share: real bonnie++ lines, upload and form helpers, the test data's paths.

Test modules import from here, never from each other (a test module imported by another runs its
module-level code twice and couples unrelated tests)."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from app import config as app_config
from app.compare import page as comparisons
from app.store import db
from app.web import auth
from tests import zygote

DATA_DIR = Path(__file__).parent / "data"
CORPUS_DIR = DATA_DIR / "corpus"

# ---- Real lines, one per format (docs/bonnie-csv-format.md) ----

LINE_198 = "1.98,2.00a,vm,1,1795352513,512M,,8192,5,869,96,420469,81,+++++,+++,1443,98,+++++,+++,+++++,+++,16,,,,,16795,94,+++++,+++,+++++,+++,23036,95,+++++,+++,+++++,+++,18213us,4307us,1098us,10287us,117us,7618us,10730us,5072us,2346us,12162us,214us,6909us"
LINE_103 = (
    "mindpipe,1G,3002,88,31164,60,13485,29,3035,84,32838,36,56.7,0,16,94,40,+++++,+++,15510,66,204,86,+++++,+++,906,83"
)
LINE_197 = "1.97,1.97,wifo3-02,1,1438369124,63G,,1842,89,347029,24,175829,17,3404,89,495890,20,447.9,11,16,,,,,7555,17,+++++,+++,18185,27,7097,12,+++++,+++,11216,21,8735us,16764us,79061us,18280us,32499us,228ms,349ms,127us,12376us,382ms,14us,490ms"
# docs/api-contract.md's example line.
CONTRACT_LINE = "1.98,2.00a,raid5_chunk64_ext3,1,1795352513,512M,,8192,5,869,96,420469,81,+++++,+++,1443,98,+++++,+++,+++++,+++,16,,,,,16795,94,+++++,+++,+++++,+++,23036,95,+++++,+++,+++++,+++,18213us,4307us,1098us,10287us,117us,7618us,10730us,5072us,2346us,12162us,214us,6909us"

HOSTILE = "<img src=x onerror=alert(1)>"


def with_field(line: str, index: int, value: str) -> str:
    """`line` with its field `index` (0-based) replaced by `value`."""
    fields = line.split(",")
    fields[index] = value
    return ",".join(fields)


def distinct_lines(prefix: str, count: int) -> list[str]:
    """`count` real-looking 1.98 lines, distinct from each other and from any other prefix's."""
    base = with_field(LINE_198, 2, prefix)
    return [with_field(base, 4, str(1_000_000_000 + i)) for i in range(count)]


# ---- The database and settings under test ----

DATABASES = ("sqlite", "postgresql")


def selected_databases(config) -> list[str]:
    """The databases `--db` names (tests/conftest.py adds the option)."""
    names = [name.strip() for name in config.getoption("--db").split(",") if name.strip()]
    unknown = set(names) - set(DATABASES)
    if unknown or not names:
        raise pytest.UsageError(f"--db takes {' and/or '.join(DATABASES)}, not {config.getoption('--db')!r}")
    return names


def reset_caches() -> None:
    """Forget the cached settings, engine and sessionmaker (after the environment changed), and the views the
    comparison cache re-makes after a write (they were another database's)."""
    comparisons.REWARM.forget()
    comparisons.REWARM.wait_idle(30)
    app_config.get_settings.cache_clear()
    if db.get_engine.cache_info().currsize:
        db.get_engine().dispose()
    db.get_engine.cache_clear()
    db.get_sessionmaker.cache_clear()


def stored_lines(database_url: str) -> Counter[str]:
    """Every stored run's raw line, with how often it is stored."""
    engine = create_engine(database_url, poolclass=NullPool)
    with engine.connect() as connection:
        lines = Counter(connection.execute(text("select raw_line from run")).scalars())
    engine.dispose()
    return lines


def set_setting(monkeypatch, name: str, value: str) -> None:
    """Change one BONNIEBOARD_ setting for the rest of a test."""
    monkeypatch.setenv(f"BONNIEBOARD_{name}", value)
    app_config.get_settings.cache_clear()


def create_token(session: Session, name: str) -> str:
    """A new API token's secret, committed."""
    secret = auth.create_token(session=session, name=name)
    session.commit()
    return secret


# ---- HTTP: the API's uploads and the pages' forms ----


def post_csv(client, text: str | bytes, **params: Any):
    """POST CSV text to /api/runs; keyword arguments become query parameters."""
    body = text.encode() if isinstance(text, str) else text
    return client.post("/api/runs", content=body, params=params, headers={"Content-Type": "text/csv"})


CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    match = CSRF_INPUT.search(html)
    assert match, "the page has no form with a CSRF token"
    return match.group(1)


def csrf_token(client) -> str:
    """The client's CSRF token (a first visit sets the session cookie that holds it)."""
    return csrf_of(client.get("/upload").text)  # the upload page has a form with it, tokens or not


def post_form(client, url: str, data: dict[str, Any] | None = None, **kwargs: Any):
    """POST a page's form as a browser does: with the CSRF token the session cookie goes with."""
    return client.post(url, data={**(data or {}), "csrf_token": csrf_token(client)}, **kwargs)


def sign_in(client, token: str, next_url: str = "/upload"):
    """Sign in through the login form with an API token."""
    return post_form(client, "/login", {"token": token, "next": next_url}, follow_redirects=False)


def kernel_marks(needs: str) -> list:
    """The marks of a test of loop devices, mounts or cgroups: the kernel's, shared by every test process, so
    `make test` runs these tests (marker `root`) in a process of their own, one at a time; root-only (make
    test-quick leaves them out). `needs` says what root is needed for."""
    return [pytest.mark.skipif(os.geteuid() != 0, reason=f"needs root: {needs}"), pytest.mark.root]


def run_cli(tmp_path, *args, env: dict[str, str] | None = None, database_url: str | None = None):
    """`bonnieboard ARGS` in tmp_path, as a user runs it (forked by the zygote, tests/zygote.py), on
    `database_url` (default: a SQLite file in tmp_path); `env`: settings of its own on top of the test run's."""
    url = database_url or f"sqlite:///{tmp_path / 'cli.db'}"
    return zygote.run(list(args), env=os.environ | (env or {}) | {"BONNIEBOARD_DATABASE_URL": url}, cwd=tmp_path)
