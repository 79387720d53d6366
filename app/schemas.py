"""The JSON shapes of the API (docs: api-contract.md). ORM rows never cross the wire."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from app.columns import FILE_TEST_COLUMNS, RESULT_PARTS, RUN_LINE_COLUMNS, result_column
from app.parsing import TESTS, UNITS

if TYPE_CHECKING:
    from app.models import Run

Status = Literal["ok", "too_fast", "not_run"]

# Tags and labels are short names; a limit keeps a hostile upload from storing megabytes in them.
MAX_TAG_CHARS = 200
MAX_LABEL_CHARS = 500
# Tags one run may have: a PATCH or an upload with more is refused (400).
MAX_TAGS_PER_RUN = 50

# What app.request_body's check_tag and check_label accept, for the OpenAPI description. They answer
# 400 with their own message, so these document the rule rather than have pydantic enforce it (422).
_NO_NUL = "^[^\\x00]*$"
TAG_PARAM_SCHEMA = WithJsonSchema({
    "type": "string",
    "pattern": f"^[^=\\x00]{{1,{MAX_TAG_CHARS}}}=[^\\x00]{{0,{MAX_TAG_CHARS}}}$",
    "description": f"KEY=VALUE: a key of 1 to {MAX_TAG_CHARS} characters without '=', a value of at most {MAX_TAG_CHARS}; no NUL",
})  # fmt: skip
_LABEL = {"type": "string", "maxLength": MAX_LABEL_CHARS, "pattern": _NO_NUL}
_TAGS = {
    "type": "object",
    "maxProperties": MAX_TAGS_PER_RUN,
    "propertyNames": {"minLength": 1, "maxLength": MAX_TAG_CHARS, "pattern": _NO_NUL},
    "additionalProperties": {"type": "string", "maxLength": MAX_TAG_CHARS, "pattern": _NO_NUL},
}
LABEL_PARAM_SCHEMA = WithJsonSchema(_LABEL)


class ResultOut(BaseModel):
    """One test's result: the RESULT_PARTS of app.columns, and the value's unit."""

    status: Status
    value: int | float | None
    unit: str
    cpu_pct: int | None
    latency_us: int | None

    @classmethod
    def from_run(cls, run: Run, test: str) -> Self:
        return cls(unit=UNITS[test], **{part: getattr(run, result_column(test, part)) for part in RESULT_PARTS})


class FileTestOut(BaseModel):
    num_files: int = Field(description="bonnie++'s -n number, in units of 1024 files")
    max_size: int | None
    min_size: int | None
    num_dirs: int | None
    link: Literal["link", "symlink"] | None

    @classmethod
    def from_run(cls, run: Run) -> Self | None:
        """None when the file tests did not run. Fields pair with FILE_TEST_COLUMNS by position: FileTest's order."""
        if run.num_files is None:
            return None
        return cls(**{field: getattr(run, column) for field, column in zip(cls.model_fields, FILE_TEST_COLUMNS, strict=True)})


class RunOut(BaseModel):
    id: int
    upload_id: int
    created_at: datetime
    machine: str
    format_version: str
    bonnie_version: str | None
    concurrency: int | None
    seed: str | None
    file_size_mib: int | None
    io_chunk_bytes: int | None
    seek_count: int | None
    seek_procs: int | None
    file_test: FileTestOut | None
    label: str | None
    tags: dict[str, str]
    raw_line: str
    results: dict[str, ResultOut]

    @classmethod
    def from_run(cls, run: Run) -> Self:
        """A stored run in the API's JSON shape (docs: api-contract.md, "A run as JSON"); pages show the same."""
        extra = {"document": run.document} if "document" in cls.model_fields else {}
        return cls(
            id=run.id,
            upload_id=run.upload_id,
            # SQLite gives back naive datetimes; every run was stored in UTC.
            created_at=run.created_at if run.created_at.tzinfo else run.created_at.replace(tzinfo=UTC),
            **{column: getattr(run, column) for column in RUN_LINE_COLUMNS},
            file_test=FileTestOut.from_run(run),
            label=run.label,
            tags={tag.key: tag.value for tag in run.tags},
            raw_line=run.raw_line,
            results={test: ResultOut.from_run(run, test) for test in TESTS},
            **extra,
        )


class RunDetailOut(RunOut):
    document: Any = None


class RunList(BaseModel):
    total: int
    items: list[RunOut]


class LineErrorOut(BaseModel):
    line: int
    field: str | None
    error: str


class UploadOut(BaseModel):
    upload_id: int
    created: list[int]
    duplicates: list[int]
    errors: list[LineErrorOut] = Field(description="the first 100 invalid lines (with partial=true)")
    error_count: int = Field(description="how many lines are invalid in all")


class ErrorOut(BaseModel):
    detail: str
    errors: list[LineErrorOut] | None = Field(None, description="an invalid upload's first 100 invalid lines")
    error_count: int | None = Field(None, description="how many lines of an invalid upload are invalid in all")


class JsonUpload(BaseModel):
    """What the runner posts: its CSV line(s), its system/per-test document, tags and a label."""

    model_config = ConfigDict(extra="forbid")

    csv: str
    document: dict[str, Any] | None = None
    tags: Annotated[dict[str, str], WithJsonSchema(_TAGS)] = Field(default_factory=dict)
    label: Annotated[str | None, WithJsonSchema({"anyOf": [_LABEL, {"type": "null"}]})] = None


class RunPatch(BaseModel):
    """Each key given replaces that whole value: `tags` replaces the run's tag set."""

    model_config = ConfigDict(extra="forbid")

    label: Annotated[str | None, WithJsonSchema({"anyOf": [_LABEL, {"type": "null"}]})] = None
    tags: Annotated[dict[str, str] | None, WithJsonSchema({"anyOf": [_TAGS, {"type": "null"}]})] = None
