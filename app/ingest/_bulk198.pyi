# Types of the C extension app/ingest/_bulk198.c (what it does is described there and in app/ingest/sqlite_bulk.py).
import sqlite3

COLUMNS: tuple[str, ...]
CONNECTION_LAYOUT_KNOWN: int
MAX_MACHINE_CHARS: int

class Scan:
    @property
    def others(self) -> list[tuple[int, int, int]]: ...
    @property
    def plain_count(self) -> int: ...
    @property
    def distinct_count(self) -> int: ...
    def distinct_before(self, line_no: int, /) -> int: ...
    def insert(
        self,
        connection: sqlite3.Connection,
        first_id: int,
        parsed_lines: list[int],
        upload_id: int,
        created_at: str,
        label: str | None,
        document: str | None,
    ) -> tuple[list[int], list[tuple[int, int]], list[int]]: ...

def scan(data: bytes, max_line_bytes: int, /) -> Scan: ...
def db_filename(connection: sqlite3.Connection, /) -> str: ...
def libversion_number() -> int: ...
def line_is_plain(line: bytes, /) -> bool: ...
