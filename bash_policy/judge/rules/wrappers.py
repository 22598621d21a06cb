"""Hooks for wrappers whose operands mix settings with an inner command.

The inner command is checked by the engine itself (`check_argv`), so every
rule for that program applies as if it had been typed alone.
"""

from __future__ import annotations

from ...read.model import Assignment, Command, Word
from ...records import dataclass
from ..codes import Code, Effect
from ..context import Appended
from ..descriptors import PIPE_IN, PIPE_OUT
from ..problems import Problem
from . import rule


@dataclass(frozen=True)
class EmptiesEnvironment(Problem):
    code = Code.BP400
    effect = Effect.STATE
    message_format = ("`env -` empties the environment, dropping settings that keep programs "
                      "non-interactive (such as PAGER=cat)")
    hint_format = "drop `-`; set only harmless variables, e.g. `env LC_ALL=C rg foo`"


@dataclass(frozen=True)
class InnerProgramNotLiteral(Problem):
    code = Code.BP302
    message_format = "the program {after} is not literal"
    hint_format = "name the program literally"
    after: str  # "name after `command`", "after `xargs`"


@rule("env_command", codes=[Code.BP400],
      deny=["env - rg x"],
      allow=["env LC_ALL=C rg x", "env"])
def env_command(inv, ctx) -> None:
    """`env` settings outside the harmless list, `env -`, and inner commands that are denied.
    `env [-] [NAME=VALUE]... [COMMAND [ARG]...]`: each assignment passes the same
    allowlist as a shell assignment; the command is checked like any other."""
    for word in inv.positionals:
        value = word.value
        if value == "-":
            ctx.deny(EmptiesEnvironment(), word.span)
            return
        if value is not None and "=" in value:
            name, _, assigned = value.partition("=")
            ctx.check_assignment(Assignment(name, Word(assigned, word.span, assigned), word.span))
            continue
        ctx.check_inner(inv.words[inv.words.index(word):])
        return


@rule("command_builtin", codes=[Code.BP302],
      deny=["command src*"], allow=["command -v rg", "command rg x"])
def command_builtin(inv, ctx) -> None:
    """`command PROG ARGS` whose inner command is denied.
    `command -v/-V NAME...` only describes names; otherwise PROG runs and is
    checked like any other command."""
    describes = inv.has("-v", "-V")
    if describes or not inv.positionals:
        return
    first = inv.positionals[0]
    if first.value is None:
        ctx.deny(InnerProgramNotLiteral("name after `command`"), first.span)
        return
    ctx.check_inner(inv.words[inv.words.index(first):])


# find actions that print something other than each path: a file's own name,
# a format, a listing, or output elsewhere.
_OTHER_OUTPUT = frozenset({"-print", "-printf", "-ls", "-fprint", "-fprint0", "-fprintf", "-fls",
                           "-exec", "-execdir", "-ok", "-okdir"})


def _prints_paths_nul(command: Command | None) -> bool:
    """Whether `command` is `find … -print0` and prints nothing else: every path
    it prints starts with a starting point, and a starting point never starts
    with `-` (find reads such a word as part of the expression), or is `./…`
    — unless -files0-from reads the starting points from a file."""
    if command is None or not command.words or command.words[0].value != "find":
        return False
    values = [w.value for w in command.words[1:]]
    return (None not in values and "-print0" in values and "-files0-from" not in values
            and not _OTHER_OUTPUT.intersection(values))


def _input_is_find_paths(ctx) -> bool:
    """Whether xargs's standard input is, after every redirection, the pipe
    from a `find … -print0` right before it, and only find's standard output
    goes into that pipe.  A redirection on xargs (`< list`, `<<< -ofile`,
    `0<&3`), a group around it, or find's output sent elsewhere feeds xargs
    other words, which may start with `-` (issue 18, class 2)."""
    origin = ctx.fds.get(0)
    if origin is None or origin.kind != PIPE_IN or origin.reader is not ctx.command:
        return False
    writer = origin.writer
    if not isinstance(writer, Command) or not _prints_paths_nul(writer):
        return False
    out = ctx.tables.get(id(writer), {})
    into = [fd for fd, o in out.items() if o.kind == PIPE_OUT and o.joint == origin.joint]
    return into == [1]


@rule("xargs_command", codes=[Code.BP302],
      deny=["xargs src*"],
      allow=["find . -name '*.py' -print0 | xargs -0 rg -n foo", "ls | xargs wc -l",
             "ls | xargs rg foo --", "ls | xargs"],
      reads=("-0", "-a", "-d"))
def xargs_command(inv, ctx) -> None:
    """`xargs PROGRAM`, whose program gets operands from standard input that could be flags.
    The appended operands are any words of the input, so the program must take
    them after `--` or have only harmless flags — unless the input is the
    NUL-separated paths of `find DIR -print0` read with `xargs -0`, which never
    start with `-`.  Without a program, xargs runs echo."""
    if not inv.positionals:
        return
    first = inv.positionals[0]
    if first.value is None:
        ctx.deny(InnerProgramNotLiteral("after `xargs`"), first.span)
        return
    safe = (inv.has("-0") and not inv.uses("-a") and not inv.uses("-d")
            and _input_is_find_paths(ctx))
    start = next(k for k, w in enumerate(inv.words) if w is first)
    ctx.check_inner(inv.words[start:], Appended(inv.spec.display, safe))
