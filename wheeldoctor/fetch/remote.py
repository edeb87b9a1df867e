"""Locked wheels' RECORDs: from a local file, the cache, or the index by HTTP range requests.

For each :class:`~wheeldoctor.formats.lock.LockedWheel`, in this order:

1. a local file (``--find-links DIR``/the file name, the path the lock names, a
   ``file:`` URL): hashed, and trusted only when its sha256 is the lock's;
2. the RECORD cache, keyed by the wheel's locked sha256 (``records/`` under the cache
   directory, same trust rules as the verification cache);
3. the lock's http(s) URL: the zip's tail (end of central directory and the central
   directory) by a suffix ``Range``, then only the ``.dist-info/RECORD`` and ``METADATA``
   members. A server that ignores ``Range`` sends the whole wheel: it is then used (and
   hashed), and the result says so. ``verify_wheels`` downloads every wheel whole and
   checks its hash against the lock.

Wheels are fetched by a bounded thread pool. A wheel that is broken (hash not the
lock's, no or several RECORDs, not a zip) gives findings; a wheel that cannot be fetched
at all (404, host unreachable) raises :class:`FetchError`, one line.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import TYPE_CHECKING

from wheeldoctor.fetch.ranged import RangedFile, RangeError
from wheeldoctor.formats.lock_fetched import FetchedRecord
from wheeldoctor.model.credentials import redact
from wheeldoctor.model.errors import InputError
from wheeldoctor.model.findings import Code, Finding, Kind

if TYPE_CHECKING:
    from wheeldoctor.fetch.http import Client
    from wheeldoctor.formats.lock import LockedWheel

#: Threads fetching at once (and connections per host).
JOBS = 8
#: The first, suffix range: most wheels' central directory fits in it.
TAIL_BYTES = 256 << 10
_MEMBER_LIMIT = 64 << 20
#: Most bytes read by range for one wheel's RECORD (the central directory and the members).
RANGED_LIMIT = 256 << 20
#: Largest wheel downloaded whole (``--verify-wheels``, a server without ranges).
DOWNLOAD_LIMIT = 8 << 30
_CACHE_FORMAT = 1
_CHUNK = 1 << 20

Progress = Callable[[int, int, "LockedWheel"], None]
"""Called after each wheel: (done, total, wheel)."""


class FetchError(InputError):
    """A wheel's RECORD cannot be had (404, host unreachable); one line, no credential in it."""


