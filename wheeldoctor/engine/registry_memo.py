"""The shipped registry of known hooks, parsed once and kept in the cache directory by its bytes' digest.

Reading ``model/known_hooks.toml`` means importing ``tomllib``, parsing, and validating
every entry (:func:`wheeldoctor.formats.hook_template.hook_from`, which canonicalises
owner names with ``packaging``): more than the rest of a warm check's hook audit. The
TOML stays the source of truth: its bytes are read on every run and their digest keys
the kept form, and the header names the code that wrote it (:mod:`.sealed`), so an
edited registry or another version's parser is a miss, parsed and validated again.
"""

from __future__ import annotations

import hashlib

from wheeldoctor.engine import cache, sealed
from wheeldoctor.formats.hook_template import KnownHook
from wheeldoctor.judge.known_hooks import parse_registry, registry_text, shipped

_NAME = "known-hooks"
#: Bump when what is kept of an entry changes.
_VERSION = 1
#: Each kept field of :class:`KnownHook`, in order: a string (True) or a tuple of strings.
_TEXTS = (True, False, True, False, True, True)


def shipped_hooks(cache_dir: str | None) -> tuple[KnownHook, ...]:
    """The shipped registry (:func:`wheeldoctor.judge.known_hooks.shipped`), kept in ``cache_dir`` when given."""
    if cache_dir is None:
        return shipped()
    data = registry_text()
    digest = hashlib.sha256(data).hexdigest()
    header = b"wheeldoctor-%s %d %s %s\n" % (_NAME.encode(), _VERSION, sealed.CODE, cache.TAG)
    path = cache.entry_path(cache_dir, _NAME, f".{_NAME}")
    if cache.usable(cache_dir):
        kept = _hooks(sealed.unseal(header, cache.read(path)), digest)
        if kept is not None:
            return kept
    hooks = parse_registry(data)
    fields = tuple((h.name, h.distributions, h.files, h.lines, h.source, h.kind) for h in hooks)
    cache.write(cache_dir, path, sealed.seal(header, (digest, fields)))
    return hooks


def _hooks(value: object, digest: str) -> tuple[KnownHook, ...] | None:
    """The entries kept in ``value`` for the registry of ``digest``; None for another registry or a bad shape."""
    if type(value) is not tuple or len(value) != 2 or value[0] != digest or type(value[1]) is not tuple:
        return None
    hooks = []
    for fields in value[1]:
        if type(fields) is not tuple or len(fields) != len(_TEXTS) or not all(map(_shaped, fields, _TEXTS)):
            return None
        name, distributions, files, lines, source, kind = fields
        hooks.append(KnownHook(name, distributions, files, lines, source, kind))
    return tuple(hooks)


def _shaped(field: object, text: bool) -> bool:
    """A string (``text``), else a tuple of strings."""
    if text:
        return type(field) is str
    return type(field) is tuple and all(type(item) is str for item in field)
