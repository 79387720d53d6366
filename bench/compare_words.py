"""The words of the compare page's "The comparison in words" on the biggest comparisons: those open (outside a closed
<details>, a fold's <summary> included) and all of them, of the code in --code (this tree by default; another
checkout, e.g. main's, for a "before").

Usage: .venv/bin/python bench/compare_words.py [--code DIR]

The sample data (sample_data/manifest, as `make samples` loads it) into a temporary SQLite file by that code's
`python -m app ingest`, then 50 configurations of 2 runs each (one machine each, fields of the contract's 1.98
line) posted to /api/runs, and each comparison's page from a TestClient of that code's app. The section is the
<section class="summary"> of templates/_compare.html: its heading, its words, and the legend under them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGURATIONS = 50
COMPARISONS = {
    "every sample run alone (100 configurations, single runs)": "/compare?runs={every}&group=none",
    "the sample sweep by fs,dev,mode (6 configurations of 3 runs)": "/compare?runs={sweep}&group=fs,dev,mode",
    "the sample study by config (2 configurations of 10 runs)": "/compare?runs={study}&group=config",
    f"{CONFIGURATIONS} configurations of 2 runs, made": "/compare?runs={made}",
}


class SectionWords(HTMLParser):
    """The words of <section class="summary">: all, and those a reader sees before opening anything."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.closed = 0
        self.in_summary = False
        self.open_words = 0
        self.all_words = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "section" and (self.depth or "summary" in (named.get("class") or "").split()):
            self.depth += 1
        elif self.depth and tag == "details":
            self.closed += "open" not in named
        elif self.depth and tag == "summary":
            self.in_summary = True

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag == "section":
            self.depth -= 1
        elif self.depth and tag == "details":
            self.closed = max(self.closed - 1, 0)
        elif self.depth and tag == "summary":
            self.in_summary = False

    def handle_data(self, data: str) -> None:
        if not self.depth:
            return
        count = len(data.split())
        self.all_words += count
        if not self.closed or (self.in_summary and self.closed == 1):
            self.open_words += count


def ingest_samples(code: Path, database: Path) -> None:
    env = os.environ | {"PYTHONPATH": str(code), "BONNIEBOARD_DATABASE_URL": f"sqlite:///{database}"}
    manifest = code / "sample_data" / "manifest"
    args = ["ingest", "--if-empty", "--tag", "source=sample_data", "--manifest", str(manifest)]
    subprocess.run([sys.executable, "-m", "app", *args], check=True, capture_output=True, env=env, cwd=code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose app renders the page")
    code = parser.parse_args().code.resolve()
    database = Path(tempfile.mkdtemp(prefix="words-")) / "words.db"
    ingest_samples(code, database)
    os.environ |= {"BONNIEBOARD_DATABASE_URL": f"sqlite:///{database}", "BONNIEBOARD_ALLOWED_HOSTS": "testserver"}
    sys.path[:0] = [str(code), str(ROOT)]
    from fastapi.testclient import TestClient

    from app.main import create_app
    from tests.compare_data import sweep_line

    with TestClient(create_app()) as client:
        lines = [
            sweep_line(f"box{i:02d}", 100_000 + 997 * i + 211 * r, 1_000 + 7 * i + 13 * r)
            for i in range(50)
            for r in (0, 1)
        ]
        made = client.post("/api/runs", content="\n".join(lines) + "\n", headers={"Content-Type": "text/csv"})
        ids = {
            "every": range(1, 101),
            "sweep": range(21, 39),
            "study": range(1, 21),
            "made": made.json()["created"],
        }
        ids_text = {key: ",".join(map(str, value)) for key, value in ids.items()}
        print(f"code: {code}\n\n| comparison | open words | all words |\n|---|---:|---:|")
        for name, url in COMPARISONS.items():
            response = client.get(url.format(**ids_text))
            response.raise_for_status()
            found = SectionWords()
            found.feed(response.text)
            print(f"| {name} | {found.open_words} | {found.all_words} |")


if __name__ == "__main__":
    main()
