"""The tree walk: every command of the script, as bash would run it.

Lists, pipelines, subshells, groups and `if`/`case` branches are checked
command by command, with the descriptors each inherits; loops bind their
variables to what their words say and count how often their bodies run;
`[[ ]]` is judged word by word; each simple command's assignments,
redirections and argv go to the checks of their own (judge/assignments.py,
judge/redirects.py, judge/argv.py).
"""

from __future__ import annotations

import re
from collections.abc import Set

from ..read.model import (
    ArithFor,
    Case,
    Command,
    Cond,
    For,
    Group,
    If,
    List,
    Pipeline,
    Span,
    Subshell,
    While,
    Word,
    children,
)
from ..records import dataclass, replace
from . import argv, assignments, client_shell, descriptors, expand, loops, redirects, shapes, values
from .assignments import BareAssignment, LoopAssignsExported
from .codes import Code, Effect
from .context import Context
from .expansions import EXPANSION
from .options import FLAGS
from .policy import Policy
from .problems import Problem
from .rules import engine_rule
from .scope import check_scope

SYNTAX = engine_rule("syntax", """Text that does not parse, or constructs outside what the checker models.
    What the checker cannot read exactly, it cannot judge; nor substitutions
    nested deeper than the reader follows (BP103).""",
    codes=[Code.BP100, Code.BP101, Code.BP102, Code.BP103],
    deny=['rg "foo', "rg foo &", "f() { rg x; }", "while true; do ls; done"],
    allow=['rg "foo"', "(cd src && rg x)", "for f in a b; do wc -l \"$f\"; done"])
SCRIPT_INPUT = engine_rule("script_input", """Commands that may read standard input on a line with more lines after it.
    A harness that pipes the script into bash makes the rest of the script the
    command's input: it reads the later lines and bash never runs them (or runs
    what is left of them), so what runs is not what was checked.""",
    codes=[Code.BP108], deny=["head -c 3\nrg rm x", "rg foo\nls"],
    allow=["head -c 3 f\nls", "git status\ngit diff", "rg foo src\nls", "rg foo; ls",
           "head -c 3 < f\nls"])

@dataclass(frozen=True)
class Background(Problem):
    code = Code.BP102
    rule = SYNTAX
    message_format = "`&` runs the command before it in the background"
    hint_format = "drop the `&`; plan mode runs commands in the foreground only"


@dataclass(frozen=True)
class UncountedLoop(Problem):
    code = Code.BP101
    effect = Effect.HANG
    rule = SYNTAX
    message_format = "`for (( {init}; {test}; {update} ))`: {why}, so the checker cannot see it end"
    hint_format = "count with literal bounds: for ((i = 0; i < 3; i++)), or loop over words"
    init: str
    test: str
    update: str
    why: str


@dataclass(frozen=True)
class CounterAssigned(Problem):
    code = Code.BP101
    effect = Effect.HANG
    rule = SYNTAX
    message_format = "the loop's body assigns `{name}`, so its passes are not the ones counted"
    hint_format = "use another name in the body"
    name: str


@dataclass(frozen=True)
class EndlessLoop(Problem):
    code = Code.BP101
    effect = Effect.HANG
    rule = SYNTAX
    message_format = "`{test}` never ends the loop, and some way through its body does not reach `break`"
    hint_format = "end every path of the body with `break`, or loop over words with `for`"
    test: str


@dataclass(frozen=True)
class ReadReopened(Problem):
    code = Code.BP101
    effect = Effect.HANG
    rule = SYNTAX
    message_format = ("`{written}` is opened again on every pass of the loop, so `read` gets the same "
                      "first line each time and the loop never ends")
    hint_format = "redirect the whole loop: `while read -r line; do …; done < FILE`"
    written: str


