"""Line templates of known start-up hooks: literal text with placeholders for names, versions, paths.

A template is the exact text a tool writes, with each part that varies from install to
install written as ``{label:kind}``; a later ``{label}`` must be the same text again
(``import {m:identifier}; {m}.install()``). ``{{`` and ``}}`` are literal braces. The
kinds are narrow on purpose: none matches a quote, a bracket, a semicolon or a line
break, so no placeholder can hold code.

- ``identifier``: a Python identifier (ASCII);
- ``dotted``: identifiers joined by dots;
- ``quoted``: one dotted name in single quotes, as ``repr()`` writes it;
- ``quoted-list``: quoted names joined by ``", "``, with an optional trailing comma;
- ``version``: letters, digits and ``.+!_-``;
- ``path``: any run of characters but quotes, backslashes and line breaks; only between
  quotes of the same kind (``'{p:path}'``), so it is always a string literal.

An entry's ``file`` is an ``fnmatch`` pattern, or, when it holds a placeholder, a
template of the file name whose labels the line templates share
(``file = "_editable_impl_{m:identifier}.pth"`` with ``import _editable_impl_{m}``): a
line then matches only with the very text the file name gave ``{m}``.

Pure: :func:`compile_template` raises :class:`TemplateError` for a template it cannot use;
:func:`hook_from` reads one registry entry (shipped or from a config) into a :class:`KnownHook`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rf"{_IDENT}(?:\.{_IDENT})*"
KINDS: dict[str, str] = {
    "identifier": _IDENT,
    "dotted": _DOTTED,
    "quoted": rf"'{_DOTTED}'",
    "quoted-list": rf"'{_DOTTED}'(?:, '{_DOTTED}')*,?",
    "version": r"[A-Za-z0-9_.+!-]+",
    "path": r"[^'\"\\\r\n]+",
}
_LABEL = re.compile(r"[a-z][a-z0-9_]*")


class TemplateError(ValueError):
    """A template with an unknown kind, a bad label, or a label used before it is given a kind."""


def compile_template(template: str) -> re.Pattern[str]:
    """The regular expression a line must match whole to be an instance of ``template``."""
    return re.compile(template_pattern(template))


def template_pattern(template: str) -> str:
    """:func:`compile_template`'s expression as text, checked but not compiled.

    Compiling every template of the registry cost more than the rest of a warm check's hook
    audit; :meth:`KnownHook.matches` compiles one (``re``'s own cache keeps it) only when a
    hook's owner and file name already fit its entry.
    """
    import string  # its Template compiles an expression on import: only where a template is read

    pattern: list[str] = []
    labels: set[str] = set()
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as e:
        raise TemplateError(f"unbalanced braces ({e}); write {{{{ and }}}} for literal braces") from None
    for index, (literal, field, spec, conversion) in enumerate(parts):
        if field is not None and not literal and index and parts[index - 1][1] is not None:
            # Two placeholders side by side split a line in as many ways as it has characters,
            # and a few of them try each split of a long line in turn: hours for one hook.
            raise TemplateError(f"placeholder {{{field}}}: put literal text between it and the one before")
        pattern.append(re.escape(literal))
        if spec == "path":
            after = parts[index + 1][0] if index + 1 < len(parts) else ""
            if not literal or literal[-1] not in "'\"" or not after.startswith(literal[-1]):
                raise TemplateError(f"placeholder {{{field}:path}}: write it between quotes ('{{{field}:path}}')")
        if field is None:
            continue
        if conversion is not None or not _LABEL.fullmatch(field):
            raise TemplateError(f"placeholder {{{field}}}: a label is lower-case letters, digits and _")
        if spec:
            if spec not in KINDS:
                raise TemplateError(f"placeholder {{{field}:{spec}}}: unknown kind (kinds: {', '.join(KINDS)})")
            if field in labels:
                raise TemplateError(f"placeholder {{{field}:{spec}}}: {field!r} already has a kind")
            labels.add(field)
            pattern.append(f"(?P<{field}>{KINDS[spec]})")
        elif field in labels:
            pattern.append(f"(?P={field})")
        else:
            raise TemplateError(f"placeholder {{{field}}}: give it a kind first ({{{field}:identifier}})")
    return "".join(pattern)


#: Who owns a file no installer recorded, as entries and accept rules name it.
UNOWNED = "(unowned)"
#: Any owner at all, a distribution or a system package.
ANY_OWNER = "*"
HOOK_KINDS = ("pth", "start", "module")


@dataclass(frozen=True, slots=True, kw_only=True)
class KnownHook:
    """One benign hook: whose, which files, which lines, and who documents it."""

    name: str
    """What the JSON ``known`` field says."""
    distributions: tuple[str, ...]
    """Canonical owner names, ``*`` (any owner) or ``(unowned)``."""
    files: str
    """``fnmatch`` pattern for the file name, or a template of it (:attr:`named`)."""
    lines: tuple[str, ...]
    """The templates as expressions (:func:`template_pattern`); every line that runs must match one whole.

    When :attr:`named`, each is the file name's template, a line break, then the line's: it
    is matched against ``file name + "\\n" + line``, so the labels they share must agree."""
    source: str
    kind: str = "pth"
    named: bool = False
    """``files`` is a template whose labels the lines share, not an ``fnmatch`` pattern."""
    editable: bool = False
    """Known only when its owner is installed editable (its own ``direct_url.json`` says
    ``dir_info.editable`` of a project directory outside the environment, see
    :mod:`wheeldoctor.where.hooks`): build backends write these hooks into editable wheels
    only, and any wheel could copy one."""

    def owned_by(self, owner: str | None) -> bool:
        """Whether ``owner`` (a canonical name; None when nobody recorded the file) may own it."""
        if owner is None:
            return UNOWNED in self.distributions
        return ANY_OWNER in self.distributions or owner in self.distributions

    def matches(
        self, kind: str, file_name: str, owner: str | None, lines: Sequence[str], *, editable: bool | None = False
    ) -> bool:
        """Whether a hook of ``kind`` named ``file_name``, owned by ``owner``, running ``lines`` is this one.

        ``editable``: whether the owner is installed editable, which an :attr:`editable` entry
        needs (by default it is not); None, asked for explicitly, matches on the file alone.
        """
        if not lines or kind != self.kind or not self.owned_by(owner) or (self.editable and editable is False):
            return False
        if self.named:
            if "\n" in file_name:
                return False
            return all(any(re.fullmatch(t, f"{file_name}\n{line.rstrip()}") for t in self.lines) for line in lines)
        return fnmatch.fnmatchcase(file_name, self.files) and all(
            any(re.fullmatch(t, line.rstrip()) for t in self.lines) for line in lines
        )


class RegistryError(ValueError):
    """An entry that cannot be used; the message names it and what is wrong."""


def hook_from(entry: Mapping[str, Any], where: str) -> KnownHook:
    """One :class:`KnownHook` from a TOML table, validated; :class:`RegistryError` naming ``where``."""
    from packaging.utils import canonicalize_name

    allowed = ("name", "distributions", "distribution", "file", "lines", "kind", "source", "reason", "editable")
    for key in entry:
        if key not in allowed:
            raise RegistryError(f"{where}: unknown key {key!r} (allowed: {', '.join(allowed)})")
    for key in ("name", "file"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise RegistryError(f"{where}.{key} must be a non-empty string")
    owners = entry.get("distributions", entry.get("distribution"))
    if isinstance(owners, str):
        owners = [owners]
    if not isinstance(owners, list) or not owners or not all(isinstance(o, str) and o.strip() for o in owners):
        raise RegistryError(f"{where}.distribution must name the owner (a name, '*' or '(unowned)'), or a list of them")
    lines = entry.get("lines")
    if not isinstance(lines, list) or not lines or not all(isinstance(t, str) and t.strip() for t in lines):
        raise RegistryError(f"{where}.lines must be a non-empty array of line templates")
    kind = entry.get("kind", "pth")
    if kind not in HOOK_KINDS:
        raise RegistryError(f"{where}.kind must be one of {', '.join(HOOK_KINDS)}")
    editable = entry.get("editable", False)
    if not isinstance(editable, bool):
        raise RegistryError(f"{where}.editable must be true or false")
    named = "{" in entry["file"]
    if named:
        try:
            template_pattern(entry["file"])
        except TemplateError as e:
            raise RegistryError(f"{where}.file: {e}") from None
    compiled = []
    for index, template in enumerate(lines):
        try:
            text = template.rstrip()
            compiled.append(template_pattern(f"{entry['file']}\n{text}" if named else text))
        except TemplateError as e:
            raise RegistryError(f"{where}.lines[{index}]: {e}") from None
    return KnownHook(
        name=entry["name"],
        distributions=tuple(o if o in (ANY_OWNER, UNOWNED) else str(canonicalize_name(o)) for o in owners),
        files=entry["file"],
        lines=tuple(compiled),
        source=str(entry.get("source") or entry.get("reason") or where),
        kind=kind,
        named=named,
        editable=editable,
    )
