"""The packages follow the data flow, and these import rules keep them so (an ast walk of app/):

* ingest, compare and store never import web (HTTP is the outermost layer);
* store imports neither ingest nor compare (the database knows nothing of how rows are made or read);
* the catalog of tests, the limits, units, columns and errors import nothing of the app but each other;
* of compare, only the pages' orchestration (app/compare/page.py) reads the store: the rest is pure analysis.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"
LEAVES = ("app.bonnie", "app.limits", "app.units", "app.columns", "app.errors")


def _module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every app module `path` imports, at any depth of its code (a function's local import counts too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("app"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("app"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if _exists(name)}


def _exists(name: str) -> bool:
    path = APP.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists() or name == "app"


MODULES = {_module_name(path): _imports(path) for path in sorted(APP.rglob("*.py"))}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


RULES = [
    ("app.ingest", "app.web"),
    ("app.compare", "app.web"),
    ("app.store", "app.web"),
    ("app.store", "app.ingest"),
    ("app.store", "app.compare"),
]


@pytest.mark.parametrize(("importer", "forbidden"), RULES, ids=[f"{a}-not-{b}" for a, b in RULES])
def test_a_layer_never_imports_an_outer_one(importer, forbidden):
    broken = sorted(
        f"{module} imports {name}"
        for module, names in MODULES.items()
        if _in(module, importer)
        for name in names
        if _in(name, forbidden)
    )
    assert broken == []


@pytest.mark.parametrize("leaf", LEAVES)
def test_the_catalog_limits_units_columns_and_errors_import_nothing_else_of_the_app(leaf):
    assert MODULES[leaf] - {"app", *LEAVES} == set()


def test_only_the_comparison_pages_orchestration_reads_the_store():
    readers = sorted(
        module
        for module, names in MODULES.items()
        if _in(module, "app.compare") and any(_in(name, "app.store") for name in names)
    )
    assert readers == ["app.compare.page"]


def test_the_walk_sees_every_package_and_import():
    packages = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    assert {"ingest", "store", "compare", "web"} <= packages
    assert all(leaf in MODULES for leaf in LEAVES)
    # the walk finds imports at any depth: the app's entry point imports each layer
    assert {"app.web.routes.api", "app.config"} <= MODULES["app.main"]
    assert "app.store.db" in MODULES["app.compare.page"]
