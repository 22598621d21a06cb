"""Readings that must agree: the exact reader, tree-sitter, and bashlex when installed.

The exact reader (bash_policy/read/exact.py) decides what a command means.
Before a command is allowed, tree-sitter must read the same tree: the same
lists and operators, pipelines, `!` and `time`, compound commands, and for
every simple command the same assignments, words (span and value) and
redirections (operator, descriptor, target, here-document lines); the
commands inside substitutions likewise.  Tree-sitter computes word values
with its own scanner (bash_policy/read/words.py), so the values are compared
between two independent implementations.  Any difference denies (BP106).

bashlex, a port of bash's yacc grammar (the optional `[crosscheck]` extra),
is a third reading where it can read the command: a difference denies too;
a command it cannot read (compound commands, `time`) gets a note.  This
module compares; bash_policy/judge/readings.py decides which readings are
taken and denies.
"""

from __future__ import annotations

from ..records import dataclass
from .model import (
    Arith,
    ArithFor,
    Case,
    Command,
    Cond,
    For,
    Group,
    If,
    List,
    Pipeline,
    Redirect,
    Script,
    Span,
    Subshell,
    While,
    Word,
)


@dataclass(frozen=True)
class Difference:
    """The first place two readings differ, described for a person."""

    span: Span
    what: str
    exact: str
    other: str
    reader: str

    @property
    def message(self) -> str:
        return (f"the readers disagree on {self.what}: bash's grammar (the exact reader) reads "
                f"{self.exact}, {self.reader} reads {self.other}")


def heredoc_lines(body: str | None, strip_tabs: bool) -> tuple[str, ...] | None:
    """A here-document body as its complete lines (tabs stripped for `<<-`).

    The parsers cut the body at different points of the terminator line and of
    `<<-` tabs; bash reads whole lines, so whole lines are compared.
    """
    if body is None:
        return None
    lines = body.split("\n")[:-1]
    return tuple(line.lstrip("\t") for line in lines) if strip_tabs else tuple(lines)


def _word(word: Word) -> str:
    return repr(word.value) if word.literal else f"`{word.text}` (not literal)"


def _redirect(r: Redirect) -> str:
    fd = "" if r.fd is None else str(r.fd)
    target = _word(r.target) if r.target is not None else ""
    if r.op in ("<<", "<<-"):
        lines = heredoc_lines(r.body, r.op == "<<-")
        target = f"here-document{' (quoted)' if r.quoted else ''} {list(lines or ())!r}"
    return f"{fd}{r.op} {target}".rstrip()


class _Mismatch(Exception):
    def __init__(self, span: Span, what: str, mine: str, theirs: str):
        super().__init__(what)
        self.args4 = (span, what, mine, theirs)


def _same(span: Span, what: str, mine, theirs) -> None:
    if mine != theirs:
        raise _Mismatch(span, what, str(mine), str(theirs))


def _ops(node: List) -> tuple[str, ...]:
    """Operators with a final `;` or newline dropped (it ends the list either way)."""
    ops = node.ops
    if len(ops) == len(node.items) and ops and ops[-1] in (";", "\n"):
        ops = ops[:-1]
    return ops


def _compare_lists(a: List | None, b: List | None, span: Span, bodies: bool) -> None:
    _same(span, "whether there is a command", a is not None, b is not None)
    if a is None or b is None:
        return
    _same(a.span, "the number of pipelines", len(a.items), len(b.items))
    _same(a.span, "the operators between pipelines", _ops(a), _ops(b))
    for x, y in zip(a.items, b.items):
        _compare_pipelines(x, y, bodies)


def _compare_pipelines(a: Pipeline, b: Pipeline, bodies: bool) -> None:
    _same(a.span, "the number of commands in a pipeline", len(a.commands), len(b.commands))
    _same(a.span, "the `!` of a pipeline", a.negated, b.negated)
    _same(a.span, "whether `time` applies", a.timed, b.timed)
    _same(a.span, "which pipes also carry standard error", a.stderr, b.stderr)
    for x, y in zip(a.commands, b.commands):
        _compare_nodes(x, y, bodies)


def _compare_words(what: str, a, b, span: Span, bodies: bool) -> None:
    """`bodies`: also compare the commands inside substitutions (bashlex does not read them)."""
    _same(span, f"the number of {what}", len(a), len(b))
    for x, y in zip(a, b):
        # Equal spans and equal `_word` descriptions, tested without building them.
        if x.span != y.span:
            _same(x.span, f"where a word of {what} lies", (x.span.start, x.span.end),
                  (y.span.start, y.span.end))
        if x.value != y.value or (x.value is None and x.text != y.text):
            _same(x.span, f"the value of `{x.text}`", _word(x), _word(y))
        if not bodies:
            continue
        xs = [e.body for e in x.expansions if e.body is not None]
        ys = [e.body for e in y.expansions if e.body is not None]
        _same(x.span, f"the substitutions in `{x.text}`", len(xs), len(ys))
        for p, q in zip(xs, ys):
            _compare_lists(p, q, x.span, bodies)


