"""The board a new user meets: `bonnieboard ingest` of sample_data/manifest (what `make samples` runs for
`make run`) into a fresh SQLite file, served by a real `bonnieboard serve`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.browser_support import running_server
from tests.helpers import run_cli

SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"
# The runs as `make samples` numbers them (sample_data/manifest): the study made by `bonnieboard-runner sweep`
# first (20 runs), then the page-cache sweep's 18.
STUDY_IDS = list(range(1, 21))
SWEEP_IDS = list(range(21, 39))
SWEEP_RUNS = ",".join(map(str, SWEEP_IDS))
SWEEP_COMPARE = f"/compare?runs={SWEEP_RUNS}&group=fs,dev,mode"


def load_samples(tmp_path: Path) -> Path:
    """The sample data in tmp_path/cli.db, loaded as `make samples` loads it; returns the database file."""
    loaded = run_cli(
        tmp_path, "ingest", "--if-empty", "--tag", "source=sample_data", "--manifest", SAMPLE_DATA / "manifest"
    )
    assert loaded.returncode == 0, loaded.stderr
    return tmp_path / "cli.db"


@contextmanager
def sample_board(tmp_path: Path) -> Iterator[str]:
    """A served board holding the sample data; yields its base URL."""
    with running_server(load_samples(tmp_path)) as base_url:
        yield base_url
