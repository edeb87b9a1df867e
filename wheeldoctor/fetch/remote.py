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
   start-up hooks the wheel would install (:func:`read_hook_members`). A
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
import stat
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import IO, TYPE_CHECKING

from wheeldoctor.fetch.sources import MIN_FETCH, FileSource, RangedSource, SourceError
from wheeldoctor.formats import zip_members
from wheeldoctor.formats.lock_fetched import FetchedRecord
from wheeldoctor.formats.wheel_hooks import HOOK_BYTES, HOOK_COUNT, HOOK_SUFFIXES, HookBudget, HookMember
from wheeldoctor.model.credentials import redact
from wheeldoctor.model.errors import InputError
from wheeldoctor.model.findings import Code, Finding, Kind

if TYPE_CHECKING:
    from wheeldoctor.fetch.http import Client, Deadline
    from wheeldoctor.formats.lock import LockedWheel

#: Threads fetching at once (and connections per host).
JOBS = 8
#: The first, suffix range: most wheels' central directory fits in it.
TAIL_BYTES = 256 << 10
#: The largest central directory read (a wheel of 100,000 files has about 10 MiB).
CENTRAL_LIMIT = 16 << 20
#: The largest RECORD or METADATA member read, compressed or not.
MEMBER_LIMIT = 16 << 20
#: Most bytes read by range for one wheel (the tail, the central directory, RECORD, METADATA and the hooks).
RANGED_LIMIT = TAIL_BYTES + CENTRAL_LIMIT + 2 * MEMBER_LIMIT + HOOK_BYTES + HOOK_COUNT * (MIN_FETCH + 4096) + (1 << 20)
#: Largest wheel downloaded (or hashed) whole where the lock gives its size.
DOWNLOAD_LIMIT = 8 << 30
#: Largest wheel downloaded (or hashed) whole where the lock gives no size (a pip report, say).
UNSIZED_LIMIT = 2 << 30
#: Bytes of whole wheels one run takes from servers that ignore Range when --verify-wheels did not ask for them.
UNASKED_LIMIT = 1 << 30
#: RECORD, METADATA and start-up hook bytes kept for one run, over every wheel.
KEPT_LIMIT = 256 << 20
_CACHE_FORMAT = 2
_CHUNK = 1 << 20
_SUFFIXES = (b".dist-info/RECORD", b".dist-info/METADATA", *HOOK_SUFFIXES)

Progress = Callable[[int, int, "LockedWheel"], None]
"""Called after each wheel: (done, total, wheel)."""


class FetchError(InputError):
    """A wheel's RECORD cannot be had (404, host unreachable, a bound passed); one line, no credential in it."""

    def __init__(self, message: str, tip: str | None = None) -> None:
        super().__init__(message)
        self.tip = tip


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
                                raise FetchError(f"the lock's RECORDs and METADATA pass {_mib(KEPT_LIMIT)}")
                            done += 1
                            if progress is not None:
                                progress(done, len(wheels), wheels[index])
            if kept > KEPT_LIMIT:
                raise FetchError(f"the lock's RECORDs and METADATA pass {_mib(KEPT_LIMIT)}")
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
            response = self.client().get(wheel.url, deadline=deadline, sink=spool.write, limit=_whole_limit(wheel))
            result = _read_whole(wheel, spool.source(), spool.sha256(), "download")
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
                        f"{redact(url)}: the index ignores Range, and more than {_mib(UNASKED_LIMIT)} "
                        "of whole wheels came this run",
                        tip="--verify-wheels downloads whole wheels on purpose (up to the sizes the lock gives)",
                    )
                spool.write(chunk)

            limit = min(_whole_limit(wheel), UNASKED_LIMIT)
            first = client.get(url, deadline=deadline, byte_range=TAIL_BYTES, sink=unasked, limit=limit)
            if first.status != 206:
                note = f"{redact(url)}: the server ignored Range; the whole wheel ({first.received} bytes) came"
                result = _read_whole(wheel, spool.source(), spool.sha256(), "download")
                return replace(result, fetched=first.received, requests=1, note=_joined(note, _moved(url, first.moved)))
        size = first.total if first.total is not None else len(first.body)
        if wheel.size is not None and size != wheel.size:
            finding = _size_finding(wheel, size, "the index serves")
            return _broken(wheel, "range", finding, fetched=first.received, requests=1)
        whole = len(first.body) == size  # a small wheel: all of it came in the first answer
        if whole:
            mismatch = _hash_finding(wheel, hashlib.sha256(first.body).hexdigest())
            if mismatch is not None:
                return _broken(wheel, "range", mismatch, fetched=first.received, requests=1)
        requests = [1]
        moved = [first.moved]

        def fetch(start: int, end: int) -> bytes:
            response = client.get(url, deadline=deadline, byte_range=(start, end))
            requests[0] += 1
            moved.append(response.moved)
            return response.body

        source = RangedSource(size, fetch, (size - len(first.body), first.body), budget=RANGED_LIMIT)
        result = _read_members(wheel, source, source="range", verified=whole and wheel.sha256 is not None)
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


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def _whole_limit(wheel: LockedWheel) -> int:
    return min(wheel.size, DOWNLOAD_LIMIT) if wheel.size is not None else UNSIZED_LIMIT


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