@dataclass(frozen=True)
class ReadsScript(Problem):
    code = Code.BP108
    effect = Effect.EXEC
    rule = SCRIPT_INPUT
    message_format = ("`{command}` on line {line} may read standard input; a harness that pipes the "
                      "script into bash gives it the lines after it, which bash then never runs as checked")
    hint_format = ("write the whole script on one line (join the lines with `;` or `&&`), or give it its "
                   "input (`< FILE`); for a harness that runs commands with `bash -c`, set "
                   "stdin_script = false")
    command: str
    line: int


@dataclass(frozen=True)
class LoopOverArguments(Problem):
    code = Code.BP101
    rule = SYNTAX
    message_format = "`for NAME; do` loops over the script's arguments, which the checker cannot see"
    hint_format = "list the words: for f in a b c; do …; done"


@dataclass(frozen=True)
class LoopMayNotEnd(Problem):
    code = Code.BP101
    effect = Effect.HANG
    rule = SYNTAX
    message_format = "only `while read …` loops are checked: a loop with another test may never end"
    hint_format = "read lines: `while read -r line; do …; done < FILE`, or loop over words with `for`"


@dataclass(frozen=True)
class TestsVariableName(Problem):
    code = Code.BP400
    effect = Effect.EXEC
    rule = FLAGS
    message_format = "`[[ {operator} NAME ]]` evaluates the array subscript in NAME, which can run commands"
    hint_format = "test files and strings: -f, -d, -n, -z, =="
    operator: str


@dataclass(frozen=True)
class ArithmeticOperands(Problem):
    code = Code.BP202
    rule = EXPANSION
    message_format = ("`{operator}` inside `[[ ]]` evaluates its operands as arithmetic; a name or "
                      "expansion there is evaluated as an expression")
    hint_format = "compare literal numbers, or use `[ A -eq B ]`"
    operator: str


def lines_at_risk(body: List, source: str, policy: Policy) -> set[int]:
    """Indices of the top-level pipelines that have a later line after them: when
    the harness pipes the script into bash, their standard input is that line.
    bash runs an and-or list once it has read the line that ends it, so a
    pipeline is at risk when a line break (after `;`, `&`, a comment, or as
    the separator itself) comes between the end of its and-or list and the
    last pipeline."""
    if not policy.stdin_script or len(body.items) < 2:
        return set()
    last = body.items[-1].span.start
    at_risk: set[int] = set()
    pending: list[int] = []
    for k, item in enumerate(body.items[:-1]):
        pending.append(k)
        if body.ops[k] in ("&&", "||"):
            continue  # the and-or list goes on: bash reads it whole before running it
        if "\n" in source[item.span.end:last]:
            at_risk.update(pending)
        pending = []
    return at_risk

