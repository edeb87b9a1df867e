"""Whether any directory on the recorded paths is a symbolic link, kept (see :mod:`wheeldoctor.engine.result_memo`).

WD008's check ``lstat``-s every distinct directory of the recorded paths below their site
directory (thousands on a large environment) to find one that is a link. Where none was,
that is kept with the fingerprint of every directory holding one of them: creating,
removing or renaming an entry moves its directory's mtime and ctime, so while they are
unchanged every directory on the way is still a directory. A later run stats those
parents (a fraction of the directories: the leaves need no stat) instead.

The inputs, compared by value: each judged distribution's dist-info, site directory,
root and RECORD fingerprint (the recorded paths follow from them). Kept only where
every RECORD's fingerprint was settled and no link was found at all; the files
themselves are still ``lstat``-ed where no proof saw them as regular files.
"""

from __future__ import annotations

from wheeldoctor.engine.result_memo import Read, ResultMemo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from wheeldoctor.model.environment import InstalledDistribution
    from wheeldoctor.model.fingerprint import Identity

_SUFFIX = ".links"
#: Bump when what "no directory is a link" is kept for changes.
_VERSION = 1


class LinkMemo:
    """The kept answer "no directory on these distributions' recorded paths is a link"."""

    def __init__(self, cache_dir: str, judged: Sequence[tuple[InstalledDistribution, Identity]]) -> None:
        inputs = tuple((d.path, d.location, d.root, identity) for d, identity in judged)
        key = "\0".join(["links", *sorted({d.location for d, _ in judged})])
        self._memo = ResultMemo(cache_dir, key, _SUFFIX, _VERSION, inputs)
        self.read = Read()
        """Where the directories' check notes what it stats (see :func:`wheeldoctor.where.links.through_links`)."""

    def holds(self) -> bool:
        """Whether the kept answer still holds: no directory on the way is a link."""
        return self._memo.get() is True

    def keep(self) -> bool:
        """Keep the answer (no link was found) with what :attr:`read` noted; False where it is not kept."""
        return self._memo.keep(self.read, True)


def link_memo(
    cache_dir: str | None, judged: Sequence[tuple[InstalledDistribution, Identity | None]]
) -> LinkMemo | None:
    """The memo of these distributions' directories, made before any is stat'ed; None where none is kept."""
    if cache_dir is None or not judged or any(identity is None for _, identity in judged):
        return None
    return LinkMemo(cache_dir, [(d, identity) for d, identity in judged if identity is not None])
