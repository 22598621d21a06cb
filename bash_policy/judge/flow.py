"""Where each command runs: the directories `cd` can lead to, computed once per check.

A `cd` changes what later relative paths and repositories mean (threat 15).
This walks the tree as bash runs it: `&&` runs the next pipeline only after
success, `||` only after failure, `;` and newlines always; a pipeline of
several commands, a subshell and a substitution run in subshells, so a `cd`
inside changes nothing after them; a `cd` may fail, leaving the old
directory; `if`, loops and `case` may take any branch, any number of times.

The shell keeps two directories, and the checker follows both (cd.def and
lib/sh/pathcanon.c of bash 5.2, each case run with /bin/bash 5.2.15:
tests/test_cd_physical.py): its logical `$PWD`, against which `cd -L` (the
default) resolves `..` lexically, and the process's physical directory, from
which the kernel resolves every path a program opens (`..` after a symlink
goes to the link target's parent).  `cd -L` canonicalises `$PWD/TARGET`
lexically, checking that each step is a directory; if that fails it lets
the kernel resolve the path and takes the physical result; `cd -P` always
resolves physically.  A relative target that is not `.`, `..`, `./…` or
`../…` is first looked up in each `CDPATH` entry.  `cd -` goes to
`$OLDPWD`, known once a `cd` in the same shell has succeeded on every way
there.  The result maps every command (and compound command) to the physical
directories it may start in and the `$PWD` values it may see; None stands
for a directory the checker cannot know (no cwd given, `cd` alone going to
$HOME).  Rules read it through `Context.directories()`.
"""

from __future__ import annotations

import os
import re

