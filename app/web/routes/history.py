"""History: /history and /api/history (a machine's runs over time, with the changes found), /changes, its Atom
feed and the triage of a change (PATCH /api/changes/{id}, or the page's form). Thin: read the request, call
app.history, shape the answer."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from xml.etree import ElementTree

import orjson
from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.config import get_settings
from app.errors import BadRequest, NotFound
from app.history import changes as history_changes
from app.history import detect, snapshot, view
from app.history.series import LATENCY, MAX_GROUP_KEYS, MEASURES, RATE, read_runs
from app.ingest.validation import check_label
from app.limits import MAX_ID
from app.store.db import begin_write
from app.store.models import change_table, run_table
from app.tags import parse_tag_filters
from app.web import auth
from app.web.deps import (
    TAG_FILTERS_QUERY,
    PageAuthDep,
    SessionDep,
    api_access,
    check_machine_text,
    csrf_form,
    own_session,
    page_access,
)
from app.web.request_body import FormLimits
from app.web.routes.api import ERRORS
from app.web.routes.pages import script_json
from app.web.schemas import MACHINE_FILTER_PARAM_SCHEMA, TAG_FILTER_PARAM_SCHEMA
from app.web.templating import render
from app.web.urls import redirect, site_url

api_router = APIRouter(prefix="/api", tags=["history"], responses=ERRORS, dependencies=[Depends(api_access)])
page_router = APIRouter(include_in_schema=False, dependencies=[Depends(page_access)])

MAX_NOTE_CHARS = 2000


class ChangeFacts(BaseModel):
    id: int | None = Field(description="null for a change found under a grouping other than the default (not stored)")
    run: int = Field(description="the first run of the new stretch")
    time: str
    ratio: float = Field(description="the stretch after over the stretch before: geometric means (rank: medians)")
    ratio_ci95: list[float] | None = Field(description="its 95 % interval; null where it cannot be said honestly")
    p_value: float
    method: str = Field(description="t-test (on the logs), or rank where some runs are +++++")
    bound: str | None = Field(description="above/below: the ratio is only a bound, a +++++ median's")
    kind: str | None = Field(description="setup_change, machine_load, machine_event or null")
    label: str | None = Field(description="setup change: kernel 6.1 → 6.6, or machine event: ...")
    state: str = Field(
        description="open, expected, false_alarm, acknowledged or explained (by the runner's evidence: its label says how)"
    )
    note: str | None
    triaged_by: str | None
    triaged_at: str | None


class PointOut(BaseModel):
    run: int
    time: str
    value: float | None = Field(description="null when +++++ (status too_fast)")
    status: str = Field(description="ok or too_fast")
    above: float | None = Field(None, description="too_fast only: the rate the run was above, when known")


class StretchOut(BaseModel):
    first_run: int
    last_run: int
    level: float | None
    band95: list[float] | None = Field(description="where 95 % of the stretch's runs fall")
    censored: int


class SeriesTestOut(BaseModel):
    test: str
    measure: str = Field(description="rate or latency")
    unit: str
    points: list[PointOut]
    stretches: list[StretchOut]
    changes: list[ChangeFacts]


class SetupChangeOut(BaseModel):
    run: int
    time: str
    changes: list[str] = Field(description="kernel 6.1 → 6.6, ...")


class ConfigurationSeriesOut(BaseModel):
    configuration: str = Field(description="its grouping tags, KEY=VALUE separated by spaces; empty for one")
    tags: dict[str, str]
    runs: int
    setup_changes: list[SetupChangeOut]
    tests: list[SeriesTestOut]


class HistoryOut(BaseModel):
    machine: str
    group: list[str] = Field(description="the tag keys that tell configurations apart")
    series: list[ConfigurationSeriesOut]


class ChangeOut(BaseModel):
    id: int
    machine: str
    configuration: str
    test: str
    measure: str
    run: int
    ratio: float
    ratio_ci95: list[float] | None
    p_value: float
    method: str
    bound: str | None
    kind: str | None
    label: str | None
    state: str
    note: str | None
    triaged_by: str | None
    triaged_at: str | None
    found_at: str
    history: str = Field(description="the machine's /history page")


class ChangesOut(BaseModel):
    changes: list[ChangeOut]


CHANGES_PAGE_SIZE = 200


def history_asked(
    machine: Annotated[
        str, MACHINE_FILTER_PARAM_SCHEMA, Query(description="the machine name (the CSV's), e.g. raid5_chunk64_ext3")
    ],
    tag: Annotated[list[Annotated[str, TAG_FILTER_PARAM_SCHEMA]], TAG_FILTERS_QUERY] = [],  # noqa: B006 - FastAPI copies the default per request
    group: Annotated[
        str | None,
        Query(
            description="tag keys that tell configurations apart (fs,mount), or none; default: every tag but a run's own (round=)"
        ),
    ] = None,
    measure: Annotated[Literal["rate", "latency"], Query(description="rate (default) or latency")] = "rate",
) -> view.HistoryAsked:
    name = check_machine_text(machine, "machine") or ""
    if measure not in MEASURES:
        raise BadRequest(f"measure: rate or latency; {measure[:20]!r} was given")
    keys: tuple[str, ...] | None = None
    if group:
        keys = tuple(key for key in (part.strip() for part in group.split(",")) if key and key != "none")
        if len(keys) > MAX_GROUP_KEYS:
            raise BadRequest(f"group: at most {MAX_GROUP_KEYS} tag keys; {len(keys)} were given")
    return view.HistoryAsked(name, parse_tag_filters(tag), keys, measure)


HistoryAskedDep = Annotated[view.HistoryAsked, Depends(history_asked)]


def _history(session: Session, asked: view.HistoryAsked) -> history_changes.MachineHistory:
    runs = read_runs(session, asked.machine)
    if not runs:
        raise NotFound(f"no runs of machine {asked.machine[:100]!r}")
    return history_changes.machine_history(session, asked.machine, runs, get_settings().min_effect, asked.group)


# Answers made in this process, by (what was asked, the keys of the machine's runs and stored changes): a few
# machines' pages are read often, and another machine's write leaves them.
_ANSWERS: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
MAX_CACHED_ANSWERS = 32


def _cached(kind: str, asked: view.HistoryAsked, keys: snapshot.Keys | None, make: Callable[[], Any]) -> Any:
    if keys is None:
        return make()
    key = (kind, asked.query(), keys.process)
    if key in _ANSWERS:
        _ANSWERS.move_to_end(key)
        return _ANSWERS[key]
    value = _ANSWERS[key] = make()
    while len(_ANSWERS) > MAX_CACHED_ANSWERS:
        _ANSWERS.popitem(last=False)
    return value


def _page_view(session: Session, asked: view.HistoryAsked) -> dict[str, Any]:
    """What the page shows: cached in the process, else the machine's kept page (the default view), else made."""
    keys = snapshot.keys_of(session, asked.machine, get_settings().min_effect)
    kept = keys is not None and not asked.tags and asked.group is None and asked.measure == RATE

    def make() -> dict[str, Any]:
        if kept and keys is not None and (stored := snapshot.load(session, asked.machine, keys.kept)) is not None:
            return stored
        page = view.page_view(_history(session, asked), asked)
        if kept and keys is not None:
            begin_write(session)
            snapshot.save(session, asked.machine, keys.kept, page)
            session.commit()
        return page

    return _cached("page", asked, keys, make)


