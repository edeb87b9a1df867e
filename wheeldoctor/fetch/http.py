"""HTTP(S) GETs for locked wheels: pooled, retried, proxied, authenticated, never leaking a credential.

urllib3 (imported here, lazily by callers: never at ``import wheeldoctor``) with the
system's CA store (``ssl.create_default_context()``), proxies from the environment
(``urllib.request.getproxies``/``proxy_bypass``: ``HTTPS_PROXY``, ``NO_PROXY``) and
credentials from the URL or ``~/.netrc``. Every message names URLs through
:func:`redact`. Failures are :class:`HttpError`: one line for the user.
"""

from __future__ import annotations

import base64
import ssl
import threading
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoctor.model.credentials import redact

if TYPE_CHECKING:
    import urllib3

#: Connect and read timeouts (seconds) for one attempt.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
#: Attempts after the first on a reset, a timeout or a 5xx; the waits double from BACKOFF.
RETRIES = 3
BACKOFF = 0.25
_USER_AGENT = "wheeldoctor (lock RECORD fetcher)"


class HttpError(ValueError):
    """A request failed for good; the message is one line, its URL redacted."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def host_of(url: str) -> str:
    """The host (and port) of ``url``, with no credential."""
    return urllib.parse.urlsplit(url).netloc.rpartition("@")[2]


@dataclass(frozen=True, slots=True)
class Response:
    """What came back: the status, the body, and the total size a 206 named."""

    status: int
    body: bytes
    total: int | None
    """From ``Content-Range: bytes a-b/TOTAL`` of a 206; None otherwise."""


class Client:
    """One pool of connections per host, shared by the fetcher's threads."""

    def __init__(self, *, max_connections: int = 8) -> None:
        import urllib3

        self._urllib3 = urllib3
        self._context = ssl.create_default_context()
        self._retry = urllib3.Retry(
            total=RETRIES,
            connect=RETRIES,
            read=RETRIES,
            status=RETRIES,
            backoff_factor=BACKOFF,
            status_forcelist=(500, 502, 503, 504),
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,
            respect_retry_after_header=True,
        )
        self._timeout = urllib3.Timeout(connect=CONNECT_TIMEOUT, read=READ_TIMEOUT)
        self._max = max_connections
        self._direct = urllib3.PoolManager(
            num_pools=32, maxsize=max_connections, ssl_context=self._context, retries=self._retry
        )
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
                    bare,
                    num_pools=32,
                    maxsize=self._max,
                    ssl_context=self._context,
                    retries=self._retry,
                    proxy_headers=headers,
                )
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

    def get(self, url: str, *, byte_range: str | None = None, limit: int) -> Response:
        """GET ``url`` (``byte_range`` as ``bytes=…``), reading at most ``limit`` bytes of body.

        A 404, other 4xx, a 5xx left after the retries, a body over ``limit`` or an
        unreachable host raise :class:`HttpError`. A 200 to a ranged request is returned
        as it came: the server ignored ``Range`` and sent the whole file.
        """
        parts = urllib.parse.urlsplit(url)
        bare = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "identity"}
        if byte_range is not None:
            headers["Range"] = byte_range
        authorization = self._authorization(parts)
        if authorization is not None:
            headers["Authorization"] = authorization
        urllib3 = self._urllib3
        try:
            response = self._manager(url).request(
                "GET", bare, headers=headers, timeout=self._timeout, preload_content=False, redirect=True
            )
        except urllib3.exceptions.MaxRetryError as e:
            raise HttpError(f"cannot reach {host_of(url)}: {_reason(e.reason)}") from None
        except urllib3.exceptions.HTTPError as e:
            raise HttpError(f"cannot reach {host_of(url)}: {_reason(e)}") from None
        try:
            if response.status == 404:
                raise HttpError(f"{redact(url)}: not found (404)", status=404)
            if response.status == 416:
                raise HttpError(f"{redact(url)}: range not satisfiable (416)", status=416)
            if response.status >= 400:
                raise HttpError(f"{redact(url)}: HTTP {response.status}", status=response.status)
            body = bytearray()
            try:
                for chunk in response.stream(1 << 16):
                    body += chunk
                    if len(body) > limit:
                        raise HttpError(f"{redact(url)}: more than {limit} bytes", status=response.status)
            except urllib3.exceptions.HTTPError as e:
                raise HttpError(f"{redact(url)}: transfer failed: {_reason(e)}") from None
            total = None
            if response.status == 206:
                content_range = response.headers.get("Content-Range", "")
                _, _, size = content_range.rpartition("/")
                total = int(size) if size.isdigit() else None
            return Response(response.status, bytes(body), total)
        finally:
            response.release_conn()

    def close(self) -> None:
        """Close every pooled connection."""
        self._direct.clear()
        for manager in self._proxies.values():
            manager.clear()


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
