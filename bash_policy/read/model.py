"""The small typed tree every reader produces and the engine reads.

A reader (the exact reader, tree-sitter, bashlex) turns source text into a
`Script`: a `List` of pipelines joined by `&&`, `||`, `;`, newlines and `&`;
a pipeline's members are simple `Command`s or compound nodes (subshell,
group, if, for, `for (( ))`, while/until, case, `(( ))`, `[[ ]]`), each with spans.
Words carry the exact value bash passes after quote removal, or the
expansions that make the value unknowable before run time; a command or
process substitution carries the `List` it runs.  `Script.to_dict()` is the
JSON form (schema in docs/model.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..records import dataclass, field, fields

# Expansion kinds a word can hold.  GLOB and TILDE only produce file names or a
# home directory; every other kind can produce arbitrary text or run code.
COMMAND_SUB = "command-substitution"
PROCESS_SUB = "process-substitution"
OUTPUT_SUB = "output-process-substitution"  # `>(…)`: the word names a pipe the command writes into
PARAMETER = "parameter-expansion"
ARITHMETIC = "arithmetic-expansion"
GLOB = "glob"
BRACE = "brace-expansion"
TILDE = "tilde"
ANSI_C = "ansi-c-quoting"
LOCALE = "locale-quoting"
EXTGLOB = "extglob"
# A path a program fills into a command it runs (`find -exec CMD {} ;`): one
# word, under a starting point, never starting with `-`; with `+` every path
# found so far, as many words.
FOUND = "found-path"
FOUND_PATHS = "found-paths"

PATHNAME_KINDS = frozenset({GLOB, TILDE})


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open range [start, end) in the source text, in code points (str indices)."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Expansion:
    """One expansion inside a word.  `body` is the command list a command or
    process substitution runs (None for the other kinds, or when the reader
    did not parse it)."""

    kind: str
    span: Span
    body: List | None = None
    quoted: bool = False  # inside double quotes: the result is not split into words


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word.

    `value` is the exact string bash passes when the word holds no expansion;
    otherwise it is None and `expansions` says why.  `prefix` is the literal
    text before the first expansion: for a glob it fixes how every expansion
    starts (`src/*.py` always starts with `src/`).
    """

    text: str
    span: Span
    value: str | None
    expansions: tuple[Expansion, ...] = ()
    prefix: str = ""

    @property
    def literal(self) -> bool:
        return self.value is not None

    @property
    def pathname_only(self) -> bool:
        """True when the word's only expansions are globs or a tilde."""
        return bool(self.expansions) and all(e.kind in PATHNAME_KINDS for e in self.expansions)

    @property
    def cannot_start_with_dash(self) -> bool:
        """True when no expansion of this word can begin with `-`."""
        if self.value is not None:
            return not self.value.startswith("-")
        return self.prefix != "" and not self.prefix.startswith("-")


@dataclass(frozen=True, slots=True)
class Assignment:
    """`NAME=VALUE`; for an array `NAME=(WORDS)`, `elements` holds the words
    and `value` the text from `(` to `)`, not literal."""

    name: str
    value: Word
    span: Span
    elements: tuple[Word, ...] | None = None


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: `op` as written (`>`, `>>`, `&>`, `<`, `<<<`, `<<`, `>&`, ...).

    `fd` is the explicit file-descriptor number or None; `target` the word it
    names (a file, or a descriptor for `>&`; None when `>&-` closes); for
    here-documents `body` is the raw body text and `quoted` tells whether the
    delimiter was quoted.
    """

    op: str
    fd: int | None
    target: Word | None
    span: Span
    body: str | None = None
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Command:
    """A simple command: assignments, words (the argv) and redirections."""

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...]
    redirects: tuple[Redirect, ...]
    span: Span

    @property
    def argv(self) -> tuple[str | None, ...]:
        return tuple(w.value for w in self.words)


@dataclass(frozen=True, slots=True)
class Pipeline:
    """Commands joined by `|` or `|&` (`stderr[i]` tells whether the joint after
    command i also pipes standard error), with bash's `!` and `time [-p]`."""

    commands: tuple[Node, ...]
    span: Span
    negated: bool = False
    timed: bool = False
    stderr: tuple[bool, ...] = ()


