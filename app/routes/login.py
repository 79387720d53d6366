"""/login and /logout: the browser gives its token once and keeps a signed session cookie (app.auth)."""

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse

from app import auth
from app.config import get_settings
from app.request_body import read_body
from app.templating import render

router = APIRouter(include_in_schema=False)

# A token and a path: a login form is tiny, so its body is too.
MAX_LOGIN_BYTES = 8192


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/upload"):  # noqa: A002 - the query's name
    return render(request, "login.html", {"next": auth.safe_next(next), "error": None})


@router.post("/login", response_class=HTMLResponse)
async def login_submit(request: Request):
    settings = get_settings()
    request._body = await read_body(request, MAX_LOGIN_BYTES)
    form = await request.form(max_files=0, max_fields=5)
    token, next_url = form.get("token"), auth.safe_next(form.get("next"))
    if not isinstance(token, str) or not token.strip():
        return render(request, "login.html", {"next": next_url, "error": "Give a token."}, status_code=401)
    digest = auth.secret_sha256(token.strip())
    name = await run_in_threadpool(_token_name, digest)
    if name is None:
        error = "That token is wrong or has been revoked."
        return render(request, "login.html", {"next": next_url, "error": error}, status_code=403)
    response = RedirectResponse(next_url, status_code=303)
    auth.start_browser_session(response, request, settings, digest)
    return response


@router.post("/logout")
async def logout(request: Request):
    page = await auth.page_auth(request)
    if page.signed_in_as is not None:
        await auth.check_csrf(request, page)
    response = RedirectResponse("/", status_code=303)
    auth.end_browser_session(response)
    return response


def _token_name(digest: bytes) -> str | None:
    settings = get_settings()
    with auth._own_session() as session:
        return auth.token_name(session=session, settings=settings, digest=digest)
