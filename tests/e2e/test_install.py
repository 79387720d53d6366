"""`pip install .` works: the wheel holds the templates, static files and migrations
and every module of app/ (and the compiled app.ingest._plain_lines), and an installed bonnieboard migrates a database,
serves a page and stores an upload from a directory with no source in it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.helpers import LINE_198
from tests.live_server import CLIENT_SSL, free_port

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it

ROOT = Path(__file__).resolve().parents[2]
# What the wheel is built from: the Dockerfile's build stage copies the same.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "app", "templates", "static", "migrations")


def build_wheel(folder: Path) -> Path:
    """The wheel of a clean copy of the source (no build/ or egg-info left in the worktree), built without a word
    from setuptools: its warnings (a package left out of `packages`, 40 lines) read as errors to whoever installs."""
    source = folder / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            # Not the editable install's compiled module: the wheel must build its own.
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = folder / "dist"
    # Without build isolation: the test extra holds setuptools and wheel, so this works offline.
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert built.stdout + built.stderr == "", built.stdout + built.stderr
    (wheel,) = dist.glob("bonnieboard-*.whl")
    return wheel


def test_the_image_builds_its_wheel_from_the_same_sources():
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", (ROOT / "Dockerfile").read_text(), re.M)
    assert set(SOURCES) <= {name for line in copied for name in line.split()}, copied


def test_the_wheel_says_its_licences_and_carries_their_texts(tmp_path):
    wheel = zipfile.ZipFile(build_wheel(tmp_path))
    names = set(wheel.namelist())
    metadata = wheel.read("bonnieboard-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: MIT AND Apache-2.0 AND 0BSD AND CC0-1.0" in metadata.splitlines()
    licences = {name for name in names if name.startswith("bonnieboard-0.1.0.dist-info/licenses/")}
    assert licences == {
        "bonnieboard-0.1.0.dist-info/licenses/LICENSE",
        "bonnieboard-0.1.0.dist-info/licenses/static/swagger-ui-5.35.0.LICENSE",
        "bonnieboard-0.1.0.dist-info/licenses/app/ingest/blake2/COPYING",
    }
    assert wheel.read("bonnieboard-0.1.0.dist-info/licenses/LICENSE").startswith(b"MIT License")
    # The C sources are the sdist's; the wheel has the module built from them.
    assert not [name for name in names if name.endswith((".c", ".h"))], sorted(names)


def test_the_wheel_installs_migrates_and_serves_from_anywhere(tmp_path):
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {f"app/{p.relative_to(ROOT / 'app').as_posix()}" for p in (ROOT / "app").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    assert any(name.startswith("app/ingest/_plain_lines.") and name.endswith(".so") for name in names), sorted(names)
    for folder in ("templates", "static", "migrations"):
        shipped = {f"app/{p.relative_to(ROOT).as_posix()}" for p in (ROOT / folder).rglob("*") if p.is_file()}
        shipped = {name for name in shipped if "__pycache__" not in name}
        assert shipped <= names, sorted(shipped - names)

    # A fresh venv; the dependencies come from the test venv's site-packages (a .pth, so this runs
    # offline), but not its editable bonnieboard: that .pth file is not read from an added path.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site_packages / "test-venv-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    bonnieboard = venv / "bin" / "bonnieboard"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "BONNIEBOARD_DATABASE_URL": "sqlite:///board.db",
        "HOME": str(tmp_path),
    }
    where = subprocess.run(
        [python, "-c", "import app; print(app.__file__)"],
        check=False,
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(site_packages)), where.stdout + where.stderr  # not the worktree's app/
    version = subprocess.run(
        [bonnieboard, "--version"], check=False, cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert version.stdout.strip() == "bonnieboard 0.1.0 (ingest: compiled)", version.stderr
    migrated = subprocess.run(
        [bonnieboard, "migrate"], check=False, cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert migrated.returncode == 0 and (elsewhere / "board.db").exists(), migrated.stderr

    port = free_port()
    server = subprocess.Popen(
        [bonnieboard, "serve", "--port", str(port)],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=1, verify=CLIENT_SSL) as http:
            for _ in range(300):
                try:
                    if http.get("/api/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert server.poll() is None, server.stdout.read().decode(errors="replace")
                time.sleep(0.1)
        page = httpx.get(f"{url}/upload", verify=CLIENT_SSL)
        assert page.status_code == 200 and 'class="upload"' in page.text
        css = httpx.get(f"{url}/static/app.css", verify=CLIENT_SSL)
        assert css.status_code == 200 and len(css.content) > 100
        # The compiled ingest path (app/ingest/_plain_lines.c) works from the wheel: it takes this plain line.
        compiled = subprocess.run(
            [
                python,
                "-c",
                "from app.ingest import _plain_lines; import sys; print(_plain_lines.scan(sys.stdin.buffer.read(), 4096).plain_count)",
            ],
            input=LINE_198.encode(),
            cwd=elsewhere,
            env=env,
            capture_output=True,
            check=False,
        )
        assert compiled.stdout.strip() == b"1", compiled.stderr
        upload = httpx.post(
            f"{url}/api/runs", content=LINE_198, headers={"Content-Type": "text/csv"}, verify=CLIENT_SSL
        )
        assert upload.status_code == 201 and len(upload.json()["created"]) == 1, upload.text
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert "parser path" not in server.stdout.read().decode(
        errors="replace"
    )  # app.ingest.sqlite_bulk's fallback warning