@dataclass(frozen=True, slots=True)
class List:
    """Pipelines joined by operators: `ops[i]` (`&&`, `||`, `;`, `\\n` or `&`)
    follows `items[i]`; a last `&` puts the last item in the background."""

    items: tuple[Pipeline, ...]
    ops: tuple[str, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Subshell:
    body: List
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Group:
    body: List
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class If:
    """`if` and each `elif`: (condition, body) pairs, then the `else` body."""

    branches: tuple[tuple[List, List], ...]
    orelse: List | None
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class For:
    """`for NAME in WORDS; do BODY; done` (`words` None: `for NAME; do`, over "$@")."""

    name: str
    words: tuple[Word, ...] | None
    body: List
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ArithFor:
    """`for (( INIT; TEST; UPDATE )); do BODY; done`: the three arithmetic
    expressions as written (blanks around them dropped)."""

    init: str
    test: str
    update: str
    body: List
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class While:
    """`while` (or `until`, when `until`) TEST; do BODY; done."""

    test: List
    body: List
    until: bool
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class CaseArm:
    patterns: tuple[Word, ...]
    body: List | None
    terminator: str  # ";;", ";&", ";;&" or "" for the last arm
    span: Span


@dataclass(frozen=True, slots=True)
class Case:
    word: Word
    arms: tuple[CaseArm, ...]
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Arith:
    """`(( EXPRESSION ))`: the expression text."""

    expression: str
    redirects: tuple[Redirect, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Cond:
    """`[[ … ]]`: the words between the brackets, operators included, in order."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    span: Span


Node = Command | Subshell | Group | If | For | ArithFor | While | Case | Arith | Cond
COMPOUND = (Subshell, Group, If, For, ArithFor, While, Case, Arith, Cond)


@dataclass(frozen=True, slots=True)
class Script:
    source: str
    body: List | None
    # Structural problems found while reading, as (code, span, message, hint).
    problems: tuple[tuple[str, Span, str, str], ...] = field(default=())

    @property
    def commands(self) -> tuple[Command, ...]:
        """Every simple command, in source order, substitutions included."""
        return tuple(node for node in walk(self.body) if isinstance(node, Command))


def children(node) -> Iterator:
    """The direct children of a node, in source order (words' substitutions included)."""
    if isinstance(node, List):
        yield from node.items
    elif isinstance(node, Pipeline):
        yield from node.commands
    elif isinstance(node, Command):
        for assignment in node.assignments:
            yield from _subs(assignment.value)
            for element in assignment.elements or ():
                yield from _subs(element)
        for word in node.words:
            yield from _subs(word)
        yield from _redirect_subs(node.redirects)
    elif isinstance(node, (Subshell, Group)):
        yield node.body
        yield from _redirect_subs(node.redirects)
    elif isinstance(node, If):
        for test, body in node.branches:
            yield test
            yield body
        if node.orelse is not None:
            yield node.orelse
        yield from _redirect_subs(node.redirects)
    elif isinstance(node, For):
        for word in node.words or ():
            yield from _subs(word)
        yield node.body
        yield from _redirect_subs(node.redirects)
    elif isinstance(node, While):
        yield node.test
        yield node.body
        yield from _redirect_subs(node.redirects)
    elif isinstance(node, ArithFor):
        yield node.body
        yield from _redirect_subs(node.redirects)
    elif isinstance(node, Case):
        yield from _subs(node.word)
        for arm in node.arms:
            for word in arm.patterns:
                yield from _subs(word)
            if arm.body is not None:
                yield arm.body
        yield from _redirect_subs(node.redirects)
    elif isinstance(node, (Arith, Cond)):
        for word in getattr(node, "words", ()):
            yield from _subs(word)
        yield from _redirect_subs(node.redirects)


def _subs(word: Word) -> Iterator[List]:
    for expansion in word.expansions:
        if expansion.body is not None:
            yield expansion.body


def _redirect_subs(redirects) -> Iterator[List]:
    for redirect in redirects:
        if redirect.target is not None:
            yield from _subs(redirect.target)


def own_words(node) -> tuple[Word, ...]:
    """The words a node holds itself, redirection targets included (the words
    inside its substitutions belong to the nodes of their bodies)."""
    redirects = tuple(r.target for r in getattr(node, "redirects", ()) if r.target is not None)
    if isinstance(node, Command):
        elements = tuple(w for a in node.assignments for w in a.elements or ())
        return node.words + tuple(a.value for a in node.assignments) + elements + redirects
    if isinstance(node, For):
        return tuple(node.words or ()) + redirects
    if isinstance(node, Case):
        return (node.word,) + tuple(w for arm in node.arms for w in arm.patterns) + redirects
    if isinstance(node, Cond):
        return node.words + redirects
    return redirects


def walk(node) -> Iterator:
    """Every node under `node` (itself first), depth first, in source order."""
    if node is None:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))


def to_dict(node):
    """The JSON form of a node (docs/model.md): `{"type": "Command", ...}` with
    spans as [start, end], words as {text, span, value, expansions}."""
    if node is None or isinstance(node, (str, int, bool)):
        return node
    if isinstance(node, Span):
        return [node.start, node.end]
    if isinstance(node, tuple):
        return [to_dict(item) for item in node]
    if isinstance(node, Word):
        return {"text": node.text, "span": to_dict(node.span), "value": node.value,
                "expansions": [{"kind": e.kind, "span": to_dict(e.span), "body": to_dict(e.body),
                                "quoted": e.quoted} for e in node.expansions]}
    out = {"type": type(node).__name__}
    for f in fields(node):
        out[f.name] = to_dict(getattr(node, f.name))
    return out