def read_local(wheel: LockedWheel, path: str) -> FetchedRecord:
    """A local wheel file: its size compared with the lock's, then hashed against the lock, then its RECORD read.

    Nothing is read of a file whose size is not the lock's, or that is larger than a whole
    download may be; a FIFO or device is never opened for reading.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise FetchError(f"{path}: cannot be read ({e.strerror or e})") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FetchError(f"{path}: not a regular file")
        if wheel.size is not None and st.st_size != wheel.size:
            return _broken(wheel, "local", _size_finding(wheel, st.st_size, "the file is"))
        if st.st_size > _whole_limit(wheel):
            raise FetchError(f"{path}: {st.st_size} bytes, more than {_whole_limit(wheel)} (a wheel read whole)")
        source = FileSource(fd, st.st_size)
        digest = hashlib.sha256()
        for start in range(0, st.st_size, _CHUNK):
            digest.update(source.read(start, min(st.st_size, start + _CHUNK)))
        return _read_whole(wheel, source, digest.hexdigest(), "local")
    except SourceError as e:
        raise FetchError(f"{path}: {e}") from None
    except OSError as e:
        raise FetchError(f"{path}: cannot be read ({e.strerror or e})") from e
    finally:
        os.close(fd)


def _read_whole(wheel: LockedWheel, source: FileSource, sha256: str, how: str) -> FetchedRecord:
    """A wheel held whole: trusted when its hash is the lock's, then its RECORD read."""
    mismatch = _hash_finding(wheel, sha256)
    if mismatch is not None:
        return _broken(wheel, how, mismatch)
    return _read_members(wheel, source, source=how, verified=wheel.sha256 is not None)


def unfetched(wheel: LockedWheel, why: str) -> FetchedRecord:
    """A wheel that could not be had: a WD086 finding of its own, nothing to judge against."""
    finding = Finding(
        code=Code.LOCK_WHEEL_UNFETCHED,
        kind=Kind.UNREADABLE,
        path=wheel.filename,
        message=f"the locked wheel cannot be had ({why}): not judged against the lock",
    )
    return _broken(wheel, "failed", finding)


def _hash_finding(wheel: LockedWheel, found: str) -> Finding | None:
    if wheel.sha256 is None or wheel.sha256 == found:
        return None
    return Finding(
        code=Code.LOCK_HASH_MISMATCH,
        kind=Kind.MODIFIED,
        path=wheel.filename,
        message="the wheel's sha256 differs from the lock: it is not trusted",
        expected=f"sha256:{wheel.sha256}",
        found=f"sha256:{found}",
    )


def _size_finding(wheel: LockedWheel, size: int, who: str) -> Finding:
    return Finding(
        code=Code.LOCK_HASH_MISMATCH,
        kind=Kind.MODIFIED,
        path=wheel.filename,
        message=f"{who} a wheel whose size differs from the lock: it is not trusted, and not read",
        expected=f"{wheel.size} bytes",
        found=f"{size} bytes",
    )


def _broken(wheel: LockedWheel, source: str, finding: Finding, *, fetched: int = 0, requests: int = 0) -> FetchedRecord:
    return FetchedRecord(
        wheel=wheel,
        record=None,
        metadata=None,
        dist_info=None,
        source=source,
        verified=False,
        fetched=fetched,
        requests=requests,
        findings=(finding,),
    )


