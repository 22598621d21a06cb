"""`cd`: targets the checker can follow, and the directories a command may run in.

Where each command runs is computed once per check (bash_policy/judge/flow.py);
`cd_target` denies the `cd`s that flow cannot follow, and `known_directories`
gives rules that read a directory (repository config, toolchain files) the
directories of the command being checked.
"""

from __future__ import annotations

from ...read.model import EXTGLOB, GLOB, TILDE, Word
from ...records import dataclass
from ..codes import Code, Effect
from ..flow import KERNEL, OLDPWD
from ..problems import Problem
from . import rule


@dataclass(frozen=True)
class CdHome(Problem):
    code = Code.BP205
    message_format = "`cd {word.text}`: `~` expands to a home directory the checker cannot see"
    hint_format = "cd to the absolute path"
    word: Word


@dataclass(frozen=True)
class CdPattern(Problem):
    code = Code.BP203
    message_format = "`cd {word.text}`: the pattern may match several directories or none"
    hint_format = "write the directory name"
    word: Word


@dataclass(frozen=True)
class CdBack(Problem):
    code = Code.BP406
    message_format = ("`cd -` goes back to $OLDPWD, which is the caller's here unless a `cd` before it in "
                      "the same shell succeeded")
    hint_format = "cd to the directory by its path, or join the first `cd` with `&&`"


@dataclass(frozen=True)
class CdThroughKernel(Problem):
    code = Code.BP406
    message_format = ("`{command}` leads through a link under /dev, /proc or /sys (which names the "
                      "shell's own files) or a CDPATH entry with `~`, so the checker cannot tell which "
                      "directory it reaches")
    hint_format = "cd to the directory by its physical path"
    command: str


@dataclass(frozen=True)
class UnresolvedDirectory(Problem):
    code = Code.BP601
    message_format = ("`{program}` may run in a directory the checker cannot resolve (after a `cd` to "
                      "$HOME or an unknown place, or under `find -execdir`), so {what} is unknown")
    hint_format = "cd to an absolute path first; use `find -exec`"
    program: str
    what: str
    does: Effect  # what the rule asking would have judged: running, the network

    def consequence(self) -> Effect:
        return self.does


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
                ctx.deny(CdHome(word), word.span)
            elif kinds & {GLOB, EXTGLOB}:
                ctx.deny(CdPattern(word), word.span)
    why = ctx.places.unresolved.get(id(ctx.command))
    if why == OLDPWD:
        word = next((w for w in inv.positionals if w.value == "-"), inv.words[0])
        ctx.deny(CdBack(), word.span)
    elif why == KERNEL:
        ctx.deny(CdThroughKernel(ctx.source[ctx.command.span.start:ctx.command.span.end]), inv.words[0].span)


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
            ctx.deny(UnresolvedDirectory(program, what, Effect(effect)), anchor)
    return found
