"""The one compiled module, app.ingest._plain_lines: the plain lines of every format bonnieboard reads (1.98, 1.97,
1.96, 1.93c and 1.03) checked, hashed and converted at C speed, inserted into SQLite or written as PostgreSQL's COPY
text (docs/decisions.md, "Ingest within 2x of sqlite3's .import").
Everything else about the package is in pyproject.toml.

Optional (docs/decisions.md, "The compiled ingest path is optional"): where it cannot be built (no C compiler or
no Python headers), the install goes on without it and uploads take the Python parser's path, which stores the
same rows; `bonnieboard --version` and /api/health say which path is active. It needs a C compiler and Python's
headers only (Debian: gcc, python3-dev): BLAKE2b is the reference code in app/ingest/blake2/, and SQLite is
found at run time in the library CPython's sqlite3 module runs (app/ingest/sqlite_api.h), never linked."""

import sys

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "app.ingest._plain_lines",
            sources=["app/ingest/_plain_lines.c", "app/ingest/blake2/blake2b-ref.c"],
            depends=["app/ingest/_columns.h", "app/ingest/sqlite_api.h", "app/ingest/blake2/blake2.h", "app/ingest/blake2/blake2-impl.h"],
            # dlopen and dlsym live in libdl before glibc 2.34 (a manylinux2014 system's 2.17 included)
            libraries=["dl"] if sys.platform.startswith("linux") else [],
            extra_compile_args=[
                "-O2",
                "-fvisibility=hidden",  # only PyInit__plain_lines: the BLAKE2 functions stay this module's own
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
                "-Wno-missing-field-initializers",
            ],
            optional=True,
        )
    ]
)
