"""The `bonnieboard` command: serve, ingest, migrate, token."""

from __future__ import annotations

import argparse
import errno
import os
import secrets
import shlex
import socket
import sys
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, make_url, select
from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError

from app.config import default_allowed_hosts, describe_invalid_settings, get_settings
from app.errors import AppError, InvalidUpload
from app.history import changes as history_changes
from app.history import snapshot as history_snapshot
from app.ingest.name_tags import NamePattern
from app.ingest.secrets_scrub import scrub_document
from app.ingest.service import ingest_bytes
from app.ingest.sqlite_bulk import describe_ingest_path
from app.ingest.validation import check_label, check_name_pattern, check_run_time, load_document
from app.store import generation
from app.store.db import DatabaseNotUtf8, get_sessionmaker
from app.store.migrate import upgrade
from app.store.models import run_table
from app.tags import parse_tag_params
from app.web import auth


class _ShowDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """--help shows each option's default, except where there is none (the help says what happens then)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return action.help if action.default is None else super()._get_help_string(action)


class _Version(argparse.Action):
    """--version, with the path uploads take: read when asked, from the settings, so a wrong setting is said in
    one line as at any other start."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, help="show the version and the ingest path, then exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        try:
            get_settings()
        except ValidationError as exc:
            parser.exit(2, f"bonnieboard: {describe_invalid_settings(exc)}\n")
        print(f"bonnieboard {version('bonnieboard')} (ingest: {describe_ingest_path()})")  # on stdout, as argparse's
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # A wrong setting or a database that cannot be reached ends the start with one line saying which and
    # why, not a traceback.
    try:
        settings = get_settings()
    except ValidationError as exc:
        print(f"bonnieboard: {describe_invalid_settings(exc)}", file=sys.stderr)
        return 2
    try:
        if args.command == "serve":
            return _serve(args, settings)
        upgrade(settings.database_url)
        if args.command == "ingest":
            return _ingest(args, settings.max_line_bytes)
        if args.command == "token":
            return _token(args)
        if args.command == "detect":
            return _detect(args.machine, settings.min_effect)
    except DatabaseError as exc:
        if not isinstance(exc, OperationalError) and type(exc) is not DatabaseError:
            raise  # a constraint or a query: a bug to show whole, not a database to name
        print(f"bonnieboard: {_database_unusable(settings.database_url, exc)}", file=sys.stderr)
        return 1
    except DatabaseNotUtf8 as exc:
        print(f"bonnieboard: {exc}", file=sys.stderr)
        return 1
    except ArgumentError as exc:  # a URL SQLAlchemy cannot read
        print(f"bonnieboard: BONNIEBOARD_DATABASE_URL: {exc}", file=sys.stderr)
        return 2
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bonnieboard", description="Store and compare bonnie++ results.")
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve",
        help="migrate the database, then serve the web app",
        description="Migrate the database (BONNIEBOARD_DATABASE_URL), then serve the web app.",
        formatter_class=_ShowDefaults,
    )
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (0.0.0.0: every IPv4 one)")
    serve.add_argument("--port", type=int, default=8000, help="the TCP port to listen on")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (use PostgreSQL beyond one box)")
    serve.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="proxies whose X-Forwarded-Proto and X-Forwarded-For are believed, comma-separated, or '*' "
        "(unset: $FORWARDED_ALLOW_IPS, else 127.0.0.1)",
    )
    serve.add_argument(
        "--root-path",
        metavar="PATH",
        help="the path prefix a proxy serves the board under and strips before passing requests on, e.g. /bb: "
        "every link, form and redirect then starts with it (unset: $BONNIEBOARD_ROOT_PATH, else none)",
    )

    ingest_cmd = commands.add_parser(
        "ingest", help="store bonnie++ CSV files (or text reports) without a server", description=INGEST_HELP
    )
    ingest_cmd.add_argument("files", nargs="*", type=Path, metavar="FILE")
    _add_ingest_options(ingest_cmd)
    ingest_cmd.add_argument("--if-empty", action="store_true", help="do nothing when the database already has runs")
    ingest_cmd.add_argument(
        "--manifest",
        type=Path,
        metavar="FILE",
        help="also ingest what each line of FILE says: 'FILE... [--tag KEY=VALUE] [--name-tags PATTERN] [--label L]' "
        "(files relative to the manifest, globs allowed; '#' starts a comment); the command line's tags apply too",
    )

    commands.add_parser("migrate", help="bring the database to the newest schema")

    _add_detect(commands)

    token = commands.add_parser(
        "token",
        help="manage API tokens: once one exists, every API write needs 'Authorization: Bearer <token>'",
    )
    token_commands = token.add_subparsers(dest="token_command", required=True)
    token_create = token_commands.add_parser("create", help="make a token; its secret is printed once, on stdout")
    token_create.add_argument("name", help="letters, digits, '.', '_' or '-', e.g. the machine or person using it")
    token_commands.add_parser("list", help="the tokens' names, when they were made and revoked (never the secrets)")
    token_revoke = token_commands.add_parser("revoke", help="stop a token working, at once, in every server")
    token_revoke.add_argument("name")
    return parser


