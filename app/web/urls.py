"""The board's own URLs as a browser asks for them. Routes, permalinks and cache keys speak in the app's
paths ("/compare?runs=1,2"); what leaves the server (a link, a form's action, a redirect, a URL in an
answer) goes through site_url, which puts BONNIEBOARD_ROOT_PATH in front: behind a proxy that serves the
board under /bb and strips that prefix, the browser must ask for /bb/compare to reach /compare."""

from fastapi.responses import RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.config import get_settings


def site_url(path: str) -> str:
    """`path` (one of this app's, starting with "/") under the root path; "?..." and other relative or
    absolute URLs are left as they are."""
    if path.startswith("/") and not path.startswith("//"):
        return (get_settings().root_path or "") + path
    return path


def redirect(path: str) -> RedirectResponse:
    """303 to one of this app's paths, under the root path."""
    return RedirectResponse(site_url(path), status_code=303)


def app_path(scope: Scope) -> str:
    """The request's path as the app's routes see it: without the root path the server put in front (the
    ASGI path includes root_path, as uvicorn's --root-path gives it). A mounted app's scope names its own
    root path; app_root_path is still the board's."""
    path: str = scope["path"]
    root: str = scope.get("app_root_path", scope.get("root_path", ""))
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
        path = path[len(root) :]
    return path or "/"


class RootPath:
    """Gives a request the root path when the server did not (`uvicorn app.main:app` without --root-path,
    another ASGI server, a test client): the app's own paths and static links then agree with site_url."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        root = get_settings().root_path
        if root and scope["type"] == "http" and not scope.get("root_path"):
            scope = {**scope, "root_path": root, "path": root + scope["path"]}
            if "raw_path" in scope and scope["raw_path"] is not None:
                scope["raw_path"] = root.encode() + scope["raw_path"]
        await self.app(scope, receive, send)
