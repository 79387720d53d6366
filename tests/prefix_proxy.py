"""A minimal reverse proxy that serves a board under a path prefix and strips it before passing a request on, as
nginx's `location /bb/ { proxy_pass http://127.0.0.1:8000/; }` does: what `bonnieboard serve --root-path /bb`
expects. A request outside the prefix gets 404 here and is recorded, as a link that escapes the prefix would
reach some other site behind a real proxy."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# Headers that belong to one connection, not to the request or response passed on.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding"}
    | {"upgrade", "content-length"}
)


@dataclass
class PrefixProxy:
    url: str  # e.g. http://127.0.0.1:PORT/bb
    outside: list[str] = field(default_factory=list)  # paths asked for outside the prefix


@contextmanager
def prefix_proxy(upstream: str, prefix: str) -> Iterator[PrefixProxy]:
    target = urlsplit(upstream)
    proxy = PrefixProxy("")

    class Handler(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            path = self.path
            if not (path == prefix or path.startswith(prefix + "/") or path.startswith(prefix + "?")):
                proxy.outside.append(path)
                self.send_error(404, "outside the proxy's prefix")
                return
            inner = path[len(prefix) :]
            inner = inner if inner.startswith("/") else "/" + inner
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
            try:
                connection.request(self.command, inner, body=body, headers=headers)
                answer = connection.getresponse()
                data = answer.read()
            finally:
                connection.close()
            self.send_response(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass  # the test reports what matters

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