def _database_unusable(url: str, exc: DatabaseError) -> str:
    """Why the database cannot be used, in one line: the driver's first line, the URL without its password
    and, for a SQLite file, whether the user we run as may write where it lives."""
    parsed = make_url(url)
    reason = " ".join(str(exc.orig).split("\n")[0].split())
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        shown = parsed.render_as_string(hide_password=True)
        return f"cannot use the database {shown}: {reason}"
    path = Path(parsed.database).absolute()
    who = f"uid {os.geteuid()}"
    if not path.parent.is_dir():
        why = f"the directory {path.parent} does not exist"
    elif not path.exists() and not os.access(path.parent, os.W_OK | os.X_OK):
        why = f"the directory {path.parent} is not writable by {who} (make it so, or choose another path)"
    elif path.exists() and not os.access(path, os.R_OK | os.W_OK):
        why = f"the file is not readable and writable by {who}"
    elif not os.access(path.parent, os.W_OK | os.X_OK):
        why = f"its directory {path.parent} is not writable by {who}: SQLite keeps its -wal and -shm files there"
    elif not isinstance(exc, OperationalError):  # "file is not a database", "database disk image is malformed"
        why = "the file is not a SQLite database bonnieboard can read (another file, or a damaged one)"
    else:
        why = reason
    return f"cannot use the SQLite database {path} ({reason}): {why}; set BONNIEBOARD_DATABASE_URL to use another"


def _serve(args: argparse.Namespace, settings) -> int:
    import uvicorn

    from app.web.server import H11WithHeaderTimeout

    if not 0 <= args.port <= MAX_PORT:
        print(f"bonnieboard: --port {args.port}: a TCP port is 0 to {MAX_PORT} (0: any free one)", file=sys.stderr)
        return 2
    if args.root_path is not None:
        # The app (in this process or the workers) reads the setting; checked as the setting is.
        os.environ["BONNIEBOARD_ROOT_PATH"] = args.root_path
        get_settings.cache_clear()
        try:
            settings = get_settings()
        except ValidationError as exc:
            print(f"bonnieboard: --root-path: {describe_invalid_settings(exc)}", file=sys.stderr)
            return 2
    upgrade(settings.database_url)
    cannot_listen = _cannot_listen(args.host, args.port)
    if cannot_listen:
        print(f"bonnieboard: {cannot_listen}", file=sys.stderr)
        return 1
    if settings.secret_key is None:
        # Every worker must sign and check browser session cookies with the same key; the workers
        # inherit this process's environment.
        os.environ["BONNIEBOARD_SECRET_KEY"] = secrets.token_urlsafe(32)
    if settings.allowed_hosts is None:
        # The app (in this process or the workers) reads the setting; only serve knows the address it listens on.
        allowed_hosts = default_allowed_hosts(args.host)
        os.environ["BONNIEBOARD_ALLOWED_HOSTS"] = ",".join(allowed_hosts)
        get_settings.cache_clear()
        if "*" in allowed_hosts:
            print(
                f"bonnieboard: serving on {args.host} for any Host name; set BONNIEBOARD_ALLOWED_HOSTS to the "
                "board's names so that a page whose name rebinds to this address (DNS rebinding) is refused",
                file=sys.stderr,
            )
    uvicorn.run(
        "app.main:app",
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="info",
        http=H11WithHeaderTimeout,
        proxy_headers=True,
        forwarded_allow_ips=args.forwarded_allow_ips,
        root_path=settings.root_path or "",
    )
    return 0


