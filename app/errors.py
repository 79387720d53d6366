"""Exceptions that carry their HTTP status. Services raise these, never HTTPException;
app.web.errors turns them into JSON for /api and into an error page elsewhere."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LineError:
    """What is wrong with one line of an upload: the line's number, the field's name (None when the line as a
    whole is wrong) and the message."""

    line: int
    field: str | None
    error: str


class AppError(Exception):
    status = 500

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class NotFound(AppError):
    status = 404


class BadRequest(AppError):
    status = 400


class PayloadTooLarge(AppError):
    status = 413


class Unauthorized(AppError):
    status = 401


class Forbidden(AppError):
    status = 403


class ServiceUnavailable(AppError):
    """The database cannot be written or reached for now (a full disk, a read-only file, PostgreSQL
    down): 503, and the next request tries again (app.store.db.unavailable)."""

    status = 503


class InvalidUpload(AppError):
    """Some lines are invalid (and partial was not asked for), or no line is valid."""

    status = 422

    def __init__(self, detail: str, errors: list[LineError], error_count: int | None = None):
        super().__init__(detail)
        self.errors = errors  # the first ones (app.ingest.service.MAX_REPORTED_ERRORS)
        self.error_count = len(errors) if error_count is None else error_count
