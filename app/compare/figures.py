"""A run as a comparison reads it: identity, bonnie++ parameters (its setup) and twelve results.

`figures_of` turns a row of `app.store.runs.COMPARE_COLUMNS` into a `RunFigures`, selecting every cell by
its column name (app/columns.py), never by position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.bonnie import TESTS, Result
from app.columns import (
    FILE_TEST_COLUMNS,
    IDENTITY_COLUMNS,
    LIMITERS,
    RAM_BYTES,
    RESULT_PARTS,
    SETUP_COLUMNS,
    result_column,
)
from app.units import mib_of_bytes


@dataclass(frozen=True, slots=True)
class RunSetup:
    """What bonnie++ was asked to do, and the machine's RAM when known: what makes runs comparable."""

    file_size_mib: int | None
    io_chunk_bytes: int | None
    file_test: tuple[Any, ...] | None  # (num_files, max_size, min_size, num_dirs, link), None without -n
    seek_count: int | None
    seek_procs: int | None
    concurrency: int | None
    ram_mib: int | None  # from the runner's document, or a `ram_mib` tag


NO_SETUP = RunSetup(None, None, None, None, None, None, None)


@dataclass(frozen=True, slots=True)
class RunFigures:
    """What a comparison needs of a run; `results` holds twelve Results in TESTS order."""

    id: int
    machine: str
    label: str | None
    tags: dict[str, str]
    format_version: str
    bonnie_version: str | None
    results: tuple[Result, ...]
    setup: RunSetup = NO_SETUP
    # The runner's own evidence of what limited a test, by test (limiters_of(line_facts(...)), taken out at ingest).
    limiters: dict[str, dict[str, str]] = field(default_factory=dict)


# Column names, in the order figures_of reads them; app.store.runs.COMPARE_COLUMNS selects exactly these.
RESULT_NAMES = tuple(tuple(result_column(test, part) for part in RESULT_PARTS) for test in TESTS)


class RowReader:
    """Reads rows whose columns are named `keys`: positions are looked up once, by name."""

    def __init__(self, keys: Sequence[str]):
        at = {key: index for index, key in enumerate(keys)}
        self.identity = [at[name] for name in IDENTITY_COLUMNS]
        self.setup = [at[name] for name in SETUP_COLUMNS]
        self.file_test = [at[name] for name in FILE_TEST_COLUMNS]
        self.ram = at.get(RAM_BYTES)
        self.limiters = at.get(LIMITERS)
        self.results = [[at[name] for name in names] for names in RESULT_NAMES]
        # Where a test's parts sit side by side in RESULT_PARTS order (as app.store.runs.COMPARE_COLUMNS puts
        # them), a slice reads them: the same cells, found by name, at a fraction of the cost.
        self.result_starts = [indexes[0] for indexes in self.results]
        self.sliceable = all(
            indexes == list(range(indexes[0], indexes[0] + len(RESULT_PARTS))) for indexes in self.results
        )

    def figures(self, row: Sequence[Any], tags: dict[str, str]) -> RunFigures:
        run_id, machine, label, format_version, bonnie_version = (row[i] for i in self.identity)
        file_size, chunk, seek_count, seek_procs, concurrency = (row[i] for i in self.setup)
        file_test = tuple(row[i] for i in self.file_test)
        ram_bytes = row[self.ram] if self.ram is not None else None
        setup = RunSetup(
            file_size_mib=file_size,
            io_chunk_bytes=chunk,
            file_test=file_test if file_test[0] is not None else None,
            seek_count=seek_count,
            seek_procs=seek_procs,
            concurrency=concurrency,
            ram_mib=ram_mib_of(ram_bytes, tags),
        )
        if self.sliceable:
            cells = tuple(row)
            width = len(RESULT_PARTS)
            results = tuple([Result._make(cells[at : at + width]) for at in self.result_starts])
        else:
            results = tuple([Result(*(row[i] for i in indexes)) for indexes in self.results])
        # Stored by ingest as limiters_of() made them (app.ingest.documents): read, never worked out from a document.
        limiters = (row[self.limiters] if self.limiters is not None else None) or {}
        return RunFigures(run_id, machine, label, tags, format_version, bonnie_version, results, setup, limiters)


def ram_mib_of(ram_bytes: Any, tags: dict[str, str]) -> int | None:
    """The machine's RAM: the runner's measurement, else a `ram_mib` tag (a whole number). A byte count past 63
    bits is no measurement; SQLite reads it back as a float, and the comparison's JSON cannot hold it."""
    if isinstance(ram_bytes, int) and 0 < ram_bytes < 2**63:
        return mib_of_bytes(ram_bytes)
    tagged = tags.get("ram_mib", "")
    return int(tagged) if tagged.isascii() and tagged.isdigit() and 0 < len(tagged) <= 12 else None


_READERS: dict[tuple[str, ...], RowReader] = {}


def figures_of(row: Any, tags: dict[str, str]) -> RunFigures:
    """A run as app.store.runs.runs_to_compare() reads it (a row with the columns named above) and its tags."""
    keys = row._fields
    reader = _READERS.get(keys)
    if reader is None:
        reader = _READERS[keys] = RowReader(keys)
    return reader.figures(row, tags)
