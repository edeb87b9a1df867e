"""The sentence every report format gives the config a run read: which file, and what it narrowed."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wheeldoctor.judge.policy import PolicyOutcome


def config_said(policy: PolicyOutcome | None) -> str | None:
    """``FILE (narrows: ignore WD061; 2 accept rule(s))``: the config a run read, for every format; None: none."""
    if policy is None or policy.config is None:
        return None
    return said(policy.config, policy.narrowed)


def said(config: str, narrowed: tuple[str, ...]) -> str:
    """``FILE (narrows: ignore WD061; 2 accept rule(s))``, or ``FILE (narrows: nothing)``."""
    return f"{config} (narrows: {'; '.join(narrowed) if narrowed else 'nothing'})"
