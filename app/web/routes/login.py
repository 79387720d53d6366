"""/login and /logout: the browser gives its token once and keeps a login in its session cookie
(app.web.auth). Both are forms that write: another origin cannot post them, and they carry the CSRF token."""

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from starlette.datastructures import FormData

from app.config import get_settings
from app.web import auth
from app.web.deps import PageAuthDep, csrf_form, own_session, refuse_cross_site
from app.web.request_body import FormLimits
from app.web.templating import render
from app.web.urls import redirect

router = APIRouter(include_in_schema=False, dependencies=[Depends(refuse_cross_site)])

# A token, a path and the CSRF token: a login form is tiny, so its body is too.
LoginFormDep = Annotated[FormData, Depends(csrf_form(FormLimits(max_bytes=8192, max_fields=5)))]


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, page: PageAuthDep, next: str = "/upload"):
    return render(request, "login.html", {"next": auth.safe_next(next), "error": None, "auth": page})


@router.post("/login", response_class=HTMLResponse)
async def login_submit(request: Request, page: PageAuthDep, form: LoginFormDep):
    token, next_url = form.get("token"), auth.safe_next(form.get("next"))
    context = {"next": next_url, "auth": page}
    if not isinstance(token, str) or not token.strip():
        return render(request, "login.html", context | {"error": "Give a token."}, status_code=401)
    login_id = await run_in_threadpool(_start_login, auth.secret_sha256(token.strip()))
    if login_id is None:
        error = "That token is wrong or has been revoked."
        return render(request, "login.html", context | {"error": error}, status_code=403)
    response = redirect(next_url)
    # A new CSRF token with the login: one an attacker may have planted before does not carry over.
    cookie = auth.new_session_cookie(login_id)
    auth.set_session_cookie(response, cookie, get_settings(), https=request.url.scheme == "https")
    return response


@router.post("/logout")
async def logout(request: Request, page: PageAuthDep, form: LoginFormDep):
    if page.login_id is not None:
        await run_in_threadpool(_end_login, page.login_id)
    response = redirect("/")
    auth.set_session_cookie(response, auth.new_session_cookie(), get_settings(), https=request.url.scheme == "https")
    return response


def _start_login(digest: bytes) -> str | None:
    settings = get_settings()
    with own_session() as session:
        if auth.token_name(session=session, settings=settings, digest=digest) is None:
            return None
        login_id = auth.start_login(session=session, token_sha256=digest)
        session.commit()
        return login_id


def _end_login(login_id: str) -> None:
    with own_session() as session:
        auth.end_login(session=session, login_id=login_id)
        session.commit()