def _read_members(wheel: LockedWheel, file: FileSource | RangedSource, *, source: str, verified: bool) -> FetchedRecord:
    """RECORD and METADATA out of the zip: the end record, the central directory, two members."""
    try:
        tail = file.read(max(0, file.size - zip_members.END_SEARCH), file.size)
        place = zip_members.end_record(tail, file.size, limit=CENTRAL_LIMIT)
        entries = zip_members.scan(file.read(place.offset, place.offset + place.size), place, _SUFFIXES)
        records = zip_members.top_level(entries, ".dist-info/RECORD")
        if len(records) != 1:
            why = "no .dist-info/RECORD" if not records else f"{len(records)} RECORD files"
            finding = Finding(
                code=Code.NO_RECORD, kind=Kind.UNVERIFIABLE, path=wheel.filename, message=f"the locked wheel has {why}"
            )
            return _broken(wheel, source, finding)
        dist_info = records[0].name.rpartition("/")[0]
        metadata = [e for e in entries if e.name == f"{dist_info}/METADATA"]
        for entry in (records[0], *metadata):
            if entry.file_size > MEMBER_LIMIT or entry.compress_size > MEMBER_LIMIT:
                finding = Finding(
                    code=Code.RECORD_UNDECODABLE,
                    kind=Kind.MALFORMED,
                    path=entry.name,
                    message=f"is too large to read from the wheel (more than {_mib(MEMBER_LIMIT)})",
                )
                return _broken(wheel, source, finding)
        wanted = (records[0], *metadata[-1:])
        _prefetch(file, wanted)
        members = [zip_members.read_member(file.read, e, file.size, limit=MEMBER_LIMIT) for e in wanted]
        hooks = read_hook_members(file, entries, dist_info)
    except zip_members.ZipError as e:
        finding = Finding(
            code=Code.WHEEL_UNREADABLE,
            kind=Kind.MALFORMED,
            path=wheel.filename,
            message=f"cannot be read as a wheel ({e})",
        )
        return _broken(wheel, source, finding)
    return FetchedRecord(
        wheel=wheel,
        record=members[0],
        metadata=members[1] if len(members) > 1 else None,
        dist_info=dist_info,
        source=source,
        verified=verified,
        hooks=hooks,
    )


def read_hook_members(
    file: FileSource | RangedSource, entries: Sequence[zip_members.Entry], dist_info: str
) -> tuple[HookMember, ...]:
    """The members of a wheel that would install as start-up hooks, each read alone (by range, for a remote one).

    Bounded by :class:`~wheeldoctor.formats.wheel_hooks.HookBudget` (their count and bytes);
    one that is over it, or cannot be read (damaged, encrypted, another compression), comes
    back with its ``error`` and no bytes: the judge then treats it as running code.
    """
    from wheeldoctor.formats.wheelfile import hook_of

    budget = HookBudget()
    found: list[tuple[zip_members.Entry, str, str, str | None]] = []
    for entry in entries:
        placed = hook_of(entry.name, dist_info)
        if placed is not None:
            found.append((entry, *placed, budget.refuse(max(entry.file_size, entry.compress_size))))
    _prefetch(file, [e for e, _, _, refused in found if refused is None])
    hooks = []
    for entry, relative, kind, refused in found:
        if refused is not None:
            hooks.append(HookMember(name=entry.name, relative=relative, kind=kind, data=None, error=refused))
            continue
        try:
            data = zip_members.read_member(file.read, entry, file.size, limit=HOOK_BYTES)
        except zip_members.ZipError as e:
            hooks.append(HookMember(name=entry.name, relative=relative, kind=kind, data=None, error=str(e)))
            continue
        hooks.append(HookMember(name=entry.name, relative=relative, kind=kind, data=data))
    return tuple(hooks)


def _prefetch(file: FileSource | RangedSource, entries: Sequence[zip_members.Entry]) -> None:
    """By range, the members' local headers and data in one request when they lie close together."""
    if not isinstance(file, RangedSource) or not entries:
        return
    spans = [zip_members.span(e) for e in entries]
    spans = [(start, min(end, file.size)) for start, end in spans]
    low, high = min(s for s, _ in spans), max(e for _, e in spans)
    if high - low <= 2 * sum(e - s for s, e in spans) + (64 << 10):
        file.read(low, high)
    else:
        for start, end in spans:
            file.read(start, end)
