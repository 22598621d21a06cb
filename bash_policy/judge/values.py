"""What each shell variable holds where each command runs, as far as the script says.

`x=src; ls "$x"` passes `src`: a variable the script assigns a known value
and has not changed since holds that value.  This walks the tree as bash
runs it, once per check, and maps every simple command (and every `for`
loop, whose words expand before it runs) to the variables known there:

- a bare assignment `NAME=VALUE` (or `NAME=(WORDS)`, an array) of a
  shell-local name (judge/shapes.py: lower case) sets it, to the value when
  the value's expansions are themselves known, else to "unknown";
- `read` and `mapfile`-like builtins, `for` and loops make what they may
  assign unknown; a loop makes everything it assigns unknown from its start
  (it may run any number of times, or none);
- `&&`, `||`, `if`, `case` join their branches: a name keeps a value only
  when every path gives it the same one;
- subshells, the members of a pipeline of several commands, substitutions
  and background jobs run in subshells: what they assign is not seen after
  them (a pipeline's last member may run in the shell itself under
  `shopt -s lastpipe`, so what it assigns is unknown after it).

A name the script never assigns is not in the map: its value comes from the
environment, which the checker cannot see.  Upper-case names (which the
harness may have exported or bash may set itself) and `_` are never tracked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

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
    walk,
)
from . import shapes

# A value: a string, an array's elements, or UNKNOWN.
Value = str | tuple[str, ...] | object
UNKNOWN = object()
Env = Mapping[str, Value]
_EMPTY: Env = {}

# Builtins that may assign the names among their operands.  The policy allows
# only `read` of them; the others are here so that a user spec allowing one
# cannot make the checker trust a value it changed.
ASSIGNING = frozenset({"read", "mapfile", "readarray", "printf", "declare", "typeset", "local",
                       "export", "readonly", "unset", "getopts", "let", "set", "shift"})
_PREFIXES = frozenset({"command", "builtin"})


def tracked(name: str) -> bool:
    """Whether the checker follows the value of `name`: a shell-local one (judge/shapes.py)."""
    return shapes.local_name(name)


def join(a: Env, b: Env) -> Env:
    """What is known after either of two paths."""
    if a is b:
        return a
    return {n: (a[n] if a[n] == b[n] or a[n] is b[n] else UNKNOWN) if n in a and n in b else UNKNOWN
            for n in set(a) | set(b)}


def forget(env: Env, names) -> Env:
    names = [n for n in names if tracked(n)]
    if not names:
        return env
    out = dict(env)
    for name in names:
        out[name] = UNKNOWN
    return out


def _program(command: Command) -> tuple[str | None, tuple[Word, ...]]:
    words = command.words
    while words and words[0].value in _PREFIXES:
        words = words[1:]
    return (words[0].value, words[1:]) if words else (None, ())


def _identifiers(words) -> list[str]:
    """Every name a builtin's operands may assign (`x`, `x=1`, `x[0]=1`)."""
    out = []
    for word in words:
        text = word.value if word.value is not None else word.text
        head = text.split("=", 1)[0].split("[", 1)[0]
        if head.isascii() and head.isidentifier():
            out.append(head)
    return out


def assigned(node) -> set[str]:
    """Names a subtree may assign in the shell that runs it (an over-approximation)."""
    names: set[str] = set()
    for inner in walk(node):
        if isinstance(inner, Command):
            if not inner.words:
                names.update(a.name for a in inner.assignments)
            program, operands = _program(inner)
            if program in ASSIGNING:
                names.update(_identifiers(operands))
                names.update(("REPLY", "MAPFILE"))
        elif isinstance(inner, For):
            names.add(inner.name)
        elif isinstance(inner, ArithFor):  # any name its expressions hold
            names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f"{inner.init} {inner.test} {inner.update}"))
    return names


class Values:
    """The walk; `at` maps id(command or for loop) to the variables known there."""

    def __init__(self, value_of, words_of):
        # (word, env) -> what an assignment's value or an array's element makes
        # (judge/expand.py): one string, or words; None when not known.
        self.value_of, self.words_of = value_of, words_of
        self.at: dict[int, Env] = {}

    def list(self, node: List, env: Env) -> Env:
        for index, item in enumerate(node.items):
            op = node.ops[index - 1] if index else ";"
            background = index < len(node.ops) and node.ops[index] == "&"
            if background:
                self.pipeline(item, env)  # a subshell: nothing it assigns is seen after it
                continue
            after = self.pipeline(item, env)
            env = join(env, after) if op in ("&&", "||") else after
        return env

    def pipeline(self, node: Pipeline, env: Env) -> Env:
        if len(node.commands) == 1:
            return self.node(node.commands[0], env)
        last = env
        for member in node.commands:
            last = self.node(member, env)
        return join(env, last)  # only the last member, and only under lastpipe

    def substitutions(self, node, env: Env) -> None:
        for child in children(node):
            if isinstance(child, List):
                self.list(child, env)  # subshells

    def node(self, node, env: Env) -> Env:
        if isinstance(node, Command):
            self.substitutions(node, env)
            self.at[id(node)] = env
            if not node.words:
                return self.assignments(node, env)
            program, operands = _program(node)
            if program in ASSIGNING:
                return forget(env, _identifiers(operands))
            return env
        if isinstance(node, Subshell):
            self.substitutions(node, env)
            self.list(node.body, env)
            return env
        if isinstance(node, Group):
            self.substitutions(node, env)
            return self.list(node.body, env)
        if isinstance(node, If):
            self.substitutions(node, env)
            ends = []
            for test, body in node.branches:
                env = self.list(test, env)
                ends.append(self.list(body, env))
            ends.append(self.list(node.orelse, env) if node.orelse is not None else env)
            out = ends[0]
            for end in ends[1:]:
                out = join(out, end)
            return out
        if isinstance(node, For):
            self.substitutions(node, env)
            self.at[id(node)] = env
            start = forget(env, assigned(node.body) | {node.name})
            self.list(node.body, start)
            return start
        if isinstance(node, While):
            self.substitutions(node, env)
            start = forget(env, assigned(node.test) | assigned(node.body))
            self.list(node.body, self.list(node.test, start))
            return start
        if isinstance(node, Case):
            self.substitutions(node, env)
            out = env
            for arm in node.arms:
                if arm.body is not None:
                    out = join(out, self.list(arm.body, out))  # a fall-through arm starts after another
            return out
        self.substitutions(node, env)  # (( )) and [[ ]] assign nothing the reader admits
        return env

    def assignments(self, node: Command, env: Env) -> Env:
        out = dict(env)
        for assignment in node.assignments:
            if not tracked(assignment.name):
                continue
            if assignment.elements is not None:  # each element is split and globbed like an argument
                elements: list[str] | None = []
                for word in assignment.elements:
                    made = self.words_of(word, out)
                    if made is None or elements is None:
                        elements = None
                        break
                    elements += made
                out[assignment.name] = UNKNOWN if elements is None else tuple(elements)
            else:
                value = self.value_of(assignment.value, out)
                out[assignment.name] = UNKNOWN if value is None else value
        return out


def known_values(body: List | None, commands, value_of, words_of) -> dict[int, Env]:
    """Every simple command and `for` loop (by id) mapped to the variables
    known where it runs; empty when the script assigns no tracked name (the
    common case: nothing to walk)."""
    if body is None or not any(not c.words and any(tracked(a.name) for a in c.assignments)
                               for c in commands):
        return {}
    walk_ = Values(value_of, words_of)
    walk_.list(body, _EMPTY)
    return walk_.at
