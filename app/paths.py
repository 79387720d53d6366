"""Where the app's own files are: beside the package, never relative to the working directory."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = ROOT / "templates"
STATIC_DIR = ROOT / "static"
MIGRATIONS_DIR = ROOT / "migrations"