def _compare_redirects(a, b, span: Span, bodies: bool) -> None:
    _same(span, "the number of redirections", len(a), len(b))
    for x, y in zip(a, b):
        _same(x.span, "a redirection", _redirect(x), _redirect(y))
        if x.target is not None and y.target is not None:
            _compare_words("a redirection target", (x.target,), (y.target,), x.span, bodies)


def _compare_nodes(a, b, bodies: bool) -> None:
    _same(a.span, "the kind of command", type(a).__name__, type(b).__name__)
    if isinstance(a, Command):
        _same(a.span, "the assignments", [(x.name, _word(x.value)) for x in a.assignments],
              [(y.name, _word(y.value)) for y in b.assignments])
        _compare_words("the assignment values", [x.value for x in a.assignments],
                       [y.value for y in b.assignments], a.span, bodies)
        for mine, theirs in zip(a.assignments, b.assignments):
            _same(mine.span, "whether an assignment is an array", mine.elements is None,
                  theirs.elements is None)
            _compare_words("an array's elements", mine.elements or (), theirs.elements or (), mine.span,
                           bodies)
        _compare_words("the words", a.words, b.words, a.span, bodies)
    elif isinstance(a, (Subshell, Group)):
        _compare_lists(a.body, b.body, a.span, bodies)
    elif isinstance(a, If):
        _same(a.span, "the number of `if`/`elif` branches", len(a.branches), len(b.branches))
        for (test, body), (test2, body2) in zip(a.branches, b.branches):
            _compare_lists(test, test2, a.span, bodies)
            _compare_lists(body, body2, a.span, bodies)
        _compare_lists(a.orelse, b.orelse, a.span, bodies) if a.orelse or b.orelse else None
    elif isinstance(a, For):
        _same(a.span, "the loop variable", a.name, b.name)
        _same(a.span, "whether the loop has `in`", a.words is None, b.words is None)
        _compare_words("the loop's words", a.words or (), b.words or (), a.span, bodies)
        _compare_lists(a.body, b.body, a.span, bodies)
    elif isinstance(a, ArithFor):
        _same(a.span, "the expressions of `for (( ))`", (a.init, a.test, a.update),
              (b.init, b.test, b.update))
        _compare_lists(a.body, b.body, a.span, bodies)
    elif isinstance(a, While):
        _same(a.span, "`while` or `until`", a.until, b.until)
        _compare_lists(a.test, b.test, a.span, bodies)
        _compare_lists(a.body, b.body, a.span, bodies)
    elif isinstance(a, Case):
        _compare_words("the case word", (a.word,), (b.word,), a.span, bodies)
        _same(a.span, "the number of case arms", len(a.arms), len(b.arms))
        for x, y in zip(a.arms, b.arms):
            _compare_words("the case patterns", x.patterns, y.patterns, x.span, bodies)
            _same(x.span, "how a case arm ends", x.terminator or ";;", y.terminator or ";;")
            _compare_lists(x.body, y.body, x.span, bodies)
    elif isinstance(a, Arith):
        _same(a.span, "the arithmetic", a.expression.strip(), b.expression.strip())
    elif isinstance(a, Cond):
        _compare_words("the words of `[[ ]]`", a.words, b.words, a.span, bodies)
    _compare_redirects(a.redirects, b.redirects, a.span, bodies)


def compare(exact: Script, other: Script, reader: str) -> Difference | None:
    """The first difference between the exact reading and another, or None.
    bashlex's reader leaves substitutions unread (the word is denied anyway
    unless both required readers agree on the commands inside), so it is
    compared without them; the choice is passed down, never kept in the
    module, so that checks in several threads cannot flip it for each other."""
    bodies = reader != "bashlex"
    whole = Span(0, len(exact.source))
    if other.problems and not exact.problems:
        code, span, message, _ = other.problems[0]
        return Difference(span, "this command", "it without error", f"an error ({message})", reader)
    try:
        _compare_lists(exact.body, other.body, whole, bodies)
    except _Mismatch as mismatch:
        span, what, mine, theirs = mismatch.args4
        return Difference(span, what, mine, theirs, reader)
    return None
