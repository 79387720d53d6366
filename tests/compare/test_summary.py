"""The comparison in words on /compare, folded per family of tests: on the biggest comparisons what is open (outside
closed <details>) stays at most 200 words, each fold's <summary> says in one line what it holds, and every item the
API's one paragraph says is in a fold, its figures said as the answer says them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from app.bonnie import FAMILIES, TITLES
from app.main import create_app
from tests.compare_data import sweep_line
from tests.helpers import post_csv, reset_caches
from tests.sample_board import STUDY_IDS, SWEEP_COMPARE, load_samples

MAX_OPEN_WORDS = 200
CONFIGURATIONS_MADE = 50
# Every run of the sample data alone (the request's MAX_RUNS of them, single runs), the sweep by its tags, the study.
SAMPLE_COMPARISONS = (
    f"/compare?runs={','.join(map(str, range(1, 101)))}&group=none",
    SWEEP_COMPARE,
    f"/compare?runs={','.join(map(str, STUDY_IDS))}&group=config",
)
INTERACTIVE = {"a", "button", "input", "select", "textarea", "details"}


@dataclass
class Fold:
    line: str = ""
    sentences: list[str] = field(default_factory=list)


class Words(HTMLParser):
    """The words of <section class="summary">: those open (outside a closed <details>, its <summary> included), the
    lead paragraph's, and each fold's line and sentences; and any interactive element inside a <summary>."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # of <section> elements, inside the summary's
        self.closed = 0  # closed <details> around the text
        self.in_summary = False
        self.tag = ""
        self.open_words: list[str] = []
        self.lead: list[str] = []
        self.folds: list[Fold] = []
        self.nested: list[str] = []  # interactive elements inside a <summary>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "section" and (self.depth or "summary" in (named.get("class") or "").split()):
            self.depth += 1
        if not self.depth:
            return
        if self.in_summary and tag in INTERACTIVE:
            self.nested.append(tag)
        if tag == "details":
            self.closed += "open" not in named
            self.folds.append(Fold())
        self.in_summary = self.in_summary or tag == "summary"
        self.tag = f"#{named['id']}" if named.get("id") else tag

    def handle_endtag(self, tag: str) -> None:
        if not self.depth:
            return
        if tag == "section":
            self.depth -= 1
        elif tag == "details":
            self.closed = max(self.closed - 1, 0)
        elif tag == "summary":
            self.in_summary = False

    def handle_data(self, data: str) -> None:
        if not self.depth:
            return
        words = data.split()
        # a closed <details> shows its <summary>, nothing else of it
        if not self.closed or (self.in_summary and self.closed == 1):
            self.open_words += words
        if self.in_summary:
            self.folds[-1].line += data
        elif self.closed and self.tag == "p" and data.strip():
            self.folds[-1].sentences.append(data)
        elif self.tag == "#summary":
            self.lead += words


def words_of(html: str) -> Words:
    found = Words()
    found.feed(html)
    assert found.depth == 0 and found.open_words, "the page has no comparison in words"
    return found


# A figure as the API says it (+20.0 %) or the page (×1.20 faster, ×1.05): what the check of items compares around.
FIGURE = re.compile(r"×[\d,]+(?:\.\d+)?(?: (?:faster|slower|more|less)\b)?|[+−]\d[\d,]*\.\d %")
PER_WORK = "CPU per unit of work: "
LEFT_TO_CHARTS = r" \d+ more configurations are in the charts and the table\.$"


# What a list of tests shares and the page says per family: the highest %CPU, the options to raise, which of the
# CPU-bound tests are unchanged (said of each test either way).
PER_FAMILY = (
    (r"\(\d+ % CPU\)", "(% CPU)"),
    (r"raise .*$", "raise"),
    (r" \([^()]* unchanged\)$", ""),
    (" unchanged and", ""),
)


def said_of_tests(item: str) -> list[tuple[str, str]]:
    """(test title, what is said of it) of an item, one per test of a list ("seq. stat and random stat +++++ ...")."""
    titles, rest = [], item
    while found := next((t for t in sorted(TITLES.values(), key=len, reverse=True) if rest.startswith(t)), None):
        titles.append(found)
        rest = rest[len(found) :]
        joint = next((j for j in (", ", " and ") if rest.startswith(j)), None)
        if joint is None or not any(rest[len(joint) :].startswith(t) for t in TITLES.values()):
            break
        rest = rest[len(joint) :]
    for pattern, replacement in PER_FAMILY:
        rest = re.sub(pattern, replacement, rest)
    return [(title, rest) for title in titles] or [("", rest)]


