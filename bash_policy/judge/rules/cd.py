"""`cd`: which directory each later segment of a command runs in.

A `cd` changes what later relative paths and repositories mean (threat 15).
`directories(ctx)` replays the segments before the current one as bash runs
them: `&&` runs the next pipeline only after success, `||` only after
failure, `;` and newlines always; a `cd` inside a pipeline runs in a subshell
and changes nothing; a `cd` may fail, leaving the old directory.  The result
is every directory the current segment may start in; None stands for one the
checker cannot know (no cwd given, `cd` alone going to $HOME).
"""

from __future__ import annotations

import os

from ...read.model import EXTGLOB, GLOB, TILDE
from ..codes import Code
from . import rule

OK, FAIL, ANY = "ok", "fail", "any"
_PREFIXES = ("builtin", "command")  # they run the cd builtin itself
_SHELL_FLAGS = {"-L", "-P", "-e", "-@"}
_MAX_STATES = 64


@rule("cd_target", codes=[Code.BP205, Code.BP203, Code.BP406],
      deny=["cd -", "cd src*", "cd -- ~/x"], allow=["cd src", "cd /tmp"])
def cd_target(inv, ctx) -> None:
    """`cd` to a directory the checker cannot follow: `cd -`, a `~` or a pattern.
    Later relative paths and repositories depend on where `cd` went."""
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
        elif word.value == "-":
            ctx.deny(Code.BP406, word.span,
                     "`cd -` goes back to $OLDPWD, a directory the checker cannot see",
                     "cd to the directory by its path")


def _cd_words(segment):
    """The operands of a segment that runs the cd builtin, or None for other segments."""
    words = segment.words
    while words and words[0].value in _PREFIXES:
        words = words[1:]
    if not words or words[0].value != "cd":
        return None
    operands = [w for w in words[1:] if w.value not in _SHELL_FLAGS]
    if operands and operands[0].value == "--":
        operands = operands[1:]
    return operands


def _targets(directory: str | None, operands) -> set[str | None]:
    """Where `cd OPERANDS` from `directory` leads: the logical and the physical path."""
    if len(operands) != 1 or operands[0].value in (None, "-", ""):
        return {None}
    target = operands[0].value
    if not target.startswith("/"):
        if directory is None:
            return {None}
        target = os.path.join(directory, target)
    return {os.path.normpath(target), os.path.realpath(target)}


def _gate(states, joiner: str):
    """Split states into those that run the next pipeline and those that skip it."""
    if joiner == "&&":
        run = {(d, s) for d, s in states if s != FAIL}
        skip = {(d, FAIL) for d, s in states if s != OK}
    elif joiner == "||":
        run = {(d, s) for d, s in states if s != OK}
        skip = {(d, OK) for d, s in states if s != FAIL}
    else:
        run, skip = set(states), set()
    return run, skip


def directories(ctx) -> set[str | None]:
    """Every directory the current segment may run in."""
    segments, current = ctx.segments, ctx.segment or 0
    states = {(ctx.cwd, ANY)}
    start = 0
    while start <= current and start < len(segments):
        end = start
        while end + 1 < len(segments) and segments[end + 1].joiner in ("|", "|&"):
            end += 1
        run, skip = _gate(states, segments[start].joiner)
        if end >= current:
            return {d for d, _ in run}
        operands = _cd_words(segments[start]) if start == end else None
        if operands is None or segments[start].negated:
            after = {(d, ANY) for d, _ in run}
            if operands is not None:
                after |= {(t, ANY) for d, _ in run for t in _targets(d, operands)}
        else:
            after = {(d, FAIL) for d, _ in run}
            after |= {(t, OK) for d, _ in run for t in _targets(d, operands)}
        states = after | skip
        if len(states) > _MAX_STATES:  # symlinked `cd` chains: give up knowing, do not grow
            states = {(None, ANY)}
        start = end + 1
    return {ctx.cwd}


def known_directories(ctx, anchor, what: str, unchecked_note: str, effect: str) -> list[str]:
    """The directories the segment may run in, sorted, for a hook that inspects
    them.  Without a cwd the hook's `unchecked_note` goes on the verdict; a
    directory the checker cannot resolve (after a bare `cd`) denies."""
    found = []
    for directory in sorted(directories(ctx), key=lambda d: (d is None, d or "")):
        if directory is not None:
            found.append(directory)
        elif ctx.cwd is None:
            if unchecked_note not in ctx.notes:
                ctx.notes.append(unchecked_note)
        else:
            program = ctx.source[anchor.start:anchor.end]
            ctx.deny(Code.BP601, anchor,
                     f"`{program}` may run in a directory the checker cannot resolve (after `cd` "
                     f"with no operand, which goes to $HOME), so {what} is unknown",
                     "cd to an absolute path first", effect)
    return found