MAX_PORT = 65535


def _cannot_listen(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port, or None: tried with a socket made as uvicorn makes its own,
    then closed, so that a port in use is one line rather than the server's start-up and shutdown log."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            advice = {
                errno.EADDRINUSE: ": another program listens there (choose another --port)",
                errno.EACCES: ": ports below 1024 need root or CAP_NET_BIND_SERVICE (choose another --port)",
                errno.EADDRNOTAVAIL: ": no interface of this machine has that address (check --host)",
            }.get(exc.errno or 0, "")
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}{advice}"
    return None


def _token(args: argparse.Namespace) -> int:
    with get_sessionmaker()() as session:
        try:
            if args.token_command == "create":
                secret = auth.create_token(session=session, name=args.name)
                session.commit()
                print(secret)
                print(f"token {args.name!r} created; its secret is shown only this once", file=sys.stderr)
            elif args.token_command == "revoke":
                auth.revoke_token(session=session, name=args.name)
                session.commit()
                print(f"token {args.name!r} revoked")
            else:
                tokens = auth.list_tokens(session=session)
                if not tokens:
                    print("no tokens (API writes are open unless BONNIEBOARD_API_TOKEN is set)")
                for token in tokens:
                    revoked = f"revoked {token.revoked_at:%Y-%m-%d %H:%M:%S} UTC" if token.revoked_at else "live"
                    print(f"{token.name}\tcreated {token.created_at:%Y-%m-%d %H:%M:%S} UTC\t{revoked}")
        except AppError as exc:
            session.rollback()
            print(f"bonnieboard: {exc.detail}", file=sys.stderr)
            return 1
    return 0


INGEST_HELP = """Each file is one upload, like one POST /api/runs. A file holding bonnie++'s text report instead of
CSV lines is turned into the CSV lines bonnie++ would have written. --name-tags PATTERN gives each run the tags
its machine name carries (sweep-{fs}-{dev}-{mode} turns sweep-xfs-loop-sync into fs=xfs dev=loop mode=sync); a
--tag wins over a name tag of the same key, and a name that does not fit is an invalid line. A line already stored
is not stored again, but gets the tags it lacks. --document FILE.json stores the runner's evidence document (its
--json output) with the runs, as the runner's own post does."""


def _add_ingest_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--name-tags", metavar="PATTERN", help="tags from each machine name, e.g. raid{raid}_{fs}")
    parser.add_argument("--label")
    parser.add_argument("--partial", action="store_true", help="store the valid lines even if some are invalid")
    parser.add_argument("--document", type=Path, metavar="FILE.json", help="the runner's JSON document of the runs")
    parser.add_argument(
        "--time", metavar="ISO8601", help="when the runs were measured (history's time when no document says)"
    )


