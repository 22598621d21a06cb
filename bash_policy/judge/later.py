"""Whether any command runs after a given one in the same shell.

An `export` (or any change to the shell's own state) matters only to what
runs after it in that shell: the rest of its list, a loop's next round, an
`if`'s body after its test, a case arm that falls through, and, at the top
level, the commands of later calls when the harness keeps one shell for the
session (`Policy.persistent_shell`).  A subshell, a substitution, a
background job and a member of a pipeline other than the last end with
what they changed; the last member may run in the shell itself (`shopt -s
lastpipe`), so it is followed outwards like a plain command.
"""

from __future__ import annotations

from ..read.model import (
    COMMAND_SUB,
    OUTPUT_SUB,
    PROCESS_SUB,
    Case,
    For,
    If,
    List,
    Pipeline,
    Subshell,
    While,
    children,
    own_words,
)


def runs_after(body: List | None, target, persistent: bool) -> bool:
    """Whether a command may run after `target` (a node of `body`) in the
    shell `target` runs in; True when `target` is not found (fail closed)."""
    path = _path(body, target)
    if path is None:
        return True
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:])):
        if _substitution_body(parent, child):
            return False
        if isinstance(parent, List):
            index = next(k for k, item in enumerate(parent.items) if item is child)
            if index < len(parent.items) - 1 and parent.ops[index] != "&":
                return True
            if index < len(parent.ops) and parent.ops[index] == "&":
                return False  # a background job: a subshell of its own
        elif isinstance(parent, Pipeline):
            if len(parent.commands) > 1 and child is not parent.commands[-1]:
                return False
        elif isinstance(parent, (For, While)):
            return True  # the body (or the test) runs again
        elif isinstance(parent, If):
            if any(child is test for test, _ in parent.branches):
                return True  # a body or the next test follows
        elif isinstance(parent, Case):
            arm = next((a for a in parent.arms if a.body is child), None)
            if arm is not None and arm.terminator in (";&", ";;&"):
                return True
        elif isinstance(parent, Subshell):
            return False
    return persistent


def writes_to_pipe(body: List | None, target) -> bool:
    """Whether `target` (a simple command of `body`) writes its standard output
    into a pipe to the next command of its pipeline, no redirection of its
    own sending it elsewhere (so it is never a terminal)."""
    path = _path(body, target)
    if path is None or len(path) < 2 or not isinstance(path[-2], Pipeline):
        return False
    pipeline = path[-2]
    if target is pipeline.commands[-1]:
        return False
    return not any(r.op in ("&>", "&>>") or (r.op.startswith(">") and r.fd in (None, 1))
                   or (r.op in ("<>", "<&") and r.fd == 1) for r in getattr(target, "redirects", ()))


def _substitution_body(parent, child) -> bool:
    """Whether `child` is the body of a command or process substitution in one of `parent`'s words."""
    return any(e.body is child and e.kind in (COMMAND_SUB, PROCESS_SUB, OUTPUT_SUB)
               for word in own_words(parent) for e in word.expansions)


def _path(node, target) -> list | None:
    """The nodes from `node` down to `target`, both included."""
    if node is None:
        return None
    stack = [(node, [node])]
    while stack:
        current, path = stack.pop()
        if current is target:
            return path
        for child in children(current):
            stack.append((child, path + [child]))
    return None