def check_node(node, ctx: Context, index: dict[int, int], at_risk: Set[int] = frozenset(),
                fds: descriptors.Table | None = None, piped_stderr: bool = False) -> None:
    """Check every command in the tree, as bash would run it.

    Lists, pipelines, subshells, groups and `if`/`case` branches are checked
    command by command; a `for` loop's variable holds what its words say (a
    literal set, file names under a fixed prefix, or anything); `while` loops
    only read lines (`while read -r l; do …; done < f`), since a loop with any
    other test may never end.  Commands inside substitutions run too, so they
    are checked like any other.  `fds`: the descriptors the node inherits
    (judge/descriptors.py); `piped_stderr`: `|&` after it adds `2>&1` after
    its own redirections."""
    fds = descriptors.start() if fds is None else fds
    if isinstance(node, List):
        for item, op in zip(node.items, node.ops):
            if op == "&":
                ctx.segment = None
                ctx.deny(Background(), item.span)
        for k, item in enumerate(node.items):
            check_node(item, ctx, index, fds=descriptors.with_script(fds) if k in at_risk else fds)
        return
    if isinstance(node, Pipeline):
        last = len(node.commands) - 1
        for k, member in enumerate(node.commands):
            inherited = dict(fds)
            if k:
                inherited[0] = descriptors.Origin(descriptors.PIPE_IN, joint=(id(node), k - 1),
                                                  writer=node.commands[k - 1], reader=member)
            if k < last:
                inherited[1] = descriptors.Origin(descriptors.PIPE_OUT, joint=(id(node), k))
            check_node(member, ctx, index, fds=inherited,
                        piped_stderr=k < last and k < len(node.stderr) and node.stderr[k])
        return
    if isinstance(node, Command):
        # Bash expands a simple command's words, and runs their substitutions,
        # before it applies the command's redirections.
        _check_substitutions(node, ctx, index, fds)
        ctx.segment = index[id(node)]
        ctx.command = ctx.at = node
        own = redirects.redirected(node, fds, ctx)
        if piped_stderr and 1 in own:
            own = {**own, 2: own[1]}
        ctx.tables[id(node)] = own
        redirects.check_input(own, fds, node, ctx)
        _check_command(node, ctx, own)
        return
    _check_substitutions(node, ctx, index, fds)
    ctx.segment = None
    ctx.command = None
    ctx.at = node
    inherited, fds = fds, redirects.redirected(node, fds, ctx)
    if piped_stderr and 1 in fds:
        fds = {**fds, 2: fds[1]}
    redirects.check_input(fds, inherited, node, ctx)
    if isinstance(node, (Subshell, Group)):
        check_node(node.body, ctx, index, fds=fds)
    elif isinstance(node, If):
        for test, body in node.branches:
            check_node(test, ctx, index, fds=fds)
            check_node(body, ctx, index, fds=fds)
        if node.orelse is not None:
            check_node(node.orelse, ctx, index, fds=fds)
    elif isinstance(node, For):
        if node.words is not None:
            env = ctx.known.get(id(node), {})
            node = replace(node, words=_expanded(node.words, ctx, program=False, env=env))
        _check_loop_words(node, ctx)
        shape = shapes.loop_variable(node.words or ())
        if node.name in values.assigned(node.body):  # `read f` or `f=…` in the body: any value
            shape = shapes.UNKNOWN
        literal = node.words is not None and all(w.value is not None for w in node.words)
        with _binding(ctx, (node.name,), shape, node.span, len(node.words or ()) if literal else None):
            check_node(node.body, ctx, index, fds=fds)
    elif isinstance(node, ArithFor):
        counted = loops.counting_passes(node)
        if isinstance(counted, str):
            ctx.deny(UncountedLoop(node.init, node.test, node.update, counted), node.span)
            counted = ("", [])
        name, passes = counted
        if name and name in values.assigned(node.body):
            ctx.deny(CounterAssigned(name), node.span)
        counts = tuple(Word(str(v), node.span, str(v)) for v in passes)
        with _binding(ctx, (name,) if name else (), shapes.loop_variable(counts), node.span,
                      len(passes)):
            check_node(node.body, ctx, index, fds=fds)
    elif isinstance(node, While):
        endless = loops.endless_test(node.test, node.until)
        if endless and not loops.always_breaks(node.body):
            ctx.deny(EndlessLoop(ctx.source[node.test.span.start:node.test.span.end]), node.body.span)
        names = () if endless else _read_loop(node, ctx)
        outer, ctx.loop = ctx.loop, node
        try:  # the test runs each time too; an endless loop's body once
            with _binding(ctx, names, shapes.UNKNOWN, node.span, 1 if endless else None):
                check_node(node.test, ctx, index, fds=fds)
                check_node(node.body, ctx, index, fds=fds)
        finally:
            ctx.loop = outer
        if names:
            _check_read_input(node, ctx)
    elif isinstance(node, Case):
        for arm in node.arms:
            if arm.body is not None:
                check_node(arm.body, ctx, index, fds=fds)
    elif isinstance(node, Cond):
        _check_cond(node, ctx)
    # Arith: the reader admits only numbers and operators, which change nothing.


