"""HTTP(S) GETs for locked wheels: pooled, proxied, authenticated, and bounded in bytes, time and hops.

urllib3 (imported here, lazily by callers: never at ``import wheeldoctor``) with the
system's CA store (``ssl.create_default_context()``), proxies from the environment
(``urllib.request.getproxies``/``proxy_bypass``: ``HTTPS_PROXY``, ``NO_PROXY``) and
credentials from the URL or ``~/.netrc``. Every message names URLs through
:func:`~wheeldoctor.model.credentials.redact`. Failures are :class:`HttpError`: one line.

A server's answers are not trusted. Every header number is parsed with a limit; a 206's
body is exactly the range asked for; a 200's is at most the caller's limit and goes to the
caller's sink, never to memory; no content encoding is accepted. Each wheel has a
:class:`Deadline`, which a watchdog thread enforces by shutting the wheel's sockets down,
so that neither a server that sends one byte every few seconds (which no per-read timeout
trips) nor one that drips its headers or its TLS handshake outlives it. Retries, their waits
and ``Retry-After`` are bounded; redirects are followed at most :data:`REDIRECTS` times,
never from https to http, and one that leaves the URL's host is told to the caller and
carries no credentials.
"""

from __future__ import annotations

import base64
import re
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wheeldoctor.model.credentials import redact

if TYPE_CHECKING:
    import urllib3

#: Connect and per-read timeouts (seconds) for one attempt; never longer than the wheel's deadline.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
#: Attempts after the first on a reset, a timeout, a 429 or a 5xx; the waits double from BACKOFF.
RETRIES = 3
BACKOFF = 0.25
#: The longest wait a ``Retry-After`` gets (a larger one is cut to this).
RETRY_AFTER_MAX = 10.0
#: Redirects followed for one request.
REDIRECTS = 5
#: Each wheel's time: this many seconds, and one more for every EARNED_RATE bytes it has received.
WHEEL_SECONDS = 60.0
EARNED_RATE = 1 << 20
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 1 << 16
_USER_AGENT = "wheeldoctor (lock RECORD fetcher)"
#: Header numbers: digits only, and few enough that no answer can make a huge integer.
_NUMBER = re.compile(r"[0-9]{1,15}")
_CONTENT_RANGE = re.compile(r"bytes ([0-9]{1,15})-([0-9]{1,15})/([0-9]{1,15}|\*)")
_RETRY_AFTER = re.compile(r"[0-9]{1,6}")


class HttpError(ValueError):
    """A request failed for good; the message is one line, its URL redacted."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def host_of(url: str) -> str:
    """The host (and port) of ``url``, with no credential."""
    return urllib.parse.urlsplit(url).netloc.rpartition("@")[2]


class Deadline:
    """One wheel's time: ``seconds``, and one second more for every ``rate`` bytes received.

    A wheel that must be downloaded whole (a few GiB) may take as long as its bytes keep
    coming at ``rate`` on average; a server that stalls or drips is cut off ``seconds`` in.
    """

    def __init__(self, seconds: float = WHEEL_SECONDS, rate: int = EARNED_RATE) -> None:
        self.seconds = seconds
        self.rate = rate
        self.received = 0
        self._start = time.monotonic()

    def left(self) -> float:
        """Seconds left; zero or less once it has passed."""
        return self._start + self.seconds + self.received / self.rate - time.monotonic()

    def allowed(self) -> float:
        """The seconds it allows with what has been received so far."""
        return self.seconds + self.received / self.rate


@dataclass(frozen=True, slots=True, kw_only=True)
class Response:
    """What came back: a 206's bytes, or how many bytes of a 200 went to the sink."""

    status: int
    body: bytes
    """A 206's bytes: exactly the range asked for. Empty for a 200 (its bytes went to the sink)."""
    total: int | None
    """From a 206's ``Content-Range: bytes a-b/TOTAL``; None otherwise."""
    received: int
    moved: str | None = None
    """The host a redirect took the request to, when it is not the URL's own."""


@dataclass(eq=False)
class _Watch:
    """The sockets one request has used, and the deadline that ends them."""

    deadline: Deadline
    fds: set[int] = field(default_factory=set)
    expired: bool = False


