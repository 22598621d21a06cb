"""The generic engine: a command and a `Policy` in, a `Verdict` out.

It holds no program names.  What a program may do is in its spec; what
needs real logic is a program rule named by the spec (bash_policy/judge/rules/).
Every check is a rule with a name, a doc and examples, declared beside it,
so each denial says which rule produced it.  The checks live along the
seams of a check: this module screens the input, reads it and combines the
verdict with its fixes; judge/walk.py walks the tree, judge/assignments.py
and judge/redirects.py judge a command's assignments and redirections,
judge/argv.py its program, judge/options.py reads its argv as the spec's
option grammar does and judge/operands.py judges what was read;
judge/expansions.py denies words computed at run time, judge/readings.py
compares the readers; judge/context.py holds the state they share.
"""

from __future__ import annotations

import os
import re
import unicodedata

from ..read import exact, parse_cache
from ..read.model import Span
from ..records import dataclass, replace
from ..repo.files import forget_walks, remember_walks
from . import client_shell, expand, fixes, values
from .assignments import ASSIGNMENT
from .codes import Code
from .context import Context
from .expansions import EXPANSION
from .flow import command_directories
from .policy import Policy
from .problems import Problem
from .readings import cross_check
from .redirects import REDIRECTION
from .rules import engine_rule
from .verdict import Denial, Fix, Verdict
from .walk import SYNTAX, check_node, lines_at_risk

INTERNAL = engine_rule("internal_error", """Any input on which the checker itself fails.
    A checker that raises lets a harness treat the command as unchecked; every
    internal error is a denial instead (fail closed).""",
    codes=[Code.BP107], deny=[], allow=["ls"],
    untestable="no input should reach it; tests/test_hostile.py forces an internal error")
SCREEN = engine_rule("input_screen", """Over-long commands and invisible, control or bidirectional characters.
    They make a command look different to a person, the checker and bash, or
    make the checker slow.""",
    codes=[Code.BP103, Code.BP104], deny=["rg foo\r"], allow=["rg foo"])
LIMITS = engine_rule("segment_limit", """More simple commands in one line than the policy's limit.
    An unbounded number of commands would make the check slow; past the limit
    it is denied, never skipped.""",
    codes=[Code.BP103], deny=["true" + ";true" * 200], allow=["true;true"])



@dataclass(frozen=True)
class InternalError(Problem):
    code = Code.BP107
    rule = INTERNAL
    hint_format = "rewrite the command more simply; please report this input as a bug"
    error: Exception

    def message(self) -> str:
        return (f"the checker failed on this command ({type(self.error).__name__}: {self.error}); it is "
                "denied because it could not be checked")


@dataclass(frozen=True)
class TooLong(Problem):
    code = Code.BP103
    rule = SCREEN
    message_format = "the command is {length} characters long; the limit is {limit}"
    hint_format = "split the work into smaller commands"
    length: int
    limit: int


@dataclass(frozen=True)
class BadCharacter(Problem):
    code = Code.BP104
    rule = SCREEN
    message_format = "the command contains {what}"
    hint_format = "retype the command with plain characters"
    what: str  # "a NUL byte", "the control character U+001B", ...


@dataclass(frozen=True)
class TooManyCommands(Problem):
    code = Code.BP103
    rule = LIMITS
    message_format = "{count} commands in one line exceed the limit of {limit}"
    hint_format = "split the work into several commands"
    count: int
    limit: int


@dataclass(frozen=True)
class Unread(Problem, abstract=True):
    """What the exact reader found it cannot read as bash does (read/exact.py),
    in the reader's words: one kind for each code it gives."""

    rule = SYNTAX
    text: str
    advice: str

    def message(self) -> str:
        return self.text

    def hint(self) -> str:
        return self.advice or "rewrite it as simple commands"


@dataclass(frozen=True)
class Unparsed(Unread):
    code = Code.BP100


@dataclass(frozen=True)
class Unmodelled(Unread):
    code = Code.BP101


@dataclass(frozen=True)
class NestedTooDeep(Unread):
    code = Code.BP103


@dataclass(frozen=True)
class HeredocBodyExpands(Unread):
    code = Code.BP105
    rule = REDIRECTION


@dataclass(frozen=True)
class BackquotedCommand(Unread):
    code = Code.BP200
    rule = EXPANSION


@dataclass(frozen=True)
class UnreadParameter(Unread):
    code = Code.BP201
    rule = EXPANSION


@dataclass(frozen=True)
class UnreadArithmetic(Unread):
    code = Code.BP202
    rule = EXPANSION


@dataclass(frozen=True)
class UnreadQuoting(Unread):
    code = Code.BP206
    rule = EXPANSION


@dataclass(frozen=True)
class UnreadAssignment(Unread):
    code = Code.BP600
    rule = ASSIGNMENT


# The kind of each code the reader gives; a code it gives that is not here is
# an internal error, so a new one cannot pass unnoticed.
_UNREAD: dict[Code, type[Unread]] = {kind.code: kind for kind in (
    Unparsed, Unmodelled, NestedTooDeep, HeredocBodyExpands, BackquotedCommand,
    UnreadParameter, UnreadArithmetic, UnreadQuoting, UnreadAssignment)}

_BIDI = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
         "\u200e", "\u200f", "\u061c"}

