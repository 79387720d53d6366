"""The dependencies: pyproject.toml declares every package the app imports, as ranges; the hashed locks
(requirements.lock for the app, -bench and -test for `make run` and `make test`) hold a version of each within
its range and agree with each other; the Dockerfile and the Makefile install from them, then bonnieboard itself
without dependencies."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
LOCKS = {"": "requirements.lock", "bench": "requirements-bench.lock", "test": "requirements-test.lock"}


def locked(name: str) -> dict[str, str]:
    """{package: version} of a lock, every entry checked to carry at least one sha256 hash."""
    text = (ROOT / name).read_text()
    entries = re.findall(
        r"^([A-Za-z0-9._-]+)==([^\s;\\]+)[^\n]*\\\n((?:\s+--hash=sha256:[0-9a-f]{64}.*\n?)+)", text, re.M
    )
    pinned = re.findall(r"^[A-Za-z0-9._-]+==", text, re.M)
    assert len(entries) == len(pinned) > 0, f"{name}: an entry without a hash"
    assert not re.search(r"^(-e|bonnieboard\b|.* @ )", text, re.M), f"{name} must not hold the project or a URL"
    return {canonicalize_name(package): version for package, version, _ in entries}


def requirements(extra: str) -> list[Requirement]:
    """What pyproject.toml asks for with this extra ('' for none), the project's own extras followed."""
    found = [Requirement(line) for line in PYPROJECT["dependencies"]]
    pending = [extra] if extra else []
    while pending:
        for line in PYPROJECT["optional-dependencies"][pending.pop()]:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) == "bonnieboard":
                pending += sorted(requirement.extras)
            else:
                found.append(requirement)
    return found


@pytest.mark.parametrize("extra", LOCKS)
def test_each_lock_holds_every_dependency_within_its_range(extra):
    lock = locked(LOCKS[extra])
    for requirement in requirements(extra):
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{LOCKS[extra]} lacks {requirement}"
        assert requirement.specifier.contains(lock[name], prereleases=True), f"{LOCKS[extra]}: {name}=={lock[name]}"
        if requirement.extras == {"binary"}:  # psycopg[binary]: its compiled half is locked too
            assert f"{name}-binary" in lock


def test_the_locks_agree_on_every_package_they_share():
    """Each lock holds the one before it whole: `make run` and `make test` run the image's versions."""
    app, bench, test = (locked(name) for name in LOCKS.values())
    for smaller, larger, names in ((app, bench, "app/bench"), (bench, test, "bench/test")):
        differing = {
            package: (version, larger.get(package))
            for package, version in smaller.items()
            if larger.get(package) != version
        }
        assert not differing, f"{names}: {differing}"


def imported_top_level(directory: Path) -> set[str]:
    """The top-level names of every import in the .py files under directory (relative imports left out)."""
    names = set()
    for path in directory.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_pyproject_declares_every_package_the_app_imports():
    declared = {canonicalize_name(requirement.name) for requirement in requirements("")}
    distributions = packages_distributions()
    third_party = sorted(imported_top_level(ROOT / "app") - set(sys.stdlib_module_names) - {"app"})
    assert {"starlette", "h11", "markupsafe", "fastapi"} <= set(third_party)  # the walk found the imports
    undeclared = [
        module
        for module in third_party
        if not {canonicalize_name(d) for d in distributions.get(module, [module])} & declared
    ]
    assert not undeclared, f"imported by app/ but not in pyproject.toml's dependencies: {undeclared}"
    for requirement in requirements(""):  # ranges, not pins: the lock pins
        assert not any(spec.operator == "==" for spec in requirement.specifier), requirement


def test_the_image_make_and_ci_install_from_the_locks():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY requirements.lock" in dockerfile
    assert re.search(r"pip install [^\n]*--require-hashes -r /tmp/requirements\.lock", dockerfile)
    assert re.search(r"pip install [^\n]*--no-deps /dist/\*\.whl", dockerfile)
    makefile = (ROOT / "Makefile").read_text()
    for lock in ("requirements-bench.lock", "requirements-test.lock"):
        assert f"$(UV_INSTALL) --require-hashes -r {lock}\n\t$(UV_INSTALL) --no-deps -e ." in makefile
    assert re.search(r"^UV_INSTALL := \$\(BIN\)/uv pip install .*--python \$\(BIN\)/python", makefile, re.MULTILINE)
    assert "make test" in (ROOT / ".ci/run").read_text()  # CI installs through `make test`
