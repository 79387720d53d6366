"""The JSON shapes of the API (docs: api-contract.md). ORM rows never cross the wire."""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["ok", "too_fast", "not_run"]


class ResultOut(BaseModel):
    status: Status
    value: int | float | None
    unit: str
    cpu_pct: int | None
    latency_us: int | None


class FileTestOut(BaseModel):
    num_files: int = Field(description="bonnie++'s -n number, in units of 1024 files")
    max_size: int | None
    min_size: int | None
    num_dirs: int | None
    link: Literal["link", "symlink"] | None


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
    errors: list[LineErrorOut]


class ErrorOut(BaseModel):
    detail: str
    errors: list[LineErrorOut] | None = None


class JsonUpload(BaseModel):
    """What the runner posts: its CSV line(s), its system/per-test document, tags and a label."""

    model_config = ConfigDict(extra="forbid")

    csv: str
    document: dict[str, Any] | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    label: str | None = None


class RunPatch(BaseModel):
    """Each key given replaces that whole value: `tags` replaces the run's tag set."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = None
    tags: dict[str, str] | None = None