def check(command: str, policy: Policy | None = None, *, cwd: str | None = None) -> Verdict:
    """Decide whether `command` may run in plan mode.  Never raises: any
    internal error is a denial (BP107), because a harness may read an
    exception as "go ahead".  A denied verdict carries a `fix` when every
    denial has one and the rewritten command is itself allowed."""
    walks = remember_walks()
    try:
        return _check(command, policy or Policy.default(), cwd)
    except Exception as error:  # fail closed, whatever went wrong
        text = command if isinstance(command, str) else ""
        problem = InternalError(error)
        denial = Denial(problem.code, problem.message(), problem.hint(), Span(0, len(text)), None, None,
                        INTERNAL, kind=problem.kind)
        return Verdict(text, False, (denial,), ())
    finally:
        forget_walks(walks)


def _check(command: str, policy: Policy, cwd: str | None, fix: bool = True) -> Verdict:
    """The check; `fix` false for checking a rewrite, which needs no fixes of its own."""
    if not isinstance(command, str):
        raise TypeError("command must be str")
    if cwd is not None and (not isinstance(cwd, str) or "\0" in cwd):
        raise ValueError("the working directory is not a path")  # no command can run there
    ctx = Context(policy, command, cwd, SYNTAX)
    if _screen(command, ctx):
        return Verdict(command, False, tuple(ctx.denials), ())
    script = parse_cache.read(exact.parse, command)
    commands = script.commands
    for code, span, message, hint in script.problems:
        ctx.deny(_UNREAD[Code(code)](message, hint), span)
    if len(commands) > policy.max_segments:
        ctx.deny(TooManyCommands(len(commands), policy.max_segments), Span(0, len(command)))
        return Verdict(command, False, tuple(ctx.denials), commands, (), script)
    if script.body is None and not script.problems:
        ctx.notes.append("empty command")
    if client_shell.check_script(script, ctx):
        return Verdict(command, False, tuple(ctx.denials), commands, (), script)
    cdpath = policy.cdpath if policy.cdpath is not None else os.environ.get("CDPATH", "")
    ctx.places = command_directories(script.body, cwd, commands, cdpath=cdpath)
    ctx.body = script.body
    ctx.known = values.known_values(
        script.body, commands, lambda word, env: expand.value(word, command, env, assignment=True),
        lambda word, env: expand.words(word, command, env))
    index = {id(c): k for k, c in enumerate(commands)}
    if script.body is not None:
        at_risk = lines_at_risk(script.body, command, policy)
        if client_shell.stdin_endless(ctx):  # every command reads the client's input unless redirected
            at_risk = set(range(len(script.body.items)))
        check_node(script.body, ctx, index, at_risk)
    if not ctx.denials:  # only an allow needs the other readings
        cross_check(script, ctx)
    denials, combined = tuple(ctx.denials), None
    if fix and any(d.fix is not None for d in denials):
        denials, combined = _with_fixes(command, ctx.denials, policy, cwd)
    return Verdict(command, not denials, denials, commands, tuple(ctx.notes), script, combined)


def _with_fixes(command: str, denials: list[Denial], policy: Policy,
                cwd: str | None) -> tuple[tuple[Denial, ...], Fix | None]:
    """The denials with only the fixes that are checked to resolve them, and
    their fixes together when the result passes.  A rewrite is checked in
    full, the other readings included (a line continuation that bash reads
    one way can read another once `--` stands before it), so a denial with a
    fix loads the second readers that other denials never need.  A fault
    here loses the fixes, never a denial."""
    try:
        def recheck(rewritten: str) -> Verdict:
            return _check(rewritten, policy, cwd, fix=False)

        if len(denials) == 1:  # its fix is the verdict's: one check tells both
            combined = fixes.combine(command, denials, lambda rewritten: recheck(rewritten).allowed)
            return (tuple(denials) if combined else (replace(denials[0], fix=None),)), combined
        checked = fixes.verified(command, denials, recheck)
        return checked, fixes.combine(command, checked, lambda rewritten: recheck(rewritten).allowed)
    except Exception:
        return tuple(replace(d, fix=None) for d in denials), None


_PLAIN_TEXT = re.compile(r"[\t\n -~]*")  # what the loop below lets pass without a look-up


def _screen(command: str, ctx: Context) -> bool:
    """Deny input that no parser should see: too long, NUL, control, bidi."""
    if len(command) > ctx.policy.max_length:
        ctx.deny(TooLong(len(command), ctx.policy.max_length), Span(0, len(command)))
        return True
    if _PLAIN_TEXT.fullmatch(command):
        return False
    for index, ch in enumerate(command):
        if ch in "\n\t" or " " <= ch < "\x7f":
            continue
        if ch == "\x00":
            what = "a NUL byte"
        elif "\ud800" <= ch <= "\udfff":
            what = "invalid UTF-8"
        elif ch < " " or ch == "\x7f" or "\x80" <= ch < "\xa0":
            what = f"the control character U+{ord(ch):04X}"
        elif ch in _BIDI:
            what = f"the bidirectional control U+{ord(ch):04X}"
        elif unicodedata.category(ch) in ("Cf", "Co", "Cn", "Zl", "Zp"):
            what = f"the invisible or unassigned character U+{ord(ch):04X}"
        else:
            continue
        ctx.deny(BadCharacter(what), Span(index, index + 1))
        return True
    return False
