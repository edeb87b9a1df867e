"""Accept rules from TOML: ``[tool.wheeldoctor]`` in pyproject.toml, or a wheeldoctor.toml.

The search starts in the working directory and climbs to the repository root (a folder
holding ``.git`` or ``.hg``) or the filesystem root, whichever comes first. In each
folder a ``wheeldoctor.toml`` (keys at its top level) wins over a ``pyproject.toml``,
which counts only when it has a ``[tool.wheeldoctor]`` table. Validation is strict:
any unknown key, wrong type or bad value is a :class:`ConfigError` naming the file,
the key and what is allowed.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wheeldoctor.formats.config_search import CONFIG_NAME, PYPROJECT, ConfigError, read_toml, within
from wheeldoctor.formats.config_search import find_config as find_config  # noqa: PLC0414  (re-exported)
from wheeldoctor.formats.hook_template import KnownHook, RegistryError, hook_from
from wheeldoctor.formats.trust import refusal, untrusted
from wheeldoctor.model.findings import METADATA_CODES, PREFIX_HELP, Code, is_code_prefix
from wheeldoctor.model.record_fields import ACCEPTED_ALGORITHMS, URLSAFE_ALPHABET

if TYPE_CHECKING:
    from packaging.utils import NormalizedName

_TOP_KEYS = ("accept", "known-hook", "python", "select", "ignore", "jobs", "strict")
_RULE_KEYS = ("distribution", "path", "code", "found", "reason", "until")


@dataclass(frozen=True, slots=True, kw_only=True)
class AcceptRule:
    """One ``[[accept]]`` entry: which findings it accepts, why, until when, and from where.

    Matching is over ``(distribution, path, code, found)`` only, so any kind of finding
    (files, startup hooks, ...) can be accepted by the same rules.
    """

    distribution: NormalizedName
    """Canonical name."""
    reason: str
    source: str
    """The file it came from."""
    index: int
    """Its position among the file's entries, from 0."""
    path: str | None = None
    code: str | None = None
    found: str | None = None
    """The finding's ``found`` exactly (``sha256=…``): only those bytes are accepted.

    A rule without it is *broad*: it accepts only findings that have no bytes to pin
    (requirements, duplicates, a missing file), never a file's or a hook's content."""
    until: datetime.date | None = None

    @property
    def key(self) -> str:
        """Where it is written, for messages: ``tool.wheeldoctor.accept[2]``."""
        prefix = "accept" if os.path.basename(self.source) == CONFIG_NAME else "tool.wheeldoctor.accept"
        return f"{prefix}[{self.index}]"

    def expired(self, today: datetime.date) -> bool:
        """Whether ``until`` has passed: the rule no longer applies."""
        return self.until is not None and today > self.until

    @property
    def broad(self) -> bool:
        """Whether it pins no bytes (no ``found``): then it accepts only findings without any."""
        return self.found is None

    def matches(self, distribution: str, path: str | None, code: str, found: str | None) -> bool:
        """Whether this rule names that finding (expiry aside); bytes are accepted only where pinned."""
        return (
            self.distribution == distribution
            and (self.path is None or self.path == path)
            and (self.code is None or self.code == code)
            and (self.found == found or (self.found is None and code in METADATA_CODES))
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What a config file says; ``source`` is None when no file was found."""

    source: str | None = None
    rules: tuple[AcceptRule, ...] = ()
    known_hooks: tuple[KnownHook, ...] = ()
    """``[[known-hook]]``: hooks this project trusts by owner, file name and line template."""
    defaults: Defaults | None = None
    """``python``, ``select``, ``ignore``, ``jobs``, ``strict``: defaults for the command line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Defaults:
    """What the command line takes when not told: each None (or empty) when the config says nothing."""

    python: str | None = None
    """As written, relative to the config's folder when relative."""
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    jobs: int | None = None
    strict: bool | None = None


def load_config(path: str, outside: Iterable[str] = ()) -> Config:
    """Read and validate one config file; :class:`ConfigError` when it cannot be used."""
    real = os.path.realpath(path)
    if any(within(real, os.path.realpath(fence)) for fence in outside):
        raise ConfigError(f"{path}: is inside the environment being checked; a config is never read from there")
    why = untrusted(path)
    if why is not None:
        raise ConfigError(refusal(path, why))
    document = read_toml(path)
    if os.path.basename(path) == PYPROJECT:
        table = document.get("tool", {}).get("wheeldoctor", {}) if isinstance(document.get("tool"), dict) else {}
        prefix = "tool.wheeldoctor"
    else:
        table, prefix = document, ""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {prefix} must be a table")
    rules = tuple(_rules(path, prefix, table))
    return Config(
        source=path,
        rules=rules,
        known_hooks=tuple(_known_hooks(path, prefix, table)),
        defaults=_defaults(path, prefix, table),
    )


def _known_hooks(path: str, prefix: str, table: Mapping[str, Any]) -> Iterable[KnownHook]:
    key = f"{prefix}.known-hook" if prefix else "known-hook"
    entries = table.get("known-hook", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: {key} must be an array of tables ([[{key}]])")
    for index, entry in enumerate(entries):
        try:
            yield hook_from(entry, f"{key}[{index}]")
        except RegistryError as e:
            raise ConfigError(f"{path}: {e}") from None


def _defaults(path: str, prefix: str, table: Mapping[str, Any]) -> Defaults | None:
    def where(key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    if not any(k in table for k in ("python", "select", "ignore", "jobs", "strict")):
        return None
    python = table.get("python")
    if python is not None and (not isinstance(python, str) or not python.strip()):
        raise ConfigError(f"{path}: {where('python')} must be a non-empty string (a path to an interpreter or venv)")
    if python is not None and not os.path.isabs(python):
        python = os.path.join(os.path.dirname(os.path.abspath(path)), python)
    codes: dict[str, tuple[str, ...]] = {}
    for key in ("select", "ignore"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and is_code_prefix(v) for v in value):
            raise ConfigError(
                f'{path}: {where(key)} must be an array of codes or groups (["WD04", "WD061"]): {PREFIX_HELP}'
            )
        codes[key] = tuple(value)
    jobs = table.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ConfigError(f"{path}: {where('jobs')} must be a positive integer")
    strict = table.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ConfigError(f"{path}: {where('strict')} must be true or false")
    return Defaults(python=python, select=codes["select"], ignore=codes["ignore"], jobs=jobs, strict=strict)


def _rules(path: str, prefix: str, table: Mapping[str, Any]) -> Iterable[AcceptRule]:
    from packaging.utils import canonicalize_name

    def where(key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    for key in table:
        if key not in _TOP_KEYS:
            raise ConfigError(f"{path}: unknown key {where(key)!r} (allowed: {', '.join(_TOP_KEYS)})")
    entries = table.get("accept", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: {where('accept')} must be an array of tables ([[{where('accept')}]])")
    for index, entry in enumerate(entries):
        until = _checked_rule(path, where(f"accept[{index}]"), entry)
        yield AcceptRule(
            distribution=canonicalize_name(entry["distribution"]),
            reason=entry["reason"],
            source=path,
            index=index,
            path=entry.get("path"),
            code=entry.get("code"),
            found=entry.get("found"),
            until=until,
        )


def _checked_rule(path: str, name: str, entry: Mapping[str, Any]) -> datetime.date | None:
    """``entry``'s ``until``, once every key of the rule ``name`` is known and well formed; else ConfigError."""
    for key in entry:
        if key not in _RULE_KEYS:
            raise ConfigError(f"{path}: unknown key {name}.{key!r} (allowed: {', '.join(_RULE_KEYS)})")
    for key in ("distribution", "reason"):
        if key not in entry:
            raise ConfigError(f"{path}: {name} lacks the required key {key!r}")
    for key in ("distribution", "path", "code", "found", "reason"):
        if key in entry and (not isinstance(entry[key], str) or not entry[key].strip()):
            raise ConfigError(f"{path}: {name}.{key} must be a non-empty string")
    if "path" not in entry and "code" not in entry:
        raise ConfigError(f"{path}: {name} must name a 'path', a 'code' or both")
    if "code" in entry and entry["code"] not in {c.value for c in Code}:
        raise ConfigError(f"{path}: {name}.code {entry['code']!r} is not a wheeldoctor code (WD001, WD002, ...)")
    if "found" in entry and not valid_digest(entry["found"]):
        raise ConfigError(
            f"{path}: {name}.found must be a digest as the JSON 'found' spells it "
            f"({'/'.join(ACCEPTED_ALGORITHMS)}=, then unpadded urlsafe base64 of the digest's exact length)"
        )
    until = entry.get("until")
    if until is not None and (not isinstance(until, datetime.date) or isinstance(until, datetime.datetime)):
        raise ConfigError(f"{path}: {name}.until must be a TOML date (until = 2026-12-31)")
    return until


def valid_digest(text: str) -> bool:
    """Whether ``text`` is exactly ``ALGORITHM=DIGEST`` as a finding's ``found`` spells it.

    The algorithm is one RECORD accepts; the digest is unpadded urlsafe base64 of that
    algorithm's exact length; nothing else (no whitespace, no line break).
    """
    algorithm, sep, value = text.partition("=")
    size = ACCEPTED_ALGORITHMS.get(algorithm)
    return bool(sep) and size is not None and len(value) == (4 * size + 2) // 3 and not value.strip(URLSAFE_ALPHABET)
