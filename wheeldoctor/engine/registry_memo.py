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
_VERSION = 2
#: The type of each kept field of :class:`KnownHook`, in order (a tuple holds strings).
_TYPES = (str, tuple, str, tuple, str, str, bool, bool)


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
    fields = tuple((h.name, h.distributions, h.files, h.lines, h.source, h.kind, h.named, h.editable) for h in hooks)
    cache.write(cache_dir, path, sealed.seal(header, (digest, fields)))
    return hooks


def _hooks(value: object, digest: str) -> tuple[KnownHook, ...] | None:
    """The entries kept in ``value`` for the registry of ``digest``; None for another registry or a bad shape."""
    if type(value) is not tuple or len(value) != 2 or value[0] != digest or type(value[1]) is not tuple:
        return None
    hooks = []
    for fields in value[1]:
        if type(fields) is not tuple or len(fields) != len(_TYPES) or not all(map(_shaped, fields, _TYPES)):
            return None
        name, distributions, files, lines, source, kind, named, editable = fields
        hooks.append(
            KnownHook(
                name=name,
                distributions=distributions,
                files=files,
                lines=lines,
                source=source,
                kind=kind,
                named=named,
                editable=editable,
            )
        )
    return tuple(hooks)


def _shaped(field: object, kind: type) -> bool:
    """Of type ``kind`` exactly; a tuple of strings."""
    return type(field) is kind and (kind is not tuple or all(type(item) is str for item in field))  # type: ignore[attr-defined]