@api_router.get("/history", response_model=HistoryOut)
def get_history(session: SessionDep, asked: HistoryAskedDep) -> Response:
    """A machine's runs over time: per configuration and test, the points, the stable stretches and the changes
    found (docs/api-contract.md, "History")."""
    keys = snapshot.keys_of(session, asked.machine, get_settings().min_effect)
    body = _cached("api", asked, keys, lambda: orjson.dumps(view.api_answer(_history(session, asked), asked)))
    return Response(body, media_type="application/json")


@page_router.get("/history", response_class=HTMLResponse)
def history_page(request: Request, session: SessionDep, page_auth: PageAuthDep, machine: str | None = None):
    if machine is None:
        return render(request, "history_machines.html", {"machines": _machines(session)})
    measure = request.query_params.get("measure") or RATE
    if measure not in MEASURES:
        raise BadRequest(f"measure: rate or latency; {measure[:20]!r} was given")
    tags = request.query_params.getlist("tag")
    asked = history_asked(machine, tags, request.query_params.get("group"), measure)  # type: ignore[arg-type]
    page = _page_view(session, asked)
    context = {
        "asked": asked,
        "page": page,
        "data_json": script_json(page["data"]),
        "auth": page_auth,
        "states": history_changes.STATE_WORDS,
        "other_measure": LATENCY if asked.measure == RATE else RATE,
        "min_effect": get_settings().min_effect,
        "latency_min_effect": detect.series_min_effect(get_settings().min_effect, LATENCY),
    }
    return render(request, "history.html", context)