class Fetcher:
    """Fetches locked wheels' RECORDs; one per command run (it holds the connection pool)."""

    def __init__(
        self,
        *,
        cache_dir: str | None,
        find_links: Sequence[str] = (),
        verify_wheels: bool = False,
        jobs: int = JOBS,
    ) -> None:
        self.cache_dir = os.path.join(cache_dir, "records") if cache_dir else None
        self.find_links = tuple(find_links)
        self.verify_wheels = verify_wheels
        self.jobs = jobs
        self._client: Client | None = None

    def client(self) -> Client:
        """The HTTP client, made (and urllib3 imported) on the first network fetch."""
        if self._client is None:
            from wheeldoctor.fetch.http import Client

            self._client = Client(max_connections=self.jobs)
        return self._client

    def fetch_all(self, wheels: Sequence[LockedWheel], progress: Progress | None = None) -> list[FetchedRecord]:
        """Every wheel's RECORD, in the given order; the first failure raises FetchError."""
        local = [self._without_network(w) for w in wheels]
        results: list[FetchedRecord | None] = list(local)
        pending = [i for i, r in enumerate(local) if r is None]
        done = len(wheels) - len(pending)
        if progress is not None and done:
            progress(done, len(wheels), wheels[0])
        if pending:
            with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                futures = {pool.submit(self._from_network, wheels[i]): i for i in pending}
                remaining = set(futures)
                while remaining:
                    finished, remaining = wait(remaining, return_when=FIRST_EXCEPTION)
                    for future in finished:
                        error = future.exception()
                        if error is not None:
                            for other in remaining:
                                other.cancel()
                            raise error
                        index = futures[future]
                        results[index] = future.result()
                        done += 1
                        if progress is not None:
                            progress(done, len(wheels), wheels[index])
        if self._client is not None:
            self._client.close()
        return [r for r in results if r is not None]

    # Without the network -----------------------------------------------------------------

    def _without_network(self, wheel: LockedWheel) -> FetchedRecord | None:
        path = self._local_path(wheel)
        if path is not None:
            return read_local(wheel, path)
        cached = self._cached(wheel)
        if cached is not None:
            return cached
        if wheel.url is None:
            where = wheel.path or wheel.filename
            raise FetchError(f"{where}: no such wheel file, and the lock gives no URL")
        return None

    def _local_path(self, wheel: LockedWheel) -> str | None:
        for directory in self.find_links:
            candidate = os.path.join(directory, wheel.filename)
            if os.path.isfile(candidate):
                return candidate
        if wheel.path is not None and os.path.isfile(wheel.path):
            return wheel.path
        if wheel.url is not None and urllib.parse.urlsplit(wheel.url).scheme.lower() == "file":
            path = urllib.request.url2pathname(urllib.parse.urlsplit(wheel.url).path)
            if not os.path.isfile(path):
                raise FetchError(f"{wheel.url}: no such file")
            return path
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
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # corrupt or foreign: a miss
        return FetchedRecord(
            wheel=wheel, record=record, metadata=metadata, dist_info=dist_info, source="cache", verified=verified
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
        }
        cache.write(self.cache_dir, where, json.dumps(entry).encode())

    # Over the network --------------------------------------------------------------------

    def _from_network(self, wheel: LockedWheel) -> FetchedRecord:
        from wheeldoctor.fetch.http import HttpError

        assert wheel.url is not None
        try:
            fetched = self._download(wheel) if self.verify_wheels else self._by_range(wheel)
        except HttpError as e:
            raise FetchError(str(e)) from None
        self._store(fetched)
        return fetched

    def _download(self, wheel: LockedWheel, *, note: str | None = None) -> FetchedRecord:
        assert wheel.url is not None
        limit = min(wheel.size, DOWNLOAD_LIMIT) if wheel.size is not None else DOWNLOAD_LIMIT
        response = self.client().get(wheel.url, limit=limit)
        result = _read_whole(wheel, response.body, source="download")
        return replace(result, fetched=len(response.body), requests=1, note=note)

    def _by_range(self, wheel: LockedWheel) -> FetchedRecord:
        from wheeldoctor.fetch.http import HttpError

        assert wheel.url is not None
        url = wheel.url
        client = self.client()
        whole = min(wheel.size, DOWNLOAD_LIMIT) if wheel.size is not None else DOWNLOAD_LIMIT
        first = client.get(url, byte_range=f"bytes=-{TAIL_BYTES}", limit=whole)  # whole: a server ignoring Range
        if first.status != 206:
            note = f"{redact(url)}: the server ignored Range; the whole wheel ({len(first.body)} bytes) was downloaded"
            result = _read_whole(wheel, first.body, source="download")
            return replace(result, fetched=len(first.body), requests=1, note=note)
        size = first.total if first.total is not None else len(first.body)
        if wheel.size is not None and size != wheel.size:
            finding = Finding(
                code=Code.LOCK_HASH_MISMATCH,
                kind=Kind.MODIFIED,
                path=wheel.filename,
                message="the index serves a wheel whose size differs from the lock",
                expected=f"{wheel.size} bytes",
                found=f"{size} bytes",
            )
            return _broken(wheel, "range", finding, fetched=len(first.body), requests=1)
        counter = [1, len(first.body)]

        def fetch(start: int, end: int) -> bytes:
            if counter[1] + end - start > RANGED_LIMIT:  # a central directory or member that claims too much
                raise RangeError(f"{redact(url)}: more than {RANGED_LIMIT >> 20} MiB of ranges to read its RECORD")
            try:
                response = client.get(url, byte_range=f"bytes={start}-{end - 1}", limit=end - start)
            except HttpError as e:  # out through zipfile, which would take a ValueError for a bad zip
                raise RangeError(str(e)) from None
            counter[0] += 1
            counter[1] += len(response.body)
            if response.status != 206:
                raise RangeError(f"{redact(url)}: the server stopped honouring Range")
            return response.body

        ranged = RangedFile(size, fetch, (size - len(first.body), first.body))
        result = _read_members(wheel, ranged, source="range", verified=False)
        return replace(result, fetched=counter[1], requests=counter[0])