def _check_substitutions(node, ctx: Context, index: dict[int, int], fds: descriptors.Table) -> None:
    """The commands inside a node's own words (not its bodies): bash runs them
    first, with their output captured."""
    captured = None
    for child in children(node):
        if isinstance(child, List) and not _is_body(node, child):
            captured = captured or {**fds, 1: descriptors.Origin(descriptors.CAPTURED)}
            check_node(child, ctx, index, fds=captured)


def _check_read_input(node: While, ctx: Context) -> None:
    """`while read …` ends only when `read` reaches the end of input it
    consumes: one opened once, on the loop or around it, or a pipe into it.
    A redirection on `read` itself, or anywhere else inside the loop, is
    opened again on every pass, so `read` gets its first line for ever
    (`while read -r l < f`, a here-string or here-document on `read`)."""
    command = node.test.items[0].commands[0]
    origin = ctx.tables.get(id(command), {}).get(0)
    if descriptors.reopened_each_pass(origin, node):
        redirect = origin.redirect if origin is not None else None
        span = redirect.span if redirect is not None else command.span
        ctx.segment = None
        ctx.deny(ReadReopened(ctx.source[span.start:span.end]), span)


def _is_body(node, child) -> bool:
    """Whether `child` is one of a compound command's own command lists (checked
    in order below) rather than a substitution inside one of its words."""
    if isinstance(node, (Subshell, Group)):
        return child is node.body
    if isinstance(node, If):
        return any(child is t or child is b for t, b in node.branches) or child is node.orelse
    if isinstance(node, (For, ArithFor)):
        return child is node.body
    if isinstance(node, While):
        return child is node.test or child is node.body
    if isinstance(node, Case):
        return any(child is arm.body for arm in node.arms)
    return False


def _check_command(node: Command, ctx: Context, fds: descriptors.Table) -> None:
    ctx.fds = fds
    ctx.reads_stdin = ctx.names_stdin = False
    ctx.variables["PWD"] = shapes.working_directory(ctx.working_directories())
    try:
        check_segment(node, ctx)
    finally:
        del ctx.variables["PWD"]
    origin = fds.get(0)
    if origin is not None and origin.is_script and client_shell.stdin_endless(ctx):
        client_shell.stdin_denied(node, ctx)  # the client's own stdin: its socket, a terminal
    elif origin is not None and origin.is_script and ctx.reads_stdin and node.words:
        line = ctx.source.count("\n", 0, node.span.start) + 1
        ctx.deny(ReadsScript(ctx.source[node.span.start:node.span.end], line), node.words[0].span)


class _binding:
    """Give loop variables their shape inside the body, count how often the body
    runs (`runs`, None: unknown), and deny names that are not shell-local
    (shapes.local_name)."""

    def __init__(self, ctx: Context, names, shape, span: Span, runs: int | None):
        self.ctx, self.names, self.shape, self.runs = ctx, tuple(names), shape, runs
        for name in self.names:
            if not shapes.local_name(name):
                ctx.deny(LoopAssignsExported(name), span)

    def __enter__(self):
        self.saved_repeats = self.ctx.repeats
        if self.ctx.repeats is not None:
            self.ctx.repeats = None if self.runs is None else self.ctx.repeats * self.runs
        self.saved = {n: self.ctx.variables.get(n) for n in self.names}
        for name in self.names:
            self.ctx.variables[name] = self.shape

    def __exit__(self, *exc):
        self.ctx.repeats = self.saved_repeats
        for name, shape in self.saved.items():
            if shape is None:
                self.ctx.variables.pop(name, None)
            else:
                self.ctx.variables[name] = shape


def _check_loop_words(node: For, ctx: Context) -> None:
    """A `for` loop's words: globs, variables and substitutions are fine (their
    values become the variable's, judged where it is used); brace expansion and
    `$'…'` stay denied."""
    if node.words is None:
        ctx.deny(LoopOverArguments(), node.span)
        return
    for word in node.words:
        if word.value is None and not shapes.unknown_kinds_allowed(word):
            ctx.deny_word(word, "in the loop's words")