from ..read.model import (
    ArithFor,
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
from ..records import dataclass, field
from ..repo.files import resolve

OK, FAIL, ANY = "ok", "fail", "any"
_PREFIXES = ("builtin", "command")  # they run the cd builtin itself
_MAX_STATES = 64
_KERNEL_DIRS = ("/dev", "/proc", "/sys")
# A state: (logical $PWD, physical directory, $OLDPWD, status of the last
# pipeline); $OLDPWD is the (logical, physical) pair a `cd` left, or CALLER.
CALLER = "caller's"  # the $OLDPWD the shell started with, which the checker does not see
_UNKNOWN = frozenset({(None, None, CALLER, ANY)})
# Why the checker cannot tell where a `cd` goes (the rule names it).
OLDPWD = "oldpwd"
KERNEL = "kernel"


def cd_operands(command: Command) -> list[Word] | None:
    """The operands of a command that runs the cd builtin, or None for other commands."""
    words = _cd_words(command)
    if words is None:
        return None
    return _options(words[1:])[1]


def _cd_words(command: Command) -> tuple[Word, ...] | None:
    words = command.words
    while words and words[0].value in _PREFIXES:
        prefix, words = words[0].value, words[1:]
        # `command`'s own options: -p (a default PATH) and `--` still run cd;
        # -v and -V only print what cd is (bash 5.2, tried)
        while prefix == "command" and words and (words[0].value == "--" or re.fullmatch(
                r"-[pvV]+", words[0].value or "")):
            if "v" in (words[0].value or "").lower():
                return None
            words = words[1:]
    if not words or words[0].value != "cd":
        return None
    return words


def _options(words) -> tuple[bool, list[Word]]:
    """cd's options as bash's internal_getopt reads them: clusters of L, P, e
    and @ up to the first operand or `--`; the last of -L and -P wins.
    Returns (physical, operands)."""
    physical = False
    rest = list(words)
    while rest and rest[0].value and rest[0].value.startswith("-") and rest[0].value != "-":
        value = rest.pop(0).value
        if value == "--":
            break
        for letter in value[1:]:
            if letter in "LP":
                physical = letter == "P"
    return physical, rest


def _in_kernel_dir(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in _KERNEL_DIRS)


def _physical(path: str) -> str | None:
    """The directory the kernel reaches for the absolute `path`, symlinks and
    `..` resolved as it does; lexical under /dev, /proc and /sys (their links
    name the opening process's own files), and unknown where a `..` follows
    such a link there."""
    real = resolve(path)
    if _in_kernel_dir(real) and ".." in path.split("/"):
        return None
    return real


def _isdir(path: str) -> bool:
    """Whether bash's stat sees a directory (under /dev, /proc and /sys the
    checker's own view is not the shell's: taken to be one)."""
    return _in_kernel_dir(os.path.normpath(path)) or os.path.isdir(path)


def canonical(path: str) -> str | None:
    """sh_canonpath(PATH, PATH_CHECKDOTDOT | PATH_CHECKEXISTS) for an absolute
    path: `.` and empty steps dropped and `..` taken lexically, each step
    having to be an existing directory (through links) when it is added and
    before a `..` removes it; None when one is not."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                if not _isdir("/" + "/".join(parts)):
                    return None
                parts.pop()
            continue
        parts.append(part)
        if not _isdir("/" + "/".join(parts)):
            return None
    return "/" + "/".join(parts)


def _searched(target: str) -> bool:
    """Whether bash looks `target` up in CDPATH (cd.def: not absolute_pathname)."""
    return not (target.startswith("/") or target in (".", "..")
                or target.startswith(("./", "../")))


@dataclass
class Places:
    """Where each command may run: `where` maps a node's id to the physical
    directories it may start in, `pwds` to the `$PWD` values it may see;
    `unresolved` names the `cd`s whose destination the checker cannot tell,
    and why (OLDPWD, KERNEL)."""

    where: dict[int, set[str | None]] = field(default_factory=dict)
    pwds: dict[int, set[str | None]] = field(default_factory=dict)
    unresolved: dict[int, str] = field(default_factory=dict)


def _gate(states: frozenset, op: str) -> tuple[frozenset, frozenset]:
    """Split states into those that run the next pipeline and those that skip it."""
    if op == "&&":
        return (frozenset(s for s in states if s[3] != FAIL),
                frozenset(s[:3] + (FAIL,) for s in states if s[3] != OK))
    if op == "||":
        return (frozenset(s for s in states if s[3] != OK),
                frozenset(s[:3] + (OK,) for s in states if s[3] != FAIL))
    return states, frozenset()


def _bounded(states) -> frozenset:
    states = frozenset(states)
    return _UNKNOWN if len(states) > _MAX_STATES else states


def _any(states) -> frozenset:
    return frozenset(s[:3] + (ANY,) for s in states)


class _Flow:
    def __init__(self, cdpath: str):
        self.places = Places()
        self.cdpath = [entry for entry in cdpath.split(":")] if cdpath else []
        # A list's result from given states, so that a loop's fixed-point
        # passes do not re-walk nested loops: without it, checking nested
        # loops took time exponential in their depth.
        self.done: dict[tuple[int, frozenset], frozenset] = {}
        # Within one check only: the filesystem may change between checks.
        self.resolved: dict[tuple, tuple] = {}

    def record(self, node, states: frozenset) -> None:
        self.places.where.setdefault(id(node), set()).update(s[1] for s in states)
        self.places.pwds.setdefault(id(node), set()).update(s[0] for s in states)

    def substitutions(self, node, states: frozenset) -> None:
        """Commands in substitutions run in subshells from the current directories."""
        for child in children(node):
            if isinstance(child, List) and not _is_body(node, child):
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
            after = frozenset(s[:3] + ({OK: FAIL, FAIL: OK}.get(s[3], ANY),) for s in after)
        return after

    def cd(self, command: Command, words, states: frozenset) -> frozenset:
        """The states after `cd`: each state's failure, and where it may lead."""
        physical, operands = _options(words[1:])
        if len(operands) > 1:
            return _bounded({s[:3] + (FAIL,) for s in states})
        target = operands[0].value if operands else None
        out = {s[:3] + (FAIL,) for s in states}
        for pwd, phys, old, _ in states:
            for new_pwd, new_phys, why in self.change(pwd, phys, old, target, bool(operands),
                                                      physical):
                if why is not None:
                    self.places.unresolved.setdefault(id(command), why)
                out.add((new_pwd, new_phys, (pwd, phys), OK))  # OLDPWD: the $PWD it left
        return _bounded(out)

    def change(self, pwd, phys, old, target: str | None, given: bool, physical: bool):
        """Where `cd [-P] TARGET` from (pwd, phys) may lead: (pwd, phys, why
        unknown or None) for each outcome."""
        if not given:
            return [(None, None, None)]  # $HOME, which the checker does not see
        if target is None:
            return [(None, None, None)]  # computed: denied by the rules
        if target == "":
            return [(pwd, phys, None)]  # bash 5.2.15: `cd ''` succeeds and stays
        if target == "-":
            if old == CALLER:
                return [(None, None, OLDPWD)]
            back, _ = old
            if back is None:
                return [(None, None, None)]  # back to a start the checker does not know either
            target = back
        key = (pwd, phys, target, physical)
        if key not in self.resolved:
            self.resolved[key] = tuple(self.search(pwd, phys, target, physical))
        return self.resolved[key]

    def search(self, pwd, phys, target: str, physical: bool):
        """CDPATH first (the first entry that leads to a directory wins), then
        the target itself."""
        if _searched(target) and self.cdpath:
            found: list[tuple] = []
            for entry in self.cdpath:
                if entry.startswith("~"):
                    return [*found, (None, None, KERNEL)]
                candidate = os.path.join(entry, target) if entry else target
                for outcome in self.to_directory(pwd, phys, candidate, physical):
                    if outcome[1] is None:
                        found.append(outcome)
                    elif _isdir(outcome[1]):
                        return [*found, outcome]
            return [*found, *self.to_directory(pwd, phys, target, physical)]
        return list(self.to_directory(pwd, phys, target, physical))

    def to_directory(self, pwd, phys, newdir: str, physical: bool):
        """change_to_directory(): where a successful chdir leaves $PWD and the process."""
        if not newdir.startswith("/") and (pwd is None or phys is None):
            return [(None, None, None)]  # relative to a directory nobody knows
        logical_path = newdir if newdir.startswith("/") else os.path.join(pwd, newdir)
        from_process = newdir if newdir.startswith("/") else os.path.join(phys, newdir)
        if physical:
            real = _physical(from_process)
            return [(real, real, None if real is not None else KERNEL)]
        canon = canonical(logical_path)
        if canon is not None:
            real = resolve(canon)
            return [(canon, real, None)]
        # Canonicalisation failed: bash lets the kernel resolve the path, then
        # takes $PWD from the directory it reached.
        real = _physical(logical_path)
        if real is not None and not _isdir(real):
            real = _physical(from_process)
        return [(real, real, None if real is not None else KERNEL)]

    def node(self, node, states: frozenset) -> frozenset:
        self.record(node, states)
        if isinstance(node, Command):
            self.substitutions(node, states)
            words = _cd_words(node)
            if words is None:
                return _any(states)
            return self.cd(node, words, states)
        self.substitutions(node, states)
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
        if isinstance(node, (For, ArithFor, While)):
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
            out = set(states)
            for arm in node.arms:
                if arm.body is not None:
                    out |= self.list(arm.body, _bounded(out))
            return _bounded(_any(out))
        return _any(states)


def _is_body(node, child) -> bool:
    """Whether `child` is one of a compound command's own lists (walked by
    `node`), not a substitution in one of its words."""
    if isinstance(node, (Subshell, Group, For, ArithFor)):
        return child is node.body
    if isinstance(node, If):
        return any(child is t or child is b for t, b in node.branches) or child is node.orelse
    if isinstance(node, While):
        return child is node.test or child is node.body
    if isinstance(node, Case):
        return any(child is arm.body for arm in node.arms)
    return False


def start_states(cwd: str | None) -> frozenset:
    """The shell's directories at the start: its $PWD is the harness's PWD
    when that names the directory, else what getcwd() returns, so either."""
    if cwd is None:
        return _UNKNOWN
    cwd = os.path.abspath(cwd)
    real = resolve(cwd)
    return frozenset({(cwd, real, CALLER, ANY), (real, real, CALLER, ANY)})


def command_directories(body: List | None, cwd: str | None,
                        commands: tuple[Command, ...] | None = None, cdpath: str = "") -> Places:
    """Every node (by id) mapped to the directories it may run in.  When none
    of `commands` (every simple command of `body`, if the caller has them)
    runs `cd`, every command runs in `cwd`: the maps are left empty, which
    `Context.directories()` reads as `cwd`, without walking the tree.
    `cdpath`: the CDPATH the shell has ("" when unset)."""
    flow = _Flow(cdpath)
    if body is not None and (commands is None
                             or any(cd_operands(c) is not None for c in commands)):
        flow.list(body, start_states(cwd))
    return flow.places
