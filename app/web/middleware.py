"""The middlewares of every request: security headers, HEAD as GET, the allowed Host names and a new browser's
session cookie. app.main adds them, in the order that decides what each one sees."""

from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import get_settings
from app.web import auth
from app.web.errors import wants_json
from app.web.urls import app_path

# Only our own scripts and styles (htmx, Chart.js and Swagger UI are vendored); no framing; data: images
# for Swagger UI's icons. JSON data blocks (<script type="application/json">) are not scripts to CSP.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every HTTP response, errors and static files included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in SECURITY_HEADERS if name not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class HeadAsGet:
    """Answers HEAD as the same path's GET would, without the body: monitoring probes ask with HEAD, and FastAPI
    gives a route only the methods it names. Same status and headers (Content-Length included, when the GET has
    one). The answer ends as soon as its headers are sent; from then on the server tells the app that the client
    has gone (ASGI's http.disconnect), so a streamed export stops instead of reading every run for nobody."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        answered = False

        async def send_headers_only(message: Message) -> None:
            nonlocal answered
            if answered:
                return  # the GET's body, or anything after it
            if message["type"] == "http.response.start":
                await send({**message, "trailers": False})  # the answer ends right here
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                answered = True
            else:
                await send(message)

        # A copy: the server reads its own scope's method to know that this answer has no body.
        await self.app({**scope, "method": "GET"}, receive, send_headers_only)


class AllowedHosts:
    """Refuses (400) a request whose Host header is not one of BONNIEBOARD_ALLOWED_HOSTS: a page on
    evil.example whose name now resolves to this board (DNS rebinding) sends Host: evil.example, and its
    Origin then agrees with that Host, so app.web.auth's cross-site check alone would let it read and write.
    Starlette's TrustedHostMiddleware decides; this only words its answer."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...]):
        self.app = app
        self.check = TrustedHostMiddleware(self._allowed, allowed_hosts=allowed_hosts, www_redirect=False)

    @staticmethod
    async def _allowed(scope: Scope, receive: Receive, send: Send) -> None:
        scope["state"]["host_allowed"] = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def discard(message: Message) -> None:
            pass  # TrustedHostMiddleware's own refusal ("Invalid host header"): ours says why

        await self.check(scope, receive, discard)
        if state.pop("host_allowed", False):
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")[:100]
        # The allowed names are not listed: whoever sent this Host may be a rebinding page, not the operator.
        detail = (
            f"this bonnieboard does not answer to the host name {host!r}: it is not in BONNIEBOARD_ALLOWED_HOSTS. "
            "A page of another site whose name points here is refused; a name of this board belongs in that setting"
        )
        if wants_json(app_path(scope)):
            response: Response = JSONResponse({"detail": detail}, status_code=400)
        else:
            response = PlainTextResponse(detail, status_code=400)
        await response(scope, receive, send)


class SessionCookies:
    """Sets the session cookie that app.web.deps made for a browser that had none (it holds the CSRF
    token the page's forms carry) on whatever response the request gets, errors included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def send_with_cookie(message: Message) -> None:
            cookie = state.get("session_cookie")
            if message["type"] == "http.response.start" and cookie is not None:
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"set-cookie" for name, _ in headers):
                    headers.append(
                        auth.session_cookie_header(cookie, get_settings(), https=scope.get("scheme") == "https")
                    )
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_cookie)