def _read_loop(node: While, ctx: Context) -> tuple[str, ...]:
    """The variables of `while read NAME…; do`; any other loop may never end."""
    items = node.test.items
    command = items[0].commands[0] if len(items) == 1 and len(items[0].commands) == 1 else None
    if node.until or not isinstance(command, Command) or not command.words \
            or command.words[0].value != "read" or items[0].negated:
        ctx.deny(LoopMayNotEnd(), node.test.span)
        return ()
    # Every identifier-like word, option values included: binding one too many is harmless.
    return tuple(w.value for w in command.words[1:]
                 if w.value and w.value.isascii() and w.value.isidentifier())


_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _check_cond(node: Cond, ctx: Context) -> None:
    """`[[ … ]]`: `-v`/`-R` evaluate the subscript of the name they test, and the
    arithmetic tests evaluate their operands as expressions (a name is looked
    up and its value evaluated), so their operands must be literal numbers."""
    words = node.words
    for k, word in enumerate(words):
        if word.value in ("-v", "-R"):
            ctx.deny(TestsVariableName(word.value), word.span)
        elif word.value in _ARITHMETIC_TESTS:
            for operand in (words[k - 1] if k else None, words[k + 1] if k + 1 < len(words) else None):
                if operand is None or not (operand.value and _SIGNED_NUMBER.fullmatch(operand.value)):
                    ctx.deny(ArithmeticOperands(word.value), (operand or word).span)
                    break
        elif word.value is None and not shapes.unknown_kinds_allowed(word):
            ctx.deny_word(word, "inside [[ ]]")


_SIGNED_NUMBER = re.compile(r"[-+]?[0-9]+")


def check_segment(segment: Command, ctx: Context) -> None:
    env = ctx.known.get(id(segment), {})
    segment = replace(segment, words=_expanded(segment.words, ctx, env=env))
    ctx.assignments = {a.name: a.value.value for a in segment.assignments}
    bare = not segment.words
    for assignment in segment.assignments:
        if bare and values.tracked(assignment.name):
            assignments.check_local_assignment(assignment, ctx)
        else:
            assignments.check_assignment(assignment, ctx)
    if ctx.policy.scope_roots:
        check_scope(segment, ctx)
    if not segment.words:
        if any(not values.tracked(a.name) for a in segment.assignments):
            ctx.deny(BareAssignment(), segment.span)
        return
    if client_shell.check_names(segment, ctx):
        return  # a function or alias of the client's shell runs instead, and was checked
    argv.check_argv(segment.words, ctx)


def _expanded(words: tuple[Word, ...], ctx: Context, program: bool = True,
              env: values.Env | None = None) -> tuple[Word, ...]:
    """The words bash makes of written words by brace expansion, then of the
    parameters the script set (judge/expand.py).  A program name is left as
    written (denied when it expands: BP302), and so is every word of
    `command …`, whose operand may name the cd builtin that judge/flow.py
    must see written."""
    out: list[Word] = []
    substitute = bool(env) and not (program and words and words[0].value in ("command", "builtin"))
    for k, word in enumerate(words):
        if k == 0 and program:
            out.append(word)
            continue
        made, refused = expand.brace_words(word)
        if refused is not None:
            ctx.unexpanded[id(word)] = refused
        declaration = program and words[0].value == "export" and _ASSIGNMENT_WORD.match(word.text)
        if substitute and made == (word,):
            known: tuple[Word, ...] | None
            if declaration:
                value = expand.value(word, ctx.source, env or {})  # expanded as an assignment
                known = None if value is None else (Word(word.text, word.span, value),)
            else:
                known = expand.substituted(word, ctx.source, env or {})
            if known is not None:
                made = known
        if declaration and made == (word,) and word.value is None:
            made = (shapes.quoted(word),)  # `export A=$x` is neither split nor globbed
        out += made
    return tuple(out)

_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