def _machines(session: Session) -> list[dict[str, Any]]:
    """Every machine with its run count and open changes, most runs first."""
    counts = session.execute(
        select(run_table.c.machine, func.count()).group_by(run_table.c.machine).order_by(func.count().desc())
    ).all()
    open_changes: dict[str, int] = dict(
        session.execute(
            select(change_table.c.machine, func.count())
            .where(change_table.c.state == history_changes.OPEN, change_table.c.active.is_(True))
            .group_by(change_table.c.machine)
        ).all()
    )
    return [{"name": name, "runs": runs, "open": open_changes.get(name, 0)} for name, runs in counts]


# ==== Changes across the board, and their triage ====


def _listed(session: Session, machine: str | None, tags: dict[str, str], states: list[str]) -> list[dict[str, Any]]:
    rows = history_changes.stored_changes(session, machine=machine, states=states, limit=CHANGES_PAGE_SIZE * 5)
    if tags:
        wanted = {f"{key}={value}" for key, value in tags.items()}
        rows = [row for row in rows if wanted <= set(row["configuration"].split(" "))]
    return rows[:CHANGES_PAGE_SIZE]


def changes_filter(
    machine: Annotated[str | None, MACHINE_FILTER_PARAM_SCHEMA, Query(description="only this machine's")] = None,
    tag: Annotated[list[Annotated[str, TAG_FILTER_PARAM_SCHEMA]], TAG_FILTERS_QUERY] = [],  # noqa: B006 - FastAPI copies the default per request
    state: Annotated[
        list[Literal["open", "expected", "false_alarm", "acknowledged", "explained", "all", ""]],
        Query(
            description="open (default), expected, false_alarm, acknowledged, explained (by the runner's evidence) or all"
        ),
    ] = [],  # noqa: B006 - FastAPI copies the default per request
) -> tuple[str | None, dict[str, str], list[str]]:
    states: list[str] = [one for one in state if one] or [history_changes.OPEN]
    if "all" in states:
        states = list(history_changes.STATES)
    for one in states:
        if one not in history_changes.STATES:
            raise BadRequest(f"state: one of {', '.join(history_changes.STATES)} or all; {one[:40]!r} was given")
    return check_machine_text(machine, "machine") or None, parse_tag_filters(tag), states


ChangesFilterDep = Annotated[tuple[str | None, dict[str, str], list[str]], Depends(changes_filter)]


def change_out(row: dict[str, Any]) -> dict[str, Any]:
    return view.stored_change_json(row, site_url("/history?" + view.HistoryAsked(row["machine"], {}, None).query()))


@api_router.get("/changes", response_model=ChangesOut)
def get_changes(session: SessionDep, listed: ChangesFilterDep) -> dict[str, Any]:
    """Changes found across the board, newest first: open ones by default."""
    return {"changes": [change_out(row) for row in _listed(session, *listed)]}


@page_router.get("/changes", response_class=HTMLResponse)
def changes_page(request: Request, session: SessionDep, page_auth: PageAuthDep, listed: ChangesFilterDep):
    machine, tags, states = listed
    rows = [change_out(row) for row in _listed(session, machine, tags, states)]
    feed = [("machine", machine)] if machine else []
    feed += [("tag", f"{k}={v}") for k, v in tags.items()] + [("state", s) for s in states]
    context = {
        "changes": rows,
        "machine": machine or "",
        "tags": " ".join(f"{k}={v}" for k, v in tags.items()),
        "states": states,
        "state_words": history_changes.STATE_WORDS,
        "auth": page_auth,
        "feed_query": "&".join(f"{k}={v}" for k, v in feed),
    }
    return render(request, "changes.html", context)