class _Watchdog:
    """One thread that shuts the sockets of a request down when its deadline passes, whatever the read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._watches: set[_Watch] = set()
        self._local = threading.local()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._aborted = False

    @contextmanager
    def watching(self, deadline: Deadline) -> Iterator[_Watch]:
        """Watch every socket this thread opens or reuses until the block ends."""
        watch = _Watch(deadline, expired=self._aborted)
        with self._lock:
            self._watches.add(watch)
            if self._thread is None:
                self._stopping = False
                self._thread = threading.Thread(target=self._run, name="wheeldoctor-deadlines", daemon=True)
                self._thread.start()
            self._wake.notify()
        self._local.watch = watch
        try:
            yield watch
        finally:
            self._local.watch = None
            with self._lock:
                self._watches.discard(watch)

    def add(self, fd: int) -> None:
        """The socket ``fd`` serves this thread's request now."""
        watch: _Watch | None = getattr(self._local, "watch", None)
        if watch is not None and fd >= 0:
            with self._lock:
                watch.fds.add(fd)
                if watch.expired:  # ended before this socket was made
                    _shutdown(fd)

    def clear(self) -> None:
        """This thread's request closed its sockets (a retry, a redirect): their numbers may soon name other files."""
        watch: _Watch | None = getattr(self._local, "watch", None)
        if watch is not None:
            with self._lock:
                watch.fds.clear()

    def expire_all(self) -> None:
        """Every request, watched now or later, ends at once (the run is over: another wheel failed)."""
        with self._lock:
            self._aborted = True
            for watch in self._watches:
                watch.expired = True
                for fd in watch.fds:
                    _shutdown(fd)

    def stop(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            self._stopping = True
            self._wake.notify()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        with self._lock:
            while not self._stopping:
                waits = []
                for watch in self._watches:
                    if watch.expired:
                        continue
                    left = watch.deadline.left()
                    if left <= 0:
                        watch.expired = True
                        for fd in watch.fds:
                            _shutdown(fd)
                    else:
                        waits.append(left)
                # A deadline only moves later (bytes earn time): waking at the nearest one and looking again is enough.
                self._wake.wait(min(waits) + 0.01 if waits else None)


def _shutdown(fd: int) -> None:
    """Shut the socket ``fd`` down for both directions: a blocked read there returns at once."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        return  # closed already, or not a socket
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.detach()


def _pool_classes(watchdog: _Watchdog) -> dict[str, Any]:
    """urllib3's pool classes, whose connections tell ``watchdog`` each socket they open or reuse.

    Not when they close: ``http.client`` closes a connection whose answer ends with the
    socket, while the answer still reads from that socket. A request forgets its sockets
    itself, each time it closes an answer (:meth:`_Watchdog.clear`).
    """
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    def watched(base: type[HTTPConnection]) -> type[HTTPConnection]:
        class Watched(base):  # type: ignore[valid-type,misc]
            _watched_fd = -1

            def _new_conn(self) -> socket.socket:
                sock: socket.socket = super()._new_conn()
                self._watched_fd = sock.fileno()  # TLS wraps this very descriptor
                watchdog.add(self._watched_fd)
                return sock

            def request(self, *args: Any, **kwargs: Any) -> None:
                if self.sock is not None:  # a pooled connection, reused by another wheel's request
                    watchdog.add(self._watched_fd)
                super().request(*args, **kwargs)

        return Watched

    class Pool(HTTPConnectionPool):
        ConnectionCls = watched(HTTPConnection)

    class TlsPool(HTTPSConnectionPool):
        ConnectionCls = watched(HTTPSConnection)  # type: ignore[assignment]

    return {"http": Pool, "https": TlsPool}


class Client:
    """One pool of connections per host, shared by the fetcher's threads."""

    def __init__(self, *, max_connections: int = 8) -> None:
        import urllib3

        self._urllib3 = urllib3
        self._context = ssl.create_default_context()
        self._max = max_connections
        self._watchdog = _Watchdog()
        self._pools = _pool_classes(self._watchdog)
        self._direct = urllib3.PoolManager(num_pools=32, maxsize=max_connections, ssl_context=self._context)
        self._direct.pool_classes_by_scheme = self._pools
        self._proxies: dict[str, urllib3.ProxyManager] = {}
        self._lock = threading.Lock()
        self._netrc: object = None

    def _manager(self, url: str) -> urllib3.PoolManager:
        parts = urllib.parse.urlsplit(url)
        proxy = urllib.request.getproxies().get(parts.scheme)
        if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
            return self._direct
        with self._lock:
            manager = self._proxies.get(proxy)
            if manager is None:
                # urllib3 sends no Proxy-Authorization of its own: the proxy URL's user:password is made one.
                found = urllib.parse.urlsplit(proxy)
                headers = None
                if found.username is not None:
                    user = urllib.parse.unquote(found.username)
                    password = urllib.parse.unquote(found.password or "")
                    headers = self._urllib3.make_headers(proxy_basic_auth=f"{user}:{password}")
                bare = urllib.parse.urlunsplit(found._replace(netloc=found.netloc.rpartition("@")[2]))
                manager = self._proxies[proxy] = self._urllib3.ProxyManager(
                    bare, num_pools=32, maxsize=self._max, ssl_context=self._context, proxy_headers=headers
                )
                manager.pool_classes_by_scheme = self._pools
            return manager

    def _authorization(self, parts: urllib.parse.SplitResult) -> str | None:
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
        else:
            found = self._from_netrc(parts.hostname or "")
            if found is None:
                return None
            user, password = found
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        return f"Basic {token}"

    def _from_netrc(self, host: str) -> tuple[str, str] | None:
        import netrc

        with self._lock:
            if self._netrc is None:
                try:
                    self._netrc = netrc.netrc()
                except (OSError, netrc.NetrcParseError):
                    self._netrc = False  # none, or unreadable: no credential from it
        if not isinstance(self._netrc, netrc.netrc):
            return None
        entry = self._netrc.authenticators(host)
        if entry is None:
            return None
        return entry[0] or "", entry[2] or ""

    def get(
        self,
        url: str,
        *,
        deadline: Deadline,
        byte_range: tuple[int, int] | int | None = None,
        sink: Callable[[bytes], object] | None = None,
        limit: int = 0,
    ) -> Response:
        """GET ``url``: ``byte_range`` is ``(start, end)`` (end exclusive) or a suffix length.

        A 206 must be exactly the range asked for; its bytes come back. A 200 goes to
        ``sink``, at most ``limit`` bytes; without a sink, a 200 to a ranged request is an
        error (the server stopped honouring Range). Raises :class:`HttpError`.
        """
        with self._watchdog.watching(deadline) as watch:
            try:
                response = self._get(url, watch, byte_range, sink, limit)
            except HttpError:
                if watch.expired or deadline.left() <= 0:
                    raise self._late(url, deadline) from None
                raise
            except self._urllib3.exceptions.HTTPError as e:
                if watch.expired or deadline.left() <= 0:
                    raise self._late(url, deadline) from None
                raise HttpError(f"{redact(url)}: transfer failed: {_reason(e)}") from None
            if watch.expired:  # the body ended because its socket was shut down: it is not whole
                raise self._late(url, deadline)
            return response

    @staticmethod
    def _late(url: str, deadline: Deadline) -> HttpError:
        return HttpError(f"{redact(url)}: no complete answer within {deadline.allowed():.0f} s (the wheel's deadline)")

    def _get(
        self,
        url: str,
        watch: _Watch,
        byte_range: tuple[int, int] | int | None,
        sink: Callable[[bytes], object] | None,
        limit: int,
    ) -> Response:
        parts = urllib.parse.urlsplit(url)
        origin = (parts.scheme.lower(), parts.netloc.rpartition("@")[2].lower())
        target = urllib.parse.urlunsplit(parts._replace(netloc=origin[1]))
        headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "identity"}
        if byte_range is not None:
            headers["Range"] = _range_header(byte_range)
        authorization = self._authorization(parts)
        if authorization is not None:
            headers["Authorization"] = authorization
        attempt = redirects = 0
        moved = None
        while True:
            response = self._send(url, target, headers, watch, attempt)
            if response is None:
                attempt += 1
                continue
            status = response.status
            if status in _REDIRECT_STATUS and response.headers.get("Location"):
                _discard(response)
                self._watchdog.clear()
                redirects += 1
                if redirects > REDIRECTS:
                    raise HttpError(f"{redact(url)}: more than {REDIRECTS} redirects")
                target = _redirected(url, target, response.headers["Location"], origin[0])
                if host_of(target).lower() != origin[1]:
                    moved = host_of(target)
                    headers.pop("Authorization", None)  # credentials are the URL's host's alone
                continue
            if status in _RETRY_STATUS and attempt < RETRIES:
                wait = _retry_after(response.headers.get("Retry-After"), BACKOFF * 2**attempt)
                _discard(response)
                self._watchdog.clear()
                time.sleep(max(0.0, min(wait, watch.deadline.left())))
                attempt += 1
                continue
            try:
                return self._answer(url, response, watch.deadline, byte_range, sink, limit, moved)
            except BaseException:
                _discard(response)  # what is left of it is not read: the connection is not reused
                raise
            finally:
                response.release_conn()

    def _send(
        self, url: str, target: str, headers: dict[str, str], watch: _Watch, attempt: int
    ) -> urllib3.BaseHTTPResponse | None:
        """One attempt; None when it failed in a way worth another (and attempts are left)."""
        urllib3 = self._urllib3
        deadline = watch.deadline
        left = deadline.left()
        if left <= 0 or watch.expired:
            raise HttpError("the deadline passed")  # get() words it
        timeout = urllib3.Timeout(connect=min(CONNECT_TIMEOUT, left), read=min(READ_TIMEOUT, left))
        try:
            return self._manager(target).urlopen(
                "GET",
                target,
                headers=headers,
                timeout=timeout,
                retries=False,
                redirect=False,
                preload_content=False,
                decode_content=False,
            )
        except urllib3.exceptions.SSLError as e:
            raise HttpError(f"cannot reach {host_of(url)}: {_reason(e)}") from None
        except urllib3.exceptions.HTTPError as e:
            if attempt >= RETRIES or deadline.left() <= 0:
                raise HttpError(f"cannot reach {host_of(target)}: {_reason(e)}") from None
        self._watchdog.clear()  # urllib3 closed the connection that failed
        time.sleep(max(0.0, min(BACKOFF * 2**attempt, deadline.left())))
        return None

    def _answer(
        self,
        url: str,
        response: urllib3.BaseHTTPResponse,
        deadline: Deadline,
        byte_range: tuple[int, int] | int | None,
        sink: Callable[[bytes], object] | None,
        limit: int,
        moved: str | None,
    ) -> Response:
        status = response.status
        if status >= 400 or status not in (200, 206):
            known = {404: "not found (404)", 416: "range not satisfiable (416)"}
            raise HttpError(f"{redact(url)}: {known.get(status, f'HTTP {status}')}", status=status)
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise HttpError(f"{redact(url)}: sent Content-Encoding {encoding[:40]!r}, which was not asked for")
        length = _number(url, response.headers.get("Content-Length"))
        if status == 206:
            if byte_range is None:
                raise HttpError(f"{redact(url)}: a 206 to a request without Range")
            start, end, total = _content_range(url, response.headers.get("Content-Range"), byte_range)
            if length is not None and length != end - start:
                raise HttpError(f"{redact(url)}: Content-Length {length} for a range of {end - start} bytes")
            body = bytearray()
            received = _stream(response, end - start, deadline, body.extend)
            if received != end - start:
                raise HttpError(f"{redact(url)}: {received} bytes for a range of {end - start}")
            if length is None:  # framed by chunks or by closing: what follows is not read, so not reused
                _discard(response)
            return Response(status=206, body=bytes(body), total=total, received=received, moved=moved)
        if sink is None:
            raise HttpError(f"{redact(url)}: the server stopped honouring Range", status=status)
        if length is not None and length > limit:
            raise HttpError(f"{redact(url)}: says {length} bytes, more than {limit} allowed", status=status)
        received = _stream(response, limit, deadline, sink)
        if received > limit:
            raise HttpError(f"{redact(url)}: more than {limit} bytes", status=status)
        return Response(status=200, body=b"", total=None, received=received, moved=moved)

    def abort(self) -> None:
        """End every request in flight now: each raises :class:`HttpError` in its own thread."""
        self._watchdog.expire_all()

    def close(self) -> None:
        """Close every pooled connection, and end the watchdog's thread."""
        self._watchdog.stop()
        self._direct.clear()
        for manager in self._proxies.values():
            manager.clear()