def _document(path: Path | None) -> Any:
    """A runner's --json document, held to the API's rules and without any token the board knows; ValueError
    naming the file and what is wrong. The file is read up to the document limit and no further: a larger one is
    refused without being read whole."""
    if path is None:
        return None
    settings = get_settings()
    limit = settings.max_document_bytes
    try:
        file = path.open("rb")
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror}") from None
    with file:
        data = file.read(limit + 1)
        if len(data) > limit:
            size = os.fstat(file.fileno()).st_size
            what = f"{size} bytes" if size > limit else f"over {limit} bytes"
            raise ValueError(
                f"{path}: the document file is {what}; the limit is {limit} (BONNIEBOARD_MAX_DOCUMENT_BYTES)"
            )
    try:
        document = load_document(data, max_bytes=limit)
    except AppError as exc:
        raise ValueError(f"{path}: {exc.detail}") from None
    return scrub_document(document, (settings.api_token,) if settings.api_token else ())


@dataclass(frozen=True, slots=True)
class _Batch:
    """Files ingested with the same options: the command line's, or one manifest line's."""

    files: list[Path]
    tags: dict[str, str]
    label: str | None
    name_pattern: NamePattern | None
    partial: bool
    document: Any = None  # a runner's document, stored with each file's runs
    run_time: datetime | None = None


def _batches(args: argparse.Namespace) -> list[_Batch]:
    """The command line's files, then each manifest line's; AppError or ValueError when an option is wrong."""
    tags = parse_tag_params(args.tag)
    batches = [
        _Batch(
            args.files,
            tags,
            check_label(args.label),
            check_name_pattern(args.name_tags),
            args.partial,
            _document(args.document),
            check_run_time(args.time, "--time"),
        )
    ]
    if args.manifest is None:
        return batches
    line_parser = argparse.ArgumentParser(prog=str(args.manifest), exit_on_error=False, add_help=False)
    line_parser.add_argument("files", nargs="+")
    _add_ingest_options(line_parser)
    base = args.manifest.parent
    for number, line in enumerate(args.manifest.read_text(encoding="utf-8").splitlines(), 1):
        words = shlex.split(line, comments=True)
        if not words:
            continue
        try:
            options = line_parser.parse_args(words)
        except (argparse.ArgumentError, SystemExit) as exc:
            raise ValueError(f"{args.manifest}:{number}: {exc}") from None
        files = []
        for name in options.files:
            matches = sorted(base.glob(name)) if any(char in name for char in "*?[") else [base / name]
            if not matches:
                raise ValueError(f"{args.manifest}:{number}: no file matches {name!r}")
            files += matches
        batches.append(
            _Batch(
                files,
                tags | parse_tag_params(options.tag),
                check_label(options.label) or batches[0].label,
                check_name_pattern(options.name_tags) or batches[0].name_pattern,
                options.partial or args.partial,
                _document(base / options.document if options.document else None),
                check_run_time(options.time, "--time") or batches[0].run_time,
            )
        )
    return batches


def _ingest(args: argparse.Namespace, max_line_bytes: int) -> int:
    """Each file is one upload, like one POST /api/runs; the messages are the API's."""
    try:
        batches = _batches(args)
    except (AppError, ValueError, OSError) as exc:
        print(f"bonnieboard: {exc.detail if isinstance(exc, AppError) else exc}", file=sys.stderr)
        return 2
    if not any(batch.files for batch in batches):
        print("bonnieboard: no FILE and no --manifest: nothing to ingest", file=sys.stderr)
        return 2
    status = 0
    with get_sessionmaker()() as session:
        if args.if_empty and session.scalar(select(func.count()).select_from(run_table)):
            print("database already has runs; nothing loaded")
            return 0
        uploads: list[int] = []
        for batch in batches:
            for path in batch.files:
                status = max(status, _ingest_file(session, path, batch, max_line_bytes, uploads))
        _detect_changes(session, uploads)
    return status


def _add_detect(commands: Any) -> None:
    detect = commands.add_parser(
        "detect",
        help="find the changes in machines' runs over time now (an upload does it after it is stored)",
        description="Run change detection on each machine's series whose runs changed since it last ran, and print "
        "the open changes found: after an upgrade, or a load by SQL. Uploads and `ingest` do this themselves.",
    )
    detect.add_argument("--machine", action="append", default=[], help="only this machine (repeatable)")