ATOM = "http://www.w3.org/2005/Atom"


@page_router.get("/changes.atom")
def changes_feed(request: Request, session: SessionDep, listed: ChangesFilterDep) -> Response:
    """The same list as an Atom feed, for alerting."""
    rows = [change_out(row) for row in _listed(session, *listed)]
    base = str(request.base_url).rstrip("/")
    feed = ElementTree.Element("feed", xmlns=ATOM)
    ElementTree.SubElement(feed, "title").text = "bonnieboard: changes found"
    ElementTree.SubElement(feed, "id").text = f"{base}{site_url('/changes')}"
    ElementTree.SubElement(feed, "link", href=f"{base}{site_url('/changes')}")
    ElementTree.SubElement(feed, "updated").text = max(
        (row["found_at"] for row in rows), default=view.iso(datetime.now(UTC))
    )
    for row in rows:
        entry = ElementTree.SubElement(feed, "entry")
        ElementTree.SubElement(entry, "title").text = _headline(row)
        ElementTree.SubElement(entry, "id").text = f"{base}{site_url('/api/changes')}/{row['id']}"
        ElementTree.SubElement(entry, "link", href=f"{base}{row['history']}#change-{row['id']}")
        ElementTree.SubElement(entry, "updated").text = row["triaged_at"] or row["found_at"]
        ElementTree.SubElement(entry, "summary").text = row["label"] or f"state: {row['state']}"
    body = ElementTree.tostring(feed, encoding="unicode", xml_declaration=True)
    return Response(body, media_type="application/atom+xml")


def _headline(row: dict[str, Any]) -> str:
    what = f"{row['test']} latency" if row["measure"] == LATENCY else row["test"]
    bound = {"above": "≥ ", "below": "≤ "}.get(row["bound"] or "", "")
    return (
        f"{row['machine']} {row['configuration'] or ''}: {what} ×{bound}{row['ratio']:.2f} at run {row['run']}".replace(
            "  ", " "
        )
    )


class ChangePatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    state: Literal["open", "expected", "false_alarm", "acknowledged", "explained"] = Field(
        description="open, expected (its stretch is the new baseline), false_alarm, acknowledged or explained"
    )
    note: str | None = Field(None, max_length=MAX_NOTE_CHARS)
    by: str | None = Field(None, max_length=200, description="who triaged it, when no token names them")


def _check_note(note: str | None) -> str | None:
    if note is not None and (len(note) > MAX_NOTE_CHARS or "\x00" in note):
        raise BadRequest(f"note: at most {MAX_NOTE_CHARS} characters, with no NUL")
    return note or None


def _token_name(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret:
        return None
    with own_session() as session:
        return auth.token_name(session=session, settings=get_settings(), digest=auth.secret_sha256(secret.strip()))


@api_router.patch("/changes/{change_id}", response_model=ChangeOut)
def patch_change(
    change_id: Annotated[int, Path(ge=1, le=MAX_ID)], patch: ChangePatch, request: Request, session: SessionDep
) -> dict[str, Any]:
    """Triage a change; writes need the board's write auth. Who did it: the token's name, else `by`."""
    who = _token_name(request) or check_label(patch.by)
    row = history_changes.triage(session, change_id, state=patch.state, note=_check_note(patch.note), by=who)
    session.commit()
    return change_out(row)


TRIAGE_FORM = FormLimits(max_bytes=MAX_NOTE_CHARS * 4 + 4096, max_fields=6)
TriageFormDep = Annotated[FormData, Depends(csrf_form(TRIAGE_FORM))]


@page_router.post("/changes/{change_id}")
def triage_submit(
    change_id: Annotated[int, Path(ge=1, le=MAX_ID)],
    session: SessionDep,
    page_auth: PageAuthDep,
    form: TriageFormDep,
):
    """The triage form of /history and /changes: like PATCH /api/changes/{id}, then back where it was sent from."""
    note = str(form.get("note") or "").strip() or None
    history_changes.triage(
        session, change_id, state=str(form.get("state") or ""), note=_check_note(note), by=page_auth.signed_in_as
    )
    session.commit()
    back = str(form.get("back") or "/changes")
    return redirect(auth.safe_next(back) + f"#change-{change_id}")
