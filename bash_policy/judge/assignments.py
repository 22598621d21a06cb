"""Assignments: per-command ones outside the harmless list, and bare ones.

A per-command `NAME=VALUE` reaches the program it runs (PAGER, GIT_*,
LD_PRELOAD change what an allowed program does), so only the policy's
harmless variables may be set, to harmless values (docs/config.md); a bare
assignment to a shell-local name sets a variable only the script expands,
which the checker follows (judge/values.py).
"""

from __future__ import annotations

import re

from ..read.model import (
    ARITHMETIC,
    BRACE,
    COMMAND_SUB,
    GLOB,
    PARAMETER,
    PROCESS_SUB,
    TILDE,
    Assignment,
)
from ..records import dataclass
from .codes import Code
from .problems import Problem
from .rules import engine_rule

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .context import Context

ASSIGNMENT = engine_rule("assignment", """Assignments outside the harmless list, and assignments without a command.
    Variables change what an allowed program does (PAGER, GIT_*, LD_PRELOAD),
    and a bare assignment changes the shell for every later command.""",
    codes=[Code.BP600, Code.BP303], deny=["PAGER=sh git log", "X=1"], allow=["LC_ALL=C rg x"])

_ASSIGNED_KINDS = frozenset({PARAMETER, ARITHMETIC, GLOB, BRACE, TILDE})


@dataclass(frozen=True)
class VariableNotHarmless(Problem):
    code = Code.BP600
    rule = ASSIGNMENT
    message_format = "`{name}=` changes what the program runs or reads; only harmless variables may be set"
    hint_format = "drop `{name}=…`; harmless ones such as LC_ALL, TZ or NO_COLOR are allowed (docs/config.md)"
    name: str


@dataclass(frozen=True)
class ValueNotPlainName(Problem):
    code = Code.BP600
    rule = ASSIGNMENT
    message_format = ("`{name}={value}` is not a plain name for it (a path makes the program load files "
                      "from there)")
    hint_format = "name an installed one (LC_ALL=C, TZ=UTC) or drop it"
    name: str
    value: str


@dataclass(frozen=True)
class ValueNotAllowed(Problem):
    code = Code.BP600
    rule = ASSIGNMENT
    name: str
    allowed: tuple[str, ...]

    def message(self) -> str:
        return f"`{self.name}` may only be set to {', '.join(self.allowed)}"

    def hint(self) -> str:
        return f"write {self.name}={self.allowed[0]} or drop it"


@dataclass(frozen=True)
class LoopAssignsExported(Problem):
    code = Code.BP600
    rule = ASSIGNMENT
    message_format = ("the loop assigns `{name}`, which may be a variable the harness exported: every "
                      "program after it would run with the loop's value")
    hint_format = "name the loop variable in lower case, e.g. `for f in …`"
    name: str


@dataclass(frozen=True)
class BareAssignment(Problem):
    code = Code.BP303
    rule = ASSIGNMENT
    message_format = "an assignment without a command changes the shell for every later command"
    hint_format = "drop the assignment"


def check_local_assignment(assignment: Assignment, ctx: Context) -> None:
    """`name=VALUE` or `name=(WORDS)` without a command, for a shell-local
    name: it sets a variable that only this script's later commands expand,
    and the checker follows its value where it can (judge/values.py).  The
    value's substitutions are commands checked like any other; `$'…'` and the
    like stay denied."""
    for word in assignment.elements if assignment.elements is not None else (assignment.value,):
        if word.value is None and not all(
                e.kind in _ASSIGNED_KINDS or (e.kind in (COMMAND_SUB, PROCESS_SUB) and e.body is not None)
                for e in word.expansions):
            ctx.deny_word(word, f"in the value of {assignment.name}")


def check_assignment(assignment: Assignment, ctx: Context) -> None:
    allowed = ctx.policy.env.get(assignment.name)
    value = assignment.value
    if allowed is None:
        ctx.deny(VariableNotHarmless(assignment.name), assignment.span)
        return
    if value.value is None:
        ctx.deny_word(value, f"in the value of {assignment.name}")
        return
    if isinstance(allowed, re.Pattern):
        if not allowed.fullmatch(value.value):
            ctx.deny(ValueNotPlainName(assignment.name, value.value), assignment.span)
    elif allowed != "*" and value.value not in allowed:
        ctx.deny(ValueNotAllowed(assignment.name, tuple(allowed)), assignment.span)
