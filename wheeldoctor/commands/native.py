"""The native section of ``check --all`` and ``doctor``: shared objects as the loader sees them, judged.

Every shared object the environment's RECORDs list is read (:mod:`wheeldoctor.where.native`),
each library it needs is found as glibc's loader would find it, and the result is judged
(:mod:`wheeldoctor.judge.native`) and put to the policy's accept rules and baseline.
Nothing is loaded or run. With a cache directory, the audit is kept with the fingerprint of
every path its scan read (:mod:`wheeldoctor.engine.native_memo`): a warm check stats them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheeldoctor.judge.native_audit import NativeAudit
    from wheeldoctor.judge.policy import Acceptances, Policy
    from wheeldoctor.judge.requirements import RequirementGraph
    from wheeldoctor.model.environment import Environment
    from wheeldoctor.where.fingerprint import Read


def native_section(
    env: Environment,
    graph: RequirementGraph,
    policy: Policy,
    *,
    strict: bool = False,
    cache_dir: str | None = None,
) -> tuple[NativeAudit, Acceptances]:
    """The native audit of ``env``'s active distributions, with what ``policy`` accepts marked.

    ``graph`` says who requires whom (an overlay's builds are not a mix); ``strict`` fails
    an object whose dynamic section cannot be read (WD094).
    """
    from wheeldoctor.engine.native_memo import kept_audit
    from wheeldoctor.judge.native_builds import family_relations
    from wheeldoctor.judge.native_policy import accept_native

    installed = [(d.name, d.version) for d in env.active()]
    relations = family_relations((name for name, _ in installed), graph.requires)

    def audit(noted: Read | None) -> NativeAudit:
        # The judge, the ELF reader and the loader: imported only where the memo does not hold.
        from wheeldoctor.judge.native import judge_native
        from wheeldoctor.where.native import scan_native

        scan = scan_native(env, noted=noted)
        return judge_native(scan, installed, lambda a, b: (a, b) in relations, strict=strict)

    inputs = (str(strict), *sorted(f"{a} requires {b}" for a, b in relations))
    return accept_native(kept_audit(env, cache_dir, inputs, audit), policy)
