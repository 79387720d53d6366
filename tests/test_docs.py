"""Docs stay honest: every setting is in README's table; every CSV column is in runner/README.md."""

from pathlib import Path

from app.config import Settings
from app.parsing import COLUMNS_198

ROOT = Path(__file__).resolve().parent.parent


def test_every_setting_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for name in Settings.model_fields:
        assert f"`BONNIEBOARD_{name.upper()}`" in readme, name


def test_every_csv_column_is_documented_for_the_runner():
    runner_readme = (ROOT / "runner" / "README.md").read_text()
    for column in COLUMNS_198:
        assert column in runner_readme, column
