"""The small typed model every front end produces and the engine reads.

A front end (tree-sitter, bashlex) turns source text into a `Script`: simple
commands (`Segment`) joined by operators, each with assignments, words and
redirections.  Words carry the exact value bash passes after quote removal, or
the list of expansions that make the value unknowable before run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Expansion kinds a word can hold.  GLOB and TILDE only produce file names or a
# home directory; every other kind can produce arbitrary text or run code.
COMMAND_SUB = "command-substitution"
PROCESS_SUB = "process-substitution"
PARAMETER = "parameter-expansion"
ARITHMETIC = "arithmetic-expansion"
GLOB = "glob"
BRACE = "brace-expansion"
TILDE = "tilde"
ANSI_C = "ansi-c-quoting"
LOCALE = "locale-quoting"
EXTGLOB = "extglob"

PATHNAME_KINDS = frozenset({GLOB, TILDE})


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open character range [start, end) in the source text."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Expansion:
    kind: str
    span: Span


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
    name: str
    value: Word
    span: Span


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: `op` as written (`>`, `2>`, `&>`, `<`, `<<<`, `<<`, ...).

    `fd` is the explicit file-descriptor number or None; `target` the word it
    names (a file, or a descriptor for `>&`); for here-documents `body` is the
    raw body text and `quoted` tells whether the delimiter was quoted.
    """

    op: str
    fd: int | None
    target: Word | None
    span: Span
    body: str | None = None
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Segment:
    """A simple command.  `joiner` is the operator that precedes it ('' first)."""

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...]
    redirects: tuple[Redirect, ...]
    span: Span
    joiner: str = ""
    negated: bool = False

    @property
    def argv(self) -> tuple[str | None, ...]:
        return tuple(w.value for w in self.words)


@dataclass(frozen=True, slots=True)
class Script:
    source: str
    segments: tuple[Segment, ...]
    # Structural problems found while parsing, as (code, span, message, hint).
    problems: tuple[tuple[str, Span, str, str], ...] = field(default=())
