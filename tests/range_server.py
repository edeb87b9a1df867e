"""A local package index on 127.0.0.1 for the lock tests: wheels served with ``Range``, every request logged.

``/simple/`` and ``/simple/NAME/`` are PEP 503 pages (links carry ``#sha256=``), so uv can
resolve and lock against it; ``/files/FILE`` serves the wheel, honouring one
``bytes=`` range (``a-b``, ``a-``, ``-n``). Asked for an absolute URL, it answers as an
HTTP proxy would, from its own directory. The server can be told to ignore ``Range``
(answer 200 with the whole file), to answer 404 for some files, or to fail the next
requests with 503. Each request is logged as :class:`Served` with the bytes sent.

A server that lies is a :data:`Lie` set as ``index.lie``: it answers a wheel's request
itself (an endless body, a drip, a forged header, a redirect). The lies used by the hostile
tests are here, each a small function of the handler and the file's bytes.
"""

from __future__ import annotations

import hashlib
import html
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


@dataclass(frozen=True)
class Served:
    """One request: its path, its Range header (None without), the status and body bytes sent."""

    path: str
    range: str | None
    status: int
    sent: int
    authorization: str | None = None
    proxy_authorization: str | None = None


@dataclass
class RangeIndex:
    """The server's state: where the wheels are, how it misbehaves, what it served."""

    directory: Path
    port: int = 0
    ignore_range: bool = False
    missing: set[str] = field(default_factory=set)
    fail_next: int = 0
    lie: Lie | None = None
    log: list[Served] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def simple(self) -> str:
        return f"{self.url}/simple"

    def file_url(self, filename: str) -> str:
        return f"{self.url}/files/{filename}"

    def pinned_url(self, filename: str) -> str:
        """:meth:`file_url` with the file's sha256 as its fragment, as a repair from a lock names it."""
        digest = hashlib.sha256((self.directory / filename).read_bytes()).hexdigest()
        return f"{self.file_url(filename)}#sha256={digest}"

    def wheel_requests(self) -> list[Served]:
        return [s for s in self.log if "/files/" in s.path]

    def clear(self) -> None:
        with self.lock:
            self.log.clear()


def _handler(index: RangeIndex) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            head = self.command == "HEAD"
            # Logged before the client can have the answer, so a test reading the log sees it.
            with index.lock:
                index.log.append(
                    Served(
                        self.path,
                        self.headers.get("Range"),
                        status,
                        0 if head else len(body),
                        self.headers.get("Authorization"),
                        self.headers.get("Proxy-Authorization"),
                    )
                )
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            with index.lock:
                failing = index.fail_next > 0
                index.fail_next -= failing
            if failing:
                self._send(503, b"try again")
                return
            # A proxy is asked for the absolute URL: it serves the path from its own directory.
            path = re.sub(r"^https?://[^/]*", "", self.path.split("?")[0])
            if path.rstrip("/") == "/simple":
                names = sorted({str(canonicalize_name(parse_wheel_filename(p.name)[0])) for p in self._wheels()})
                links = "".join(f'<a href="/simple/{n}/">{n}</a>\n' for n in names)
                self._send(200, f"<html><body>{links}</body></html>".encode(), {"Content-Type": "text/html"})
            elif path.startswith("/simple/"):
                wanted = canonicalize_name(path.removeprefix("/simple/").strip("/"))
                links = ""
                for wheel in self._wheels():
                    if canonicalize_name(parse_wheel_filename(wheel.name)[0]) == wanted:
                        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
                        links += f'<a href="/files/{html.escape(wheel.name)}#sha256={digest}">{wheel.name}</a>\n'
                if not links:
                    self._send(404, b"no such project")
                    return
                self._send(200, f"<html><body>{links}</body></html>".encode(), {"Content-Type": "text/html"})
            elif path.startswith("/files/"):
                name = path.removeprefix("/files/")
                target = index.directory / name
                if name in index.missing or "/" in name or not target.is_file():
                    self._send(404, b"not found")
                    return
                if index.lie is not None and index.lie(self, target.read_bytes()):
                    with index.lock:
                        index.log.append(Served(self.path, self.headers.get("Range"), 0, 0))
                    return
                self._file(target.read_bytes())
            else:
                self._send(404, b"not found")

        def _wheels(self) -> list[Path]:
            return sorted(p for p in index.directory.glob("*.whl") if p.name not in index.missing)

        def _file(self, data: bytes) -> None:
            header = self.headers.get("Range")
            match = _RANGE.fullmatch(header or "")
            if header is None or index.ignore_range or match is None:
                self._send(200, data, {"Accept-Ranges": "none" if index.ignore_range else "bytes"})
                return
            first, last = match.groups()
            size = len(data)
            if first == "":
                start, end = max(0, size - int(last)), size
            else:
                start, end = int(first), min(size, int(last) + 1) if last else size
            if start >= size or start >= end:
                self._send(416, b"", {"Content-Range": f"bytes */{size}"})
                return
            self._send(206, data[start:end], {"Content-Range": f"bytes {start}-{end - 1}/{size}"})

    return Handler


