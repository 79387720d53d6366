"""The database schema. One wide `run` row per bonnie++ line: the twelve results are columns,
not rows, so that ingesting 100,000 lines is one insert per line and a comparison reads one row
per run (docs/decisions.md, "One wide row per run")."""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from app.bonnie import TESTS
from app.columns import RESULT_PARTS, result_column
from app.limits import IDEMPOTENCY_KEY_MAX_CHARS

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _result_column(test: str, part: str) -> Column:
    """The column of `part` of `test`'s result (app.columns: one definition of a run's results)."""
    types = {
        "status": String(8),  # ok | too_fast | not_run
        "value": Float if test == "seeks" else BigInteger,
        "cpu_pct": Integer,
        "latency_us": BigInteger,
    }
    return Column(result_column(test, part), types[part], nullable=part != "status")


run_table = Table(
    "run",
    Base.metadata,
    Column("id", Integer, primary_key=True),
    Column("upload_id", ForeignKey("upload.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # blake2b-128 of raw_line: the duplicate rule, enforced by the database. A hash rather than
    # the line itself because PostgreSQL cannot index long text in a btree.
    Column("line_hash", LargeBinary(16), nullable=False, unique=True),
    Column("raw_line", Text, nullable=False),
    Column("machine", Text, nullable=False),
    Column("format_version", String(8), nullable=False),
    Column("bonnie_version", Text),
    Column("concurrency", Integer),
    Column("seed", Text),
    Column("file_size_mib", BigInteger),
    Column("io_chunk_bytes", BigInteger),
    Column("seek_count", BigInteger),
    Column("seek_procs", Integer),
    Column("num_files", BigInteger),  # file_test; null when the file tests did not run
    Column("file_max_size", BigInteger),
    Column("file_min_size", BigInteger),
    Column("file_num_dirs", BigInteger),
    Column("file_link", String(8)),
    Column("label", Text),
    # The runner's document (system and per-test facts), one row per upload however many lines it has; null for
    # plain CSV uploads.
    Column("document_id", ForeignKey("document.id")),
    # What a comparison needs of this line's entry in the document, taken out at ingest so that a comparison never
    # reads a document: {test: {code, text}} where the runner named what limited a test; null where it named none.
    Column("limiters", JSON),
    *(_result_column(test, part) for test in TESTS for part in RESULT_PARTS),
    # The list's filters, newest first: the matching ids in order straight from the index
    # (docs/decisions.md, "Runs list at a million runs").
    Index("ix_run_machine_id", "machine", "id"),
    Index("ix_run_format_version_id", "format_version", "id"),
    # The list by name (app.store.runs.RUN_ORDERS): with a tag filter its runs are read in this order and checked
    # for their tags, without reading a row (app.store.runs._walked_by_name).
    Index("ix_run_machine_label_id", "machine", "label", "id"),
    # Whether a document is still some run's, when a run goes. Partial: most runs have no document, and an index
    # entry for each of them would cost every plain upload a b-tree insert per line.
    Index(
        "ix_run_document_id",
        "document_id",
        sqlite_where=text("document_id IS NOT NULL"),
        postgresql_where=text("document_id IS NOT NULL"),
    ),
    # A deleted run's id is never given to another run: links to it must not show a different one.
    sqlite_autoincrement=True,
)


# A runner's document, stored once however many runs (lines) of its upload refer to it, and shared by uploads
# that post the very same document (docs/decisions.md, "A document stored once").
document_table = Table(
    "document",
    Base.metadata,
    Column("id", Integer, primary_key=True),
    # blake2b-128 of the JSON text stored in body: identical documents are one row.
    Column("body_hash", LargeBinary(16), nullable=False, unique=True),
    # system.ram_bytes when it is a byte count (app.ingest.documents.ram_bytes_of): what a comparison reads of the
    # document. Before body, so that SQLite reads it without the body's overflow pages.
    Column("ram_bytes", BigInteger),
    # What history reads of the document (app/history/setup.py): the runner's start time and the setup facts
    # compared run to run. Before body, for the same reason as ram_bytes.
    Column("started_at", DateTime(timezone=True)),
    Column("setup", JSON(none_as_null=True)),
    Column("body", JSON, nullable=False),
)


class Document(Base):
    __table__ = document_table

    if TYPE_CHECKING:
        id: Mapped[int]
        body: Mapped[Any]


class Upload(Base):
    __tablename__ = "upload"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source: Mapped[str] = mapped_column(String(16))  # api | cli | page
    filename: Mapped[str | None] = mapped_column(Text)
    label: Mapped[str | None] = mapped_column(Text)
    # The client's Idempotency-Key: an upload sent again with it is answered with this one's runs, not stored
    # again (docs/api-contract.md, "Sending an upload again").
    idempotency_key: Mapped[str | None] = mapped_column(String(IDEMPOTENCY_KEY_MAX_CHARS), index=True, unique=True)
    # The time the client gave its runs (`time=`): a run's time on history when its document gives none.
    run_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Run(Base):
    __table__ = run_table

    if TYPE_CHECKING:  # the columns come from run_table; these tell a type checker what code reads by name
        id: Mapped[int]
        upload_id: Mapped[int]
        created_at: Mapped[datetime]
        line_hash: Mapped[bytes]
        raw_line: Mapped[str]
        num_files: Mapped[int | None]
        label: Mapped[str | None]
        machine: Mapped[str]
        document_id: Mapped[int | None]

    tags: Mapped[list["Tag"]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="Tag.key", lazy="selectin"
    )
    upload: Mapped[Upload] = relationship()
    # Loaded only when asked for (the run page, the API's run): lists and comparisons never read a document.
    stored_document: Mapped[Document | None] = relationship(lazy="select")

    @property
    def document(self) -> Any:
        """The runner's document, as posted (tokens scrubbed); None for plain CSV uploads."""
        return None if self.stored_document is None else self.stored_document.body


class Tag(Base):
    __tablename__ = "tag"
    # A tag filter reads the matching run ids from this index, in order
    # (docs/decisions.md, "Runs list at a million runs").
    # WITHOUT ROWID on SQLite: the rows live in the primary key's b-tree, one b-tree fewer to write per tag
    # (an upload of 100,000 runs with two tags writes 200,000 of them).
    __table_args__ = (Index("ix_tag_key_value_run_id", "key", "value", "run_id"), {"sqlite_with_rowid": False})

    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    value: Mapped[str] = mapped_column(Text)

    run: Mapped[Run] = relationship(back_populates="tags")


tag_table = Tag.__table__
upload_table = Upload.__table__


class ApiToken(Base):
    """A named API token. Only the SHA-256 of its secret is stored: the secret is
    random and long, so a fast hash cannot be brute-forced. A revoked token keeps its row, so a
    database that has ever had a token keeps requiring one."""

    __tablename__ = "api_token"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    secret_sha256: Mapped[bytes] = mapped_column(LargeBinary(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class BrowserLogin(Base):
    """A browser signed in with a token: the cookie holds a random id, this row its
    SHA-256. Signing out deletes the row, so a copied cookie stops working too."""

    __tablename__ = "browser_login"

    id_sha256: Mapped[bytes] = mapped_column(LargeBinary(32), primary_key=True)
    token_sha256: Mapped[bytes] = mapped_column(LargeBinary(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


# The change points found in a machine's series (app/history/changes.py), kept with their triage. A series is
# (machine, configuration, test); `run_id` is the first run of the new stretch. `active` is false for a change
# the series no longer shows (runs deleted, tags edited) that was triaged: its triage is kept, not shown.
change_table = Table(
    "change",
    Base.metadata,
    Column("id", Integer, primary_key=True),
    Column("machine", Text, nullable=False),
    Column("configuration", Text, nullable=False),
    Column("test", String(40), nullable=False),
    Column("run_id", ForeignKey("run.id", ondelete="CASCADE"), nullable=False),
    Column("active", Boolean, nullable=False),
    Column("found_at", DateTime(timezone=True), nullable=False),
    # ratio, its interval, p, method, label: what detection said, as the API gives it
    Column("facts", JSON, nullable=False),
    Column("state", String(16), nullable=False),  # open | expected | false_alarm | acknowledged
    Column("note", Text),
    Column("triaged_by", Text),
    Column("triaged_at", DateTime(timezone=True)),
    UniqueConstraint("machine", "configuration", "test", "run_id", name="uq_change_series_run"),
    Index("ix_change_state_id", "state", "id"),
    Index("ix_change_run_id", "run_id"),
    sqlite_autoincrement=True,
)

# Per machine, the digest of the series its stored changes were found in (equal digests, nothing to detect again),
# and its /history page's data, gzipped JSON, with the key of the runs it was made from (app/history/snapshot.py);
# `version`, random, is replaced whenever its stored changes are (detection's store, a triage): the answers a
# process keeps are keyed by it, so another machine's write leaves them.
history_state_table = Table(
    "history_state",
    Base.metadata,
    Column("machine", Text, primary_key=True),
    Column("digest", LargeBinary(16), nullable=False),
    Column("detected_at", DateTime(timezone=True), nullable=False),
    Column("view_key", Text),
    Column("view", LargeBinary),
    Column("version", BigInteger),
)

# Two rows: id 1 a stamp every write replaces, id 2 one replaced when stored runs change (app/store/generation.py).
data_generation_table = Table(
    "data_generation",
    Base.metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("generation", BigInteger, nullable=False),
)

# The blocks of run ids that PostgreSQL uploads are writing now, each committed apart before its upload's rows
# (app.ingest.writers.PostgresWriter): a newest-first list steps over a block whose upload it cannot see
# instead of visiting each of its uncommitted rows (docs/decisions.md, "Lists step over uploads in flight").
# No key to upload: the upload's row is not committed when the block is.
run_in_flight_table = Table(
    "run_in_flight",
    Base.metadata,
    Column("first_id", Integer, primary_key=True, autoincrement=False),
    Column("last_id", Integer, nullable=False),
    Column("upload_id", Integer, nullable=False),
)
