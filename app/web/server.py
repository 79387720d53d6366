"""`bonnieboard serve`'s HTTP protocol: uvicorn's h11 one, with a deadline for the request line and
headers. uvicorn's own keep-alive timer stops at the first byte of a request, and no timer runs before a
connection's first request, so a client sending its headers a byte at a time (or nothing) would hold a
connection forever. The body has its deadline in app.web.request_body."""

from __future__ import annotations

import asyncio
import socket

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.config import get_settings


class H11WithHeaderTimeout(H11Protocol):
    _header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # With --workers > 1 the workers accept on a socket inherited from the parent, and asyncio leaves
        # Nagle's algorithm on: each small response then waits ~40 ms for the client's delayed ACK
        # (docs/decisions.md, "TCP_NODELAY on every connection").
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._start_header_deadline()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request's headers are in
            self._stop_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._start_header_deadline()  # the next request on this connection has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_deadline()
        super().connection_lost(exc)

    def _start_header_deadline(self) -> None:
        self._stop_header_deadline()
        self._header_deadline = self.loop.call_later(get_settings().header_timeout_s, self._headers_too_slow)

    def _stop_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()
