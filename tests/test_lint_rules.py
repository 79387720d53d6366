"""`make lint`'s ruff rules refuse a handler that swallows an exception (pyproject.toml, [tool.ruff.lint]): a test
that catches everything and carries on passes whatever the code does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).with_name("ruff")

SWALLOWED = {
    "continue": "for case in cases:\n    try:\n        check(case)\n    except Exception:\n        continue\n",
    "pass": "try:\n    check(case)\nexcept Exception:\n    pass\n",
    "bare": "try:\n    check(case)\nexcept:  # noqa: E722\n    pass\n",
    "kept": "try:\n    check(case)\nexcept Exception as exc:\n    problems.append(exc)\n",
}


@pytest.mark.parametrize("shape", SWALLOWED)
def test_a_handler_that_swallows_an_exception_fails_lint(tmp_path, shape):
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_cases(cases, case, check, problems):\n" + _indent(SWALLOWED[shape]))
    result = _ruff(probe)
    assert result.returncode == 1, result.stdout
    assert any(code in result.stdout for code in ("BLE001", "S110", "S112")), result.stdout


def test_a_narrow_handler_passes(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "def test_read(paths):\n    for path in paths:\n        try:\n            path.read_bytes()\n"
        "        except OSError:  # gone since it was listed\n            continue\n"
    )
    result = _ruff(probe)
    assert result.returncode == 0, result.stdout


def _ruff(probe: Path) -> subprocess.CompletedProcess[str]:
    command = [str(RUFF), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(probe)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def _indent(code: str) -> str:
    return "".join(f"    {line}\n" for line in code.splitlines())
