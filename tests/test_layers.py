"""The packages' import rules are import-linter's contracts in pyproject.toml ([tool.importlinter]), checked
by `make lint`. Here: that they hold on app/, and that each one catches what it is for, a relative import
and a function's local import included (a scratch copy of app/ with one import added must break it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the app/ under `root`, with the contracts of its pyproject.toml: PYTHONPATH puts that app
    first, before the editable install's."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# (module file, the import added to it, what lint-imports must say)
BREAKS = [
    ("compare/grouping.py", "from ..web import urls", "app.compare is not allowed to import app.web"),
    ("compare/grouping.py", "from ..ingest import parsing", "app.compare is not allowed to import app.ingest"),
    ("ingest/parsing.py", "from ..compare import stats", "app.ingest is not allowed to import app.compare"),
    ("store/generation.py", "from ..ingest import parsing", "app.store is not allowed to import app.ingest"),
    ("store/generation.py", "from app.compare import stats", "app.store is not allowed to import app.compare"),
    ("history/__init__.py", "from ..web import urls", "app.history is not allowed to import app.web"),
    ("compare/stats.py", "from ..history import x", "app.compare is not allowed to import app.history"),
    ("bonnie.py", "from . import config", "app.bonnie is not allowed to import app.config"),
    ("tags.py", "from .store import db", "app.tags is not allowed to import app.store"),
    (
        "compare/stats.py",
        "def _reads():\n    from ..store import db\n\n    return db",
        "app.compare is not allowed to import app.store",
    ),
]


@pytest.mark.parametrize(("module", "added", "said"), BREAKS, ids=[f"{m}: {a.splitlines()[-1]}" for m, a, _ in BREAKS])
def test_an_import_against_the_layers_breaks_a_contract(tmp_path, module, added, said):
    shutil.copytree(ROOT / "app", tmp_path / "app", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    if added.endswith(" x"):  # a module that does not exist yet: the new file is the import's target
        (tmp_path / "app" / "history" / "x.py").write_text("")
    path = tmp_path / "app" / module
    path.write_text(path.read_text() + "\n\n" + added + "\n")

    result = _lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert said in result.stdout, result.stdout