def read_local(wheel: LockedWheel, path: str) -> FetchedRecord:
    """A local wheel file: hashed against the lock, then its RECORD read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
    except OSError as e:
        raise FetchError(f"{path}: cannot be read ({e.strerror or e})") from e
    mismatch = _hash_finding(wheel, digest.hexdigest())
    if mismatch is not None:
        return _broken(wheel, "local", mismatch)
    try:
        with open(path, "rb") as f:
            return _read_members(wheel, f, source="local", verified=wheel.sha256 is not None)
    except OSError as e:
        raise FetchError(f"{path}: cannot be read ({e.strerror or e})") from e


def _read_whole(wheel: LockedWheel, body: bytes, *, source: str) -> FetchedRecord:
    mismatch = _hash_finding(wheel, hashlib.sha256(body).hexdigest())
    if mismatch is not None:
        return _broken(wheel, source, mismatch)
    return _read_members(wheel, io.BytesIO(body), source=source, verified=wheel.sha256 is not None)


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


def _read_members(
    wheel: LockedWheel, file: io.RawIOBase | io.BufferedIOBase, *, source: str, verified: bool
) -> FetchedRecord:
    """RECORD and METADATA out of a zip (a local file, bytes, or a :class:`RangedFile`)."""
    try:
        with zipfile.ZipFile(file) as archive:
            infos = {i.filename: i for i in archive.infolist() if not i.is_dir()}
            records = [n for n in infos if n.count("/") == 1 and n.endswith(".dist-info/RECORD")]
            if len(records) != 1:
                why = "no .dist-info/RECORD" if not records else f"{len(records)} RECORD files"
                finding = Finding(
                    code=Code.NO_RECORD,
                    kind=Kind.UNVERIFIABLE,
                    path=wheel.filename,
                    message=f"the locked wheel has {why}",
                )
                return _broken(wheel, source, finding)
            dist_info = records[0].rpartition("/")[0]
            wanted = [infos[records[0]]]
            if (meta := infos.get(f"{dist_info}/METADATA")) is not None:
                wanted.append(meta)
            for info in wanted:
                if info.file_size > _MEMBER_LIMIT or info.compress_size > _MEMBER_LIMIT:
                    finding = Finding(
                        code=Code.RECORD_UNDECODABLE,
                        kind=Kind.MALFORMED,
                        path=info.filename,
                        message="is too large to read from the wheel",
                    )
                    return _broken(wheel, source, finding)
            if isinstance(file, RangedFile):
                file.prefetch(wanted)
            record = archive.read(wanted[0])
            metadata = archive.read(wanted[1]) if len(wanted) > 1 else None
    except RangeError as e:
        raise FetchError(str(e)) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, ValueError) as e:
        if isinstance(e, FetchError):
            raise
        finding = Finding(
            code=Code.WHEEL_UNREADABLE,
            kind=Kind.MALFORMED,
            path=wheel.filename,
            message=f"cannot be read as a wheel ({e})",
        )
        return _broken(wheel, source, finding)
    return FetchedRecord(
        wheel=wheel, record=record, metadata=metadata, dist_info=dist_info, source=source, verified=verified
    )