Lie = Callable[[BaseHTTPRequestHandler, bytes], bool]
"""Answers a wheel's request itself (True), or leaves it to the honest server (False)."""


def _head(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()


def _until_closed(write: Callable[[], None]) -> bool:
    """Write until the client goes away (it is expected to)."""
    try:
        while True:
            write()
    except OSError:
        pass
    return True


def endless(handler: BaseHTTPRequestHandler, data: bytes) -> bool:
    """200, no length, Range ignored: the wheel, then zeros for ever."""
    handler.close_connection = True
    _head(handler, 200, {"Connection": "close"})
    block = b"\0" * (1 << 20)
    pieces = iter([data])
    return _until_closed(lambda: handler.wfile.write(next(pieces, block)))


def drip(every: float, *, headers: bool = False) -> Lie:
    """One byte every ``every`` seconds: of the status line and headers (``headers``), else of a whole-file body."""

    def lie(handler: BaseHTTPRequestHandler, data: bytes) -> bool:
        handler.close_connection = True
        if headers:
            text = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 10_000 + b"\r\n\r\n"
        else:
            _head(handler, 200, {"Content-Length": str(len(data)), "Connection": "close"})
            text = data
        position = iter(range(len(text)))

        def one() -> None:
            i = next(position, None)
            if i is None:
                raise OSError("all sent")
            handler.wfile.write(text[i : i + 1])
            handler.wfile.flush()
            if getattr(handler.server, "stopping", threading.Event()).wait(every):
                raise OSError("the server is closing")

        return _until_closed(one)

    return lie


def answer(status: int, headers: dict[str, str], body: bytes = b"") -> Lie:
    """The same forged answer to every wheel request (a Content-Range that lies, a Retry-After of days, ...)."""

    def lie(handler: BaseHTTPRequestHandler, data: bytes) -> bool:
        _head(handler, status, {**headers, "Content-Length": headers.get("Content-Length", str(len(body)))})
        handler.wfile.write(body)
        return True

    return lie


def redirect(to: Callable[[str], str]) -> Lie:
    """A 302 to ``to(file name)`` (another host, another scheme)."""

    def lie(handler: BaseHTTPRequestHandler, data: bytes) -> bool:
        name = handler.path.rpartition("/")[2]
        _head(handler, 302, {"Location": to(name), "Content-Length": "0"})
        return True

    return lie


@contextmanager
def range_index(directory: Path) -> Iterator[RangeIndex]:
    """Serve ``directory``'s wheels on 127.0.0.1 (a free port) until the block ends."""
    index = RangeIndex(directory)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(index))
    server.daemon_threads = True
    server.stopping = threading.Event()  # read by drip(): a wait it ends at once
    index.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.stopping.set()  # a drip wakes at once and ends
        server.shutdown()
        server.server_close()
        thread.join()
        # No request's thread outlives the block (each ends once its client is gone): a test after it
        # that forks must find this process single-threaded again.
        for other in threading.enumerate():
            if "process_request_thread" in other.name:
                other.join(timeout=10)