def _stream(response: urllib3.BaseHTTPResponse, limit: int, deadline: Deadline, sink: Callable[[bytes], object]) -> int:
    """The body to ``sink``, at most ``limit`` bytes; the count, or ``limit + 1`` when more came (then it is closed).

    The byte past ``limit`` is asked for only where the body has not said its length is ``limit``.
    """
    received = 0
    framed = getattr(response, "length_remaining", None) is not None
    while received < limit or not framed:
        want = min(_CHUNK, limit + 1 - received)
        chunk = response.read(want)
        if not chunk:
            return received
        received += len(chunk)
        deadline.received += len(chunk)
        if received > limit:
            _discard(response)
            return limit + 1
        sink(chunk)
    return received


def _discard(response: urllib3.BaseHTTPResponse) -> None:
    """Close an answer without reading the rest of it (an endless body must not be drained)."""
    response.close()


def _range_header(byte_range: tuple[int, int] | int) -> str:
    if isinstance(byte_range, int):
        return f"bytes=-{byte_range}"
    start, end = byte_range
    return f"bytes={start}-{end - 1}"


def _number(url: str, value: str | None) -> int | None:
    """A header's decimal number, or None when there is none; anything but 1-15 digits is refused."""
    if value is None:
        return None
    value = value.strip()
    if not _NUMBER.fullmatch(value):
        raise HttpError(f"{redact(url)}: a Content-Length that is not a number: {value[:40]!r}")
    return int(value)


