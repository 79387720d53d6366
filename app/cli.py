"""The `bonnieboard` command: serve, ingest, migrate."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sqlalchemy import func, select

from app.config import get_settings
from app.db import get_sessionmaker
from app.errors import AppError, InvalidUpload
from app.ingest import ingest
from app.migrate import upgrade
from app.models import run_table
from app.parsing import iter_parse_bytes
from app.request_body import check_label, parse_tag_params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bonnieboard", description="Store and compare bonnie++ results.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="migrate the database, then serve the web app")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="worker processes (use PostgreSQL beyond one box)")

    ingest_cmd = commands.add_parser("ingest", help="store bonnie++ CSV files without a server")
    ingest_cmd.add_argument("files", nargs="+", type=Path, metavar="FILE")
    ingest_cmd.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE")
    ingest_cmd.add_argument("--label")
    ingest_cmd.add_argument("--partial", action="store_true", help="store the valid lines even if some are invalid")
    ingest_cmd.add_argument("--if-empty", action="store_true", help="do nothing when the database already has runs")

    commands.add_parser("migrate", help="bring the database to the newest schema")

    args = parser.parse_args(argv)
    settings = get_settings()
    if args.command == "serve":
        return _serve(args, settings.database_url)
    upgrade(settings.database_url)
    if args.command == "ingest":
        return _ingest(args, settings.max_line_bytes)
    return 0


def _serve(args: argparse.Namespace, database_url: str) -> int:
    import uvicorn

    upgrade(database_url)
    uvicorn.run("app.main:app", host=args.host, port=args.port, workers=args.workers, log_level="info")
    return 0


def _ingest(args: argparse.Namespace, max_line_bytes: int) -> int:
    """Each file is one upload, like one POST /api/runs; the messages are the API's."""
    try:
        tags = parse_tag_params(args.tag)
        label = check_label(args.label)
    except AppError as exc:
        print(f"bonnieboard: {exc.detail}", file=sys.stderr)
        return 2
    status = 0
    with get_sessionmaker()() as session:
        if args.if_empty and session.scalar(select(func.count()).select_from(run_table)):
            print("database already has runs; nothing loaded")
            return 0
        for path in args.files:
            try:
                data = path.read_bytes()
            except OSError as exc:
                print(f"{path}: {exc.strerror}", file=sys.stderr)
                status = 1
                continue
            try:
                outcome = ingest(
                    session=session,
                    items=iter_parse_bytes(data, max_line_bytes=max_line_bytes),
                    partial=args.partial,
                    source="cli",
                    filename=path.name,
                    label=label,
                    tags=tags,
                )
                session.commit()
            except InvalidUpload as exc:
                session.rollback()
                print(f"{path}: {exc.detail}", file=sys.stderr)
                _print_errors(path, exc.errors)
                status = 1
                continue
            print(f"{path}: upload {outcome.upload_id}: {len(outcome.created)} created, {len(outcome.duplicates)} duplicates, {len(outcome.errors)} invalid")
            _print_errors(path, outcome.errors)
    return status


def _print_errors(path: Path, errors) -> None:
    for error in errors:
        field = f" [{error.field}]" if error.field else ""
        print(f"{path}:{error.line}:{field} {error.error}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
