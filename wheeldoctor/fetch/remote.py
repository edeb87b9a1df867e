"""Locked wheels' RECORDs: from a local file, the cache, or the index by HTTP range requests.

For each :class:`~wheeldoctor.formats.lock.LockedWheel`, in this order:

1. a local file: ``--find-links DIR``/the file name, else the path or ``file:`` URL the
   lock names, which must lie inside the lock's own folder. Its size is compared with the
   lock's before a byte is read; then it is hashed, and trusted only when its sha256 is the
   lock's;
2. the RECORD cache, keyed by the wheel's locked sha256 (``records/`` under the cache
   directory, same trust rules as the verification cache);
3. the lock's http(s) URL: the zip's tail (end record and, mostly, the central directory)
   by a suffix ``Range``, then only the ``.dist-info/RECORD`` and ``METADATA`` members and the
   start-up hooks the wheel would install (:mod:`wheeldoctor.fetch.wheel_read`). A
   server that ignores ``Range`` sends the whole wheel: it is then used (and hashed), and
   the result says so. A wheel small enough to come whole in the first answer is hashed too.
   ``verify_wheels`` downloads every wheel whole and checks its hash against the lock.

Every read is bounded: a whole download goes to an unnamed temporary file (never to
memory), at most the lock's size (:data:`DOWNLOAD_LIMIT`), or :data:`UNSIZED_LIMIT` when
the lock gives none, and, where a server ignores Range and ``verify_wheels`` did not ask
for whole wheels, :data:`UNASKED_LIMIT` over the run; reads by range at most
:data:`RANGED_LIMIT` per wheel; the central directory, RECORD and METADATA at most
:data:`CENTRAL_LIMIT` and :data:`MEMBER_LIMIT`; the RECORDs and METADATA kept for one run
at most :data:`KEPT_LIMIT`; each wheel's time by its :class:`~wheeldoctor.fetch.http.Deadline`.

Wheels are fetched by a bounded thread pool. A wheel that is broken (hash or size not the
lock's, no or several RECORDs, not a zip) gives findings; a wheel that cannot be fetched
at all (404, host unreachable, a bound passed) raises :class:`FetchError`, one line, or
with ``keep_going`` is a WD086 finding of its own while the others are fetched. The
run's own bounds (the RECORDs kept, whole wheels unasked) always raise.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import IO, TYPE_CHECKING

from wheeldoctor.fetch.sources import MIN_FETCH, FileSource, RangedSource, SourceError
from wheeldoctor.fetch.wheel_read import (
    CENTRAL_LIMIT,
    MEMBER_LIMIT,
    FetchError,
    broken,
    hash_finding,
    mib,
    read_local,
    read_members,
    read_whole,
    size_finding,
    unfetched,
    whole_limit,
)
from wheeldoctor.formats.lock_fetched import FetchedRecord
from wheeldoctor.formats.wheel_hooks import HOOK_BYTES, HOOK_COUNT, HookMember
from wheeldoctor.model.credentials import redact

if TYPE_CHECKING:
    from wheeldoctor.fetch.http import Client, Deadline
    from wheeldoctor.formats.lock import LockedWheel

#: Threads fetching at once (and connections per host).
JOBS = 8
#: The first, suffix range: most wheels' central directory fits in it.
TAIL_BYTES = 256 << 10
#: Most bytes read by range for one wheel (the tail, the central directory, RECORD, METADATA and the hooks).
RANGED_LIMIT = TAIL_BYTES + CENTRAL_LIMIT + 2 * MEMBER_LIMIT + HOOK_BYTES + HOOK_COUNT * (MIN_FETCH + 4096) + (1 << 20)
#: Bytes of whole wheels one run takes from servers that ignore Range when --verify-wheels did not ask for them.
UNASKED_LIMIT = 1 << 30
#: RECORD, METADATA and start-up hook bytes kept for one run, over every wheel.
KEPT_LIMIT = 256 << 20
_CACHE_FORMAT = 2
_CHUNK = 1 << 20

Progress = Callable[[int, int, "LockedWheel"], None]
"""Called after each wheel: (done, total, wheel)."""


class Fetcher:
    """Fetches locked wheels' RECORDs; one per command run (it holds the connection pool)."""

    def __init__(
        self,
        *,
        cache_dir: str | None,
        find_links: Sequence[str] = (),
        verify_wheels: bool = False,
        jobs: int = JOBS,
        seconds: float | None = None,
    ) -> None:
        """``seconds``: each wheel's deadline before the time its bytes earn (:class:`.http.Deadline`)."""
        self.cache_dir = os.path.join(cache_dir, "records") if cache_dir else None
        self.find_links = tuple(find_links)
        self.verify_wheels = verify_wheels
        self.jobs = jobs
        self.seconds = seconds
        self._client: Client | None = None
        self._unasked = 0
        self._unasked_lock = threading.Lock()

    def client(self) -> Client:
        """The HTTP client, made (and urllib3 imported) on the first network fetch."""
        if self._client is None:
            from wheeldoctor.fetch.http import Client

            self._client = Client(max_connections=self.jobs)
        return self._client

    def fetch_all(
        self,
        wheels: Sequence[LockedWheel],
        progress: Progress | None = None,
        *,
        lock_dir: str | None = None,
        keep_going: bool = False,
    ) -> list[FetchedRecord]:
        """Every wheel's RECORD, in the given order; the first failure raises FetchError.

        ``lock_dir``: the lock's folder, the only place a path or ``file:`` URL of the lock
        may name (None: no such path is read). ``keep_going``: a wheel that cannot be had
        is a finding of its own (:func:`unfetched`), and the others are still fetched.
        """
        local = [self._without_network(w, lock_dir, keep_going) for w in wheels]
        results: list[FetchedRecord | None] = list(local)
        pending = [i for i, r in enumerate(local) if r is None]
        done = len(wheels) - len(pending)
        kept = sum(_kept(r) for r in local if r is not None)
        if progress is not None and done:
            progress(done, len(wheels), wheels[0])
        try:
            if pending:
                self.client()  # one client for every thread, made here: its threads race to make it otherwise
                with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                    futures = {pool.submit(self._from_network, wheels[i], keep_going): i for i in pending}
                    remaining = set(futures)
                    while remaining:
                        finished, remaining = wait(remaining, return_when=FIRST_EXCEPTION)
                        for future in finished:
                            error = future.exception()
                            if error is not None:
                                self._abort(remaining)
                                raise error
                            index = futures[future]
                            results[index] = future.result()
                            kept += _kept(future.result())
                            if kept > KEPT_LIMIT:
                                self._abort(remaining)
                                raise FetchError(f"the lock's RECORDs and METADATA pass {mib(KEPT_LIMIT)}")
                            done += 1
                            if progress is not None:
                                progress(done, len(wheels), wheels[index])
            if kept > KEPT_LIMIT:
                raise FetchError(f"the lock's RECORDs and METADATA pass {mib(KEPT_LIMIT)}")
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None
        return [r for r in results if r is not None]

    def _abort(self, remaining: set[Future[FetchedRecord]]) -> None:
        """Stop what is still running: the pool waits for it before the error goes out."""
        for other in remaining:
            other.cancel()
        if self._client is not None:
            self._client.abort()

    # Without the network -----------------------------------------------------------------

    def _without_network(self, wheel: LockedWheel, lock_dir: str | None, keep_going: bool) -> FetchedRecord | None:
        path = self._local_path(wheel, lock_dir)
        if path is not None:
            try:
                return read_local(wheel, path)
            except FetchError as e:
                if keep_going:
                    return unfetched(wheel, str(e))
                raise
        cached = self._cached(wheel)
        if cached is not None:
            return cached
        if wheel.url is None:
            where = wheel.path or wheel.filename
            message = f"{where}: no such wheel file, and the lock gives no URL"
            if keep_going:
                return unfetched(wheel, message)
            raise FetchError(message)
        return None

    def _local_path(self, wheel: LockedWheel, lock_dir: str | None) -> str | None:
        """The local file to read for ``wheel``, if any.

        A path or ``file:`` URL of the lock is read only inside the lock's folder or a
        ``--find-links`` directory (yours, given on the command line); else a file of the
        wheel's name in a ``--find-links`` directory; else the lock's file is refused.
        """
        named = wheel.path
        from_url = wheel.url is not None and urllib.parse.urlsplit(wheel.url).scheme.lower() == "file"
        if from_url:
            assert wheel.url is not None
            named = urllib.request.url2pathname(urllib.parse.urlsplit(wheel.url).path)
        roots = [*([lock_dir] if lock_dir is not None else []), *self.find_links]
        allowed = named is not None and any(_inside(named, root) for root in roots)
        if named is not None and allowed and os.path.isfile(named):
            return named
        for directory in self.find_links:
            candidate = os.path.join(directory, wheel.filename)
            if os.path.isfile(candidate):
                return candidate
        if named is None:
            return None
        if not allowed:
            where = f"outside the lock's folder {lock_dir}" if lock_dir is not None else "and no lock folder is known"
            raise FetchError(
                f"{wheel.url if from_url else named}: the lock names a file {where}: not read",
                tip=f"pass --find-links DIR, DIR a directory of yours that holds {wheel.filename}",
            )
        if from_url:
            raise FetchError(f"{wheel.url}: no such file")
        return None

    def _cache_file(self, wheel: LockedWheel) -> str | None:
        if self.cache_dir is None or wheel.sha256 is None:
            return None
        return os.path.join(self.cache_dir, f"{wheel.sha256}.record")

    def _cached(self, wheel: LockedWheel) -> FetchedRecord | None:
        from wheeldoctor.engine import cache

        where = self._cache_file(wheel)
        if where is None or self.cache_dir is None or not cache.usable(self.cache_dir):
            return None
        data = cache.read(where)
        if data is None:
            return None
        try:
            entry = json.loads(data)
            if entry.get("format") != _CACHE_FORMAT or entry.get("sha256") != wheel.sha256:
                return None
            verified = entry["verified"] is True
            if self.verify_wheels and not verified:
                return None  # a RECORD read by range: --verify-wheels wants the whole wheel's hash
            record = base64.b64decode(entry["record"], validate=True)
            metadata = base64.b64decode(entry["metadata"], validate=True) if entry["metadata"] is not None else None
            dist_info = str(entry["dist_info"])
            hooks = tuple(_cached_hook(h) for h in entry["hooks"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # corrupt or foreign: a miss
        return FetchedRecord(
            wheel=wheel,
            record=record,
            metadata=metadata,
            dist_info=dist_info,
            source="cache",
            verified=verified,
            hooks=hooks,
        )

    def _store(self, fetched: FetchedRecord) -> None:
        from wheeldoctor.engine import cache

        where = self._cache_file(fetched.wheel)
        if where is None or self.cache_dir is None or fetched.findings or fetched.record is None:
            return  # a broken wheel's RECORD is never kept as a reference
        entry = {
            "format": _CACHE_FORMAT,
            "sha256": fetched.wheel.sha256,
            "verified": fetched.verified,
            "dist_info": fetched.dist_info,
            "record": base64.b64encode(fetched.record).decode("ascii"),
            "metadata": base64.b64encode(fetched.metadata).decode("ascii") if fetched.metadata is not None else None,
            "hooks": [
                {
                    "name": h.name,
                    "relative": h.relative,
                    "kind": h.kind,
                    "data": None if h.data is None else base64.b64encode(h.data).decode("ascii"),
                    "error": h.error,
                }
                for h in fetched.hooks
            ],
        }
        cache.write(self.cache_dir, where, json.dumps(entry).encode())

    # Over the network --------------------------------------------------------------------

    def _deadline(self) -> Deadline:
        from wheeldoctor.fetch.http import Deadline

        return Deadline() if self.seconds is None else Deadline(self.seconds)

    def _from_network(self, wheel: LockedWheel, keep_going: bool = False) -> FetchedRecord:
        from wheeldoctor.fetch.http import HttpError

        assert wheel.url is not None
        deadline = self._deadline()
        try:
            fetched = self._download(wheel, deadline) if self.verify_wheels else self._by_range(wheel, deadline)
        except (HttpError, SourceError) as e:
            if keep_going:
                return unfetched(wheel, redact(str(e)))
            raise FetchError(redact(str(e))) from None
        self._store(fetched)
        return fetched

    def _download(self, wheel: LockedWheel, deadline: Deadline) -> FetchedRecord:
        """The whole wheel, hashed as it arrives into an unnamed temporary file, then its RECORD read from there."""
        assert wheel.url is not None
        with _Spool() as spool:
            response = self.client().get(wheel.url, deadline=deadline, sink=spool.write, limit=whole_limit(wheel))
            result = read_whole(wheel, spool.source(), spool.sha256(), "download")
        return replace(result, fetched=response.received, requests=1, note=_moved(wheel.url, response.moved))

    def _by_range(self, wheel: LockedWheel, deadline: Deadline) -> FetchedRecord:
        assert wheel.url is not None
        url = wheel.url
        client = self.client()
        with _Spool() as spool:  # written to only by a server that ignores Range

            def unasked(chunk: bytes) -> None:
                with self._unasked_lock:
                    self._unasked += len(chunk)
                    over = self._unasked > UNASKED_LIMIT
                if over:
                    raise FetchError(
                        f"{redact(url)}: the index ignores Range, and more than {mib(UNASKED_LIMIT)} "
                        "of whole wheels came this run",
                        tip="--verify-wheels downloads whole wheels on purpose (up to the sizes the lock gives)",
                    )
                spool.write(chunk)

            limit = min(whole_limit(wheel), UNASKED_LIMIT)
            first = client.get(url, deadline=deadline, byte_range=TAIL_BYTES, sink=unasked, limit=limit)
            if first.status != 206:
                note = f"{redact(url)}: the server ignored Range; the whole wheel ({first.received} bytes) came"
                result = read_whole(wheel, spool.source(), spool.sha256(), "download")
                return replace(result, fetched=first.received, requests=1, note=_joined(note, _moved(url, first.moved)))
        size = first.total if first.total is not None else len(first.body)
        if wheel.size is not None and size != wheel.size:
            finding = size_finding(wheel, size, "the index serves")
            return broken(wheel, "range", finding, fetched=first.received, requests=1)
        whole = len(first.body) == size  # a small wheel: all of it came in the first answer
        if whole:
            mismatch = hash_finding(wheel, hashlib.sha256(first.body).hexdigest())
            if mismatch is not None:
                return broken(wheel, "range", mismatch, fetched=first.received, requests=1)
        requests = [1]
        moved = [first.moved]

        def fetch(start: int, end: int) -> bytes:
            response = client.get(url, deadline=deadline, byte_range=(start, end))
            requests[0] += 1
            moved.append(response.moved)
            return response.body

        source = RangedSource(size, fetch, (size - len(first.body), first.body), budget=RANGED_LIMIT)
        result = read_members(wheel, source, source="range", verified=whole and wheel.sha256 is not None)
        hop = _moved(url, next((m for m in moved if m is not None), None))
        return replace(result, fetched=first.received + source.fetched, requests=requests[0], note=hop)


class _Spool:
    """A wheel sent whole, as it arrives: hashed, and written to an unnamed temporary file made on its first byte."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._file: IO[bytes] | None = None
        self._size = 0

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()

    def write(self, chunk: bytes) -> None:
        if self._file is None:
            import tempfile

            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by __exit__)
        self._digest.update(chunk)
        self._file.write(chunk)
        self._size += len(chunk)

    def sha256(self) -> str:
        return self._digest.hexdigest()

    def source(self) -> FileSource:
        if self._file is None:
            return FileSource(-1, 0)  # nothing came: nothing is read
        self._file.flush()
        return FileSource(self._file.fileno(), self._size)


def _moved(url: str, host: str | None) -> str | None:
    """The note for a redirect that left the URL's host (the RECORD is then only as trusted as that host too)."""
    if host is None:
        return None
    return f"{redact(url)}: redirected to another host, {host}"


def _joined(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _kept(fetched: FetchedRecord) -> int:
    return len(fetched.record or b"") + len(fetched.metadata or b"") + sum(len(h.data or b"") for h in fetched.hooks)


def _cached_hook(entry: dict[str, object]) -> HookMember:
    """A hook member as the cache keeps it; a field of another type raises (the entry is then a miss)."""
    name, relative, kind, data, error = (entry[k] for k in ("name", "relative", "kind", "data", "error"))
    if not (isinstance(name, str) and isinstance(relative, str) and isinstance(kind, str)):
        raise TypeError("a cached hook's names are not strings")
    if not (data is None or isinstance(data, str)) or not (error is None or isinstance(error, str)):
        raise TypeError("a cached hook's data or error is not a string")
    read = None if data is None else base64.b64decode(data, validate=True)
    return HookMember(name=name, relative=relative, kind=kind, data=read, error=error)


def _inside(path: str, folder: str) -> bool:
    """Whether ``path``, its links resolved, lies inside ``folder`` (its links resolved too)."""
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, root]) == root