def _detect(machines: list[str], min_effect: float) -> int:
    with get_sessionmaker()() as session:
        if not machines:
            machines = list(session.scalars(select(run_table.c.machine).distinct().order_by(run_table.c.machine)))
        session.commit()
        history_snapshot.refresh(session, machines, min_effect)
        wanted = set(machines)
        found = [
            row
            for row in history_changes.stored_changes(session, states=[history_changes.OPEN])
            if row["machine"] in wanted
        ]
    for row in found:
        facts = row["facts"]
        label = f" ({facts['label']})" if facts.get("label") else ""
        print(
            f"{' '.join(filter(None, (row['machine'], row['configuration'])))}: {row['test']} ×{facts['ratio']:.2f} "
            f"from run {row['run_id']}{label}"
        )
    print(f"{len(found)} open changes in {len(machines)} machines")
    return 0


def _detect_changes(session, uploads: list[int]) -> None:
    """Change detection for the machines the uploads added runs to, once they are all stored."""
    machines = sorted(
        {machine for upload in uploads for machine in history_changes.machines_of_upload(session, upload)}
    )
    session.commit()
    history_snapshot.refresh(session, machines, get_settings().min_effect)
    found = history_changes.stored_changes(session, states=[history_changes.OPEN])
    touched = [row for row in found if row["machine"] in set(machines)]
    if touched:
        print(f"history: {len(touched)} open changes in these machines' runs over time (/changes lists them)")


def _ingest_file(session, path: Path, batch: _Batch, max_line_bytes: int, uploads: list[int]) -> int:
    try:
        data = path.read_bytes()
    except OSError as exc:
        print(f"{path}: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        outcome = ingest_bytes(
            session=session,
            data=data,
            max_line_bytes=max_line_bytes,
            partial=batch.partial,
            source="cli",
            filename=path.name,
            label=batch.label,
            tags=batch.tags,
            name_pattern=batch.name_pattern,
            document=batch.document,
            run_time=batch.run_time,
        )
        # A server's cached comparisons of the runs they name stay current unless this tagged stored runs.
        generation.bump(session, stored_runs_changed=bool(outcome.tagged))
        session.commit()
    except InvalidUpload as exc:
        session.rollback()
        print(f"{path}: {exc.detail}", file=sys.stderr)
        _print_errors(path, exc.errors)
        return 1
    except AppError as exc:
        session.rollback()
        print(f"{path}: {exc.detail}", file=sys.stderr)
        return 1
    if outcome.created:
        uploads.append(outcome.upload_id)
    tagged = f", {len(outcome.tagged)} already stored given new tags" if outcome.tagged else ""
    print(
        f"{path}: upload {outcome.upload_id}: {len(outcome.created)} created, {len(outcome.duplicates)} duplicates"
        f"{tagged}, {outcome.error_count} invalid"
    )
    for run in outcome.converted:
        stored = " (stored before, not stored again)" if run.stored_before else ""
        print(f"{path}:{run.line}: text report -> run {run.run_id}{stored}: {run.csv_line}")
        for note in run.notes:
            print(f"{path}:{run.line}:   {note}")
    for stretch in outcome.skipped:
        lines = "line was" if stretch.count == 1 else f"{stretch.count} lines were"
        print(f"{path}:{stretch.line}: {lines} not read (neither a report nor a CSV line): {stretch.text}")
    if outcome.skipped_count > sum(stretch.count for stretch in outcome.skipped):
        print(f"{path}: {outcome.skipped_count} lines in all were not read")
    _print_errors(path, outcome.errors)
    return 0


def _print_errors(path: Path, errors) -> None:
    for error in errors:
        field = f" [{error.field}]" if error.field else ""
        print(f"{path}:{error.line}:{field} {error.error}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
