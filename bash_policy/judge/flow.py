"""Where each command runs: the directories `cd` can lead to, computed once per check.

A `cd` changes what later relative paths and repositories mean (threat 15).
This walks the tree as bash runs it: `&&` runs the next pipeline only after
success, `||` only after failure, `;` and newlines always; a pipeline of
several commands, a subshell and a substitution run in subshells, so a `cd`
inside changes nothing after them; a `cd` may fail, leaving the old
directory; `if`, loops and `case` may take any branch, any number of times.
The result maps every simple command to the set of directories it may start
in; None stands for one the checker cannot know (no cwd given, `cd` alone
going to $HOME).  Rules read it through `Context.directories()`.
"""

from __future__ import annotations

import os
import re

from ..read.model import (
    Case,
    Command,
    For,
    Group,
    If,
    List,
    Pipeline,
    Subshell,
    While,
    Word,
    children,
)
from ..repo.files import Unreadable, physical

OK, FAIL, ANY = "ok", "fail", "any"
_PREFIXES = ("builtin", "command")  # they run the cd builtin itself
_SHELL_FLAGS = {"-L", "-P", "-e", "-@"}
_MAX_STATES = 64
_UNKNOWN = frozenset({(None, ANY)})


def cd_operands(command: Command) -> list[Word] | None:
    """The operands of a command that runs the cd builtin, or None for other commands."""
    words = command.words
    while words and words[0].value in _PREFIXES:
        prefix, words = words[0].value, words[1:]
        # `command`'s own options: -p (a default PATH) and `--` still run cd;
        # -v and -V only print what cd is (bash 5.2, tried)
        while prefix == "command" and words and (words[0].value == "--" or re.fullmatch(
                r"-[pvV]+", words[0].value or "")):
            if "v" in words[0].value.lower():
                return None
            words = words[1:]
    if not words or words[0].value != "cd":
        return None
    operands = [w for w in words[1:] if w.value not in _SHELL_FLAGS]
    if operands and operands[0].value == "--":
        operands = operands[1:]
    return operands


def _targets(directory: str | None, target: str | None) -> frozenset[str | None]:
    """Where `cd TARGET` from `directory` leads: the logical and the physical
    path; unknown where it leads under /proc or /dev, which name the shell's
    own files (`cd /proc/self/cwd/sub` is not the checker's directory)."""
    if target in (None, "-", ""):
        return frozenset({None})
    if not target.startswith("/"):
        if directory is None:
            return frozenset({None})
        target = os.path.join(directory, target)
    logical = os.path.normpath(target)
    try:
        return frozenset({physical(logical), logical} if physical(target) else {None})
    except Unreadable:
        return frozenset({None})


def _gate(states: frozenset, op: str) -> tuple[frozenset, frozenset]:
    """Split states into those that run the next pipeline and those that skip it."""
    if op == "&&":
        return (frozenset((d, s) for d, s in states if s != FAIL),
                frozenset((d, FAIL) for d, s in states if s != OK))
    if op == "||":
        return (frozenset((d, s) for d, s in states if s != OK),
                frozenset((d, OK) for d, s in states if s != FAIL))
    return states, frozenset()


def _bounded(states) -> frozenset:
    states = frozenset(states)
    return _UNKNOWN if len(states) > _MAX_STATES else states


def _any(states) -> frozenset:
    return frozenset((d, ANY) for d, _ in states)


class _Flow:
    def __init__(self):
        self.where: dict[int, set[str | None]] = {}
        # A list's result from given states, so that a loop's fixed-point
        # passes do not re-walk nested loops: without it, checking nested
        # loops took time exponential in their depth.
        self.done: dict[tuple[int, frozenset], frozenset] = {}
        # Within one check only: the filesystem may change between checks.
        self.resolved: dict[tuple[str | None, str | None], frozenset] = {}

    def targets(self, directory: str | None, target: str | None) -> frozenset:
        key = (directory, target)
        if key not in self.resolved:
            self.resolved[key] = _targets(directory, target)
        return self.resolved[key]

    def record(self, command: Command, states: frozenset) -> None:
        self.where.setdefault(id(command), set()).update(d for d, _ in states)

    def substitutions(self, node, states: frozenset) -> None:
        """Commands in substitutions run in subshells from the current directories."""
        for child in children(node):
            if isinstance(child, List):
                self.list(child, states)

    def list(self, node: List, states: frozenset) -> frozenset:
        key = (id(node), states)
        if key not in self.done:
            self.done[key] = self.walk(node, states)
        return self.done[key]

    def walk(self, node: List, states: frozenset) -> frozenset:
        for index, item in enumerate(node.items):
            op = node.ops[index - 1] if index else ";"
            run, skip = _gate(states, op)
            after = self.pipeline(item, run)
            if index < len(node.ops) and node.ops[index] == "&":
                after = _any(run)  # a background job runs in a subshell
            states = _bounded(after | skip)
        return states

    def pipeline(self, node: Pipeline, states: frozenset) -> frozenset:
        if len(node.commands) == 1:
            after = self.node(node.commands[0], states)
        else:
            for member in node.commands:
                self.node(member, states)
            after = _any(states)
        if node.negated:
            after = frozenset((d, {OK: FAIL, FAIL: OK}.get(s, ANY)) for d, s in after)
        return after

    def node(self, node, states: frozenset) -> frozenset:
        if isinstance(node, Command):
            self.substitutions(node, states)
            self.record(node, states)
            operands = cd_operands(node)
            if operands is None:
                return _any(states)
            target = operands[0].value if len(operands) == 1 else None
            return _bounded({(d, FAIL) for d, _ in states}
                            | {(t, OK) for d, _ in states for t in self.targets(d, target)})
        if isinstance(node, Subshell):
            self.list(node.body, states)
            return _any(states)
        if isinstance(node, Group):
            return self.list(node.body, states)
        if isinstance(node, If):
            out: set = set()
            for test, body in node.branches:
                states = self.list(test, states)
                out |= self.list(body, states)
            out |= self.list(node.orelse, states) if node.orelse else states
            return _bounded(_any(out))
        if isinstance(node, (For, While)):
            self.substitutions(node, states) if isinstance(node, For) else None
            seen = states
            for _ in range(3):  # to a fixed point: each pass may add directories
                lists = [node.test, node.body] if isinstance(node, While) else [node.body]
                current = seen
                for body in lists:
                    current = self.list(body, current)
                grown = _bounded(seen | _any(current))
                if grown == seen:
                    break
                seen = grown
            else:
                seen = _UNKNOWN
            return _any(seen)
        if isinstance(node, Case):
            self.substitutions(node, states)
            out = set(states)
            for arm in node.arms:
                if arm.body is not None:
                    out |= self.list(arm.body, _bounded(out))
            return _bounded(_any(out))
        self.substitutions(node, states)
        return _any(states)


def command_directories(body: List | None, cwd: str | None,
                        commands: tuple[Command, ...] | None = None) -> dict[int, set[str | None]]:
    """Every simple command (by id) mapped to the directories it may run in.
    When none of `commands` (every simple command of `body`, if the caller
    has them) runs `cd`, every command runs in `cwd`: the map is left empty,
    which `Context.directories()` reads as `cwd`, without walking the tree."""
    flow = _Flow()
    if body is not None and (commands is None
                             or any(cd_operands(c) is not None for c in commands)):
        flow.list(body, frozenset({(cwd, ANY)}))
    return flow.where