def items(body: str) -> list[tuple[str, str]]:
    """A sentence's items, per test, with their figures blanked; CPU per unit of work named once per family on
    the page."""
    parts = [FIGURE.sub("#", item).removeprefix(PER_WORK) for item in body.removesuffix(".").split("; ")]
    return [said for part in parts for said in said_of_tests(part)]


def api_items(api: dict) -> Counter:
    """(configuration, item) of each configuration's sentence in the API's one paragraph."""
    names = {c["id"]: c["name"] for c in api["configurations"]}
    base = names[api["baseline_configuration"]]
    heads = [f"{names[c['id']]} vs {base}: " for c in api["configurations"] if c["id"] != api["baseline_configuration"]]
    text, found = re.sub(LEFT_TO_CHARTS, "", api["summary"]), Counter()
    starts = [text.index(head) for head in heads if head in text]
    for at, end in zip(starts, [*starts[1:], None], strict=True):
        head = next(h for h in heads if text.startswith(h, at))
        sentence = text[at + len(head) : end].strip()
        found.update((head, item) for item in items(sentence))
    return found


def page_items(words: Words, api: dict) -> Counter:
    names = {c["id"]: c["name"] for c in api["configurations"]}
    base = names[api["baseline_configuration"]]
    heads = [f"{name} vs {base}: " for name in names.values()]
    found: Counter = Counter()
    for fold in words.folds:
        for sentence in fold.sentences:
            head = max((h for h in heads if sentence.startswith(h)), key=len)
            found.update((head, item) for item in items(sentence.removeprefix(head)))
    return found


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Iterator[tuple[TestClient, list[str]]]:
    """A client on the sample data and, after it, 50 configurations of 2 runs each (one machine each): the
    comparisons to check."""
    database = load_samples(tmp_path_factory.mktemp("words"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BONNIEBOARD_DATABASE_URL", f"sqlite:///{database}")
        # settings and the engine an earlier test of this process may have kept are another database's
        reset_caches()
        with TestClient(create_app()) as client:
            lines = [
                sweep_line(f"box{i:02d}", 100_000 + 997 * i + 211 * run, 1_000 + 7 * i + 13 * run)
                for i in range(CONFIGURATIONS_MADE)
                for run in range(2)
            ]
            created = post_csv(client, "\n".join(lines) + "\n").json()["created"]
            assert len(created) == 2 * CONFIGURATIONS_MADE
            made = f"/compare?runs={','.join(map(str, created))}"
            yield client, [*SAMPLE_COMPARISONS, made]
        reset_caches()


def test_what_is_open_stays_under_200_words_on_the_biggest_comparisons(board):
    client, urls = board
    counts = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        words = words_of(response.text)
        counts[url[:60]] = len(words.open_words)
        assert len(words.open_words) <= MAX_OPEN_WORDS, (url, " ".join(words.open_words))
        # a fold per family that has something to say, each with its one-line summary and no control inside it
        titles = [fold.line.split(":")[0] for fold in words.folds]
        assert titles and set(titles) <= {family.title for family in FAMILIES}, titles
        assert all("\n" not in fold.line.strip() and fold.sentences for fold in words.folds)
        assert words.nested == []
    configurations = len(client.get(f"/api/compare?{urls[-1].split('?', 1)[1]}").json()["configurations"])
    assert configurations == CONFIGURATIONS_MADE
    print(counts)


def test_every_item_of_the_apis_paragraph_is_in_a_fold(board):
    client, urls = board
    for url in urls:
        words = words_of(client.get(url).text)
        api = client.get(f"/api/compare?{url.split('?', 1)[1]}").json()
        said = api_items(api)
        assert said, url
        assert page_items(words, api) == said, url
        # what frames the items (single runs, configurations left to the charts) is open, before the folds
        for sentence in re.split(r"(?<=\.) (?=[A-Z0-9])", api["summary"]):
            if " vs " not in sentence:
                assert sentence in " ".join(words.lead), sentence


def test_the_page_rounds_figures_as_its_answer_does(board):
    client, urls = board
    folded = " ".join(s for fold in words_of(client.get(SWEEP_COMPARE).text).folds for s in fold.sentences)
    assert "block write ×3.06 faster (cannot tell with 3 runs a side" in folded
    assert "per-char write ×1.59 more CPU-s/MiB (95 % CI ×1.43 to ×1.77, worse)" in folded
    assert not re.search(r"[+−]\d+\.\d %", folded), "a percentage the answer would say as a factor"
    # the API's paragraph keeps its percentages to a tenth
    api = client.get(f"/api/compare?{SWEEP_COMPARE.split('?', 1)[1]}").json()
    assert "block write +205.7 % (cannot tell with 3 runs a side" in api["summary"]