def _content_range(url: str, value: str | None, asked: tuple[int, int] | int) -> tuple[int, int, int | None]:
    """(start, end exclusive, total) of a 206, which must be exactly the range asked for."""
    found = _CONTENT_RANGE.fullmatch((value or "").strip())
    if found is None:
        raise HttpError(f"{redact(url)}: a 206 with no valid Content-Range ({(value or '')[:60]!r})")
    start, last = int(found[1]), int(found[2])
    total = None if found[3] == "*" else int(found[3])
    end = last + 1
    if isinstance(asked, int):
        fits = total is not None and end == total and end - start == min(asked, total)
    else:
        fits = (start, end) == asked and (total is None or end <= total)
    if not fits or start >= end:
        raise HttpError(f"{redact(url)}: the server sent bytes {start}-{last} for another range")
    return start, end, total


def _retry_after(value: str | None, backoff: float) -> float:
    """The seconds to wait: ``Retry-After`` in seconds if it is one, at most RETRY_AFTER_MAX; else ``backoff``."""
    if value is not None and _RETRY_AFTER.fullmatch(value.strip()):
        return min(float(value.strip()), RETRY_AFTER_MAX)
    return backoff  # an HTTP date, or nonsense: the usual backoff


def _redirected(url: str, current: str, location: str, scheme: str) -> str:
    """Where a redirect goes: http(s) only, never from https down to http, never with credentials."""
    try:
        moved = urllib.parse.urlsplit(urllib.parse.urljoin(current, location.strip()))
    except ValueError:
        raise HttpError(f"{redact(url)}: redirected to an unparsable Location") from None
    if moved.scheme.lower() not in ("http", "https") or not moved.hostname:
        raise HttpError(f"{redact(url)}: redirected to a URL that is not http(s)")
    if scheme == "https" and moved.scheme.lower() != "https":
        raise HttpError(f"{redact(url)}: redirected from https to http: refused")
    return urllib.parse.urlunsplit(moved._replace(netloc=moved.netloc.rpartition("@")[2]))


def _reason(error: object) -> str:
    """A one-line reason without URLs (urllib3 puts the whole URL, credentials and all, in some)."""
    name = type(error).__name__
    known = {
        "NewConnectionError": "connection failed",
        "NameResolutionError": "name does not resolve",
        "ConnectTimeoutError": "connection timed out",
        "ReadTimeoutError": "read timed out",
        "ProtocolError": "connection reset",
        "SSLError": "TLS verification failed",
        "ProxyError": "proxy refused or unreachable",
        "ResponseError": "too many error responses",
    }
    return known.get(name, name)
