"""The one compiled module, app.ingest._bulk198: plain format-1.98 lines into SQLite at C speed
(docs/decisions.md, "Ingest within 2x of sqlite3's .import").
Everything else about the package is in pyproject.toml. It links the system's SQLite (the one CPython's
sqlite3 module uses; app/ingest/sqlite_bulk.py checks that) and libb2 for BLAKE2b: Debian's libsqlite3-dev, libb2-dev."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "app.ingest._bulk198",
            sources=["app/ingest/_bulk198.c"],
            libraries=["sqlite3", "b2"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
        )
    ]
)
