"""`cd`: targets the checker can follow, and the directories a command may run in.

Where each command runs is computed once per check (bash_policy/judge/flow.py);
`cd_target` denies the `cd`s that flow cannot follow, and `known_directories`
gives rules that read a directory (repository config, toolchain files) the
directories of the command being checked.
"""

from __future__ import annotations

from ...read.model import EXTGLOB, GLOB, TILDE
from ..codes import Code
from ..flow import KERNEL, OLDPWD
from . import rule


@rule("cd_target", codes=[Code.BP205, Code.BP203, Code.BP406],
      deny=["cd -", "cd src*", "cd -- ~/x", "cd -P /proc/self/cwd/.."],
      allow=["cd src", "cd /tmp", "cd /tmp && cd -"])
def cd_target(inv, ctx) -> None:
    """`cd` to a directory the checker cannot follow: a `~`, a pattern, `cd -`
    while $OLDPWD may still be the caller's, a path whose `..` follows a link
    under /dev or /proc.  Later relative paths and repositories depend on
    where `cd` went (judge/flow.py)."""
    for word in inv.positionals:
        if word.value is None:
            kinds = {e.kind for e in word.expansions}
            if TILDE in kinds:
                ctx.deny(Code.BP205, word.span,
                         f"`cd {word.text}`: `~` expands to a home directory the checker cannot see",
                         "cd to the absolute path")
            elif kinds & {GLOB, EXTGLOB}:
                ctx.deny(Code.BP203, word.span,
                         f"`cd {word.text}`: the pattern may match several directories or none",
                         "write the directory name")
    why = ctx.places.unresolved.get(id(ctx.command))
    if why == OLDPWD:
        word = next((w for w in inv.positionals if w.value == "-"), inv.words[0])
        ctx.deny(Code.BP406, word.span,
                 "`cd -` goes back to $OLDPWD, which is the caller's here unless a `cd` before it in "
                 "the same shell succeeded", "cd to the directory by its path, or join the first "
                 "`cd` with `&&`")
    elif why == KERNEL:
        ctx.deny(Code.BP406, inv.words[0].span,
                 f"`{ctx.source[ctx.command.span.start:ctx.command.span.end]}` leads through a link under "
                 "/dev, /proc or /sys (which names the shell's own files) or a CDPATH entry with `~`, "
                 "so the checker cannot tell which directory it reaches",
                 "cd to the directory by its physical path")


def known_directories(ctx, anchor, what: str, unchecked_note: str, effect: str) -> list[str]:
    """The directories the segment may run in, sorted, for a hook that inspects
    them.  Without a cwd the hook's `unchecked_note` goes on the verdict; a
    directory the checker cannot resolve (after a bare `cd`) denies."""
    found = []
    for directory in sorted(ctx.directories(), key=lambda d: (d is None, d or "")):
        if directory is not None:
            found.append(directory)
        elif ctx.cwd is None:
            if unchecked_note not in ctx.notes:
                ctx.notes.append(unchecked_note)
        else:
            program = ctx.source[anchor.start:anchor.end]
            ctx.deny(Code.BP601, anchor,
                     f"`{program}` may run in a directory the checker cannot resolve (after a "
                     f"`cd` to $HOME or an unknown place, or under `find -execdir`), so {what} "
                     "is unknown", "cd to an absolute path first; use `find -exec`", effect)
    return found
