"""Load on loopback against a real server (issue #5): 8 clients each uploading 1,000 distinct lines and 8
uploading one shared file, all at once. Exactly the distinct lines are stored, each once; every upload is
answered 201; reads keep answering meanwhile; SQLite never says "database is locked". Then uploads that
share lines in different orders (a deadlock on PostgreSQL before run inserts took turns). Bounded in time."""

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from tests.live_server import live_server
from tests.test_parsing import LINE_198, with_field

CLIENTS = 8
LINES_PER_UPLOAD = 1000
LOAD_TIMEOUT_S = 180
# Workers per database: SQLite serialises writers anyway (two show that processes contend safely);
# PostgreSQL is what several workers are for.
WORKERS = {"sqlite": 2, "postgresql": 4}


def distinct_lines(prefix: str, count: int) -> list[str]:
    """`count` real-looking 1.98 lines, distinct from each other and from any other prefix's."""
    base = with_field(LINE_198, 2, prefix)
    return [with_field(base, 4, str(1_000_000_000 + i)) for i in range(count)]


def stored_lines(database_url: str) -> Counter:
    engine = create_engine(database_url, poolclass=NullPool)
    with engine.connect() as connection:
        lines = Counter(connection.execute(text("select raw_line from run")).scalars())
    engine.dispose()
    return lines


def upload_all_at_once(base_url: str, bodies: list[str]) -> tuple[list[httpx.Response], list[int]]:
    """POST every body from its own thread, released together; GET /api/runs in a loop meanwhile."""
    start = threading.Barrier(len(bodies) + 1)
    done = threading.Event()
    read_statuses: list[int] = []

    def upload(body: str) -> httpx.Response:
        with httpx.Client(base_url=base_url, timeout=LOAD_TIMEOUT_S) as http:
            start.wait()
            return http.post("/api/runs", content=body, headers={"Content-Type": "text/csv"})

    def read_meanwhile() -> None:
        with httpx.Client(base_url=base_url, timeout=LOAD_TIMEOUT_S) as http:
            start.wait()
            while not done.is_set():
                read_statuses.append(http.get("/api/runs", params={"limit": 20}).status_code)

    with ThreadPoolExecutor(len(bodies) + 1) as pool:
        reader = pool.submit(read_meanwhile)
        uploads = [pool.submit(upload, body) for body in bodies]
        responses = [future.result() for future in uploads]
        done.set()
        reader.result()
    return responses, read_statuses


def test_concurrent_uploads_store_each_distinct_line_once(database_url, database_kind):
    own = [distinct_lines(f"load-client-{n}", LINES_PER_UPLOAD) for n in range(CLIENTS)]
    shared = distinct_lines("load-shared", LINES_PER_UPLOAD)
    bodies = ["\n".join(lines) + "\n" for lines in own] + ["\n".join(shared) + "\n"] * CLIENTS

    mixed = distinct_lines("load-mixed", 2 * LINES_PER_UPLOAD)
    orders = [mixed, mixed[::-1], mixed[LINES_PER_UPLOAD:] + mixed[:LINES_PER_UPLOAD], mixed[::2] + mixed[1::2]]

    began = time.monotonic()
    with live_server(database_url, workers=WORKERS[database_kind]) as server:
        responses, read_statuses = upload_all_at_once(server.url, bodies)
        expected_after_load = stored_lines(database_url)
        mixed_responses, _ = upload_all_at_once(server.url, ["\n".join(lines) for lines in orders])
        log = server.log()
    elapsed = time.monotonic() - began

    assert [r.status_code for r in responses] == [201] * len(bodies), [r.text[:300] for r in responses if r.status_code != 201]
    assert "database is locked" not in log and "Traceback" not in log, log[-3000:]
    assert read_statuses and set(read_statuses) == {200}
    outcomes = [r.json() for r in responses]
    for outcome in outcomes[:CLIENTS]:
        assert len(outcome["created"]) == LINES_PER_UPLOAD and outcome["duplicates"] == [] and outcome["errors"] == []
    shared_outcomes = outcomes[CLIENTS:]
    # Whoever won each line, every shared upload names the same 1,000 runs, in line order.
    named = [[*o["created"], *o["duplicates"]] for o in shared_outcomes]
    assert all(len(ids) == LINES_PER_UPLOAD for ids in named)
    assert len({frozenset(ids) for ids in named}) == 1
    assert sum(len(o["created"]) for o in shared_outcomes) == LINES_PER_UPLOAD

    expected = Counter(line for lines in [*own, shared] for line in lines)
    assert expected_after_load == expected  # every distinct line, each exactly once

    assert [r.status_code for r in mixed_responses] == [201] * len(orders), [r.text[:300] for r in mixed_responses]
    assert sum(len(r.json()["created"]) for r in mixed_responses) == len(mixed)
    assert stored_lines(database_url) == expected + Counter(mixed)
    assert elapsed < LOAD_TIMEOUT_S
