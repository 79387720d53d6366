"""Where the app's own files are: beside the package, never relative to the working directory.

In the repository (and an editable install) templates/, static/ and migrations/ sit beside app/;
a wheel puts them inside the package, as app/templates, app/static and app/migrations (pyproject.toml).
"""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    inside = PACKAGE / name
    return inside if inside.is_dir() else PACKAGE.parent / name


TEMPLATES_DIR = _data_dir("templates")
STATIC_DIR = _data_dir("static")
MIGRATIONS_DIR = _data_dir("migrations")
