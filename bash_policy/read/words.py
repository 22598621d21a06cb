"""Bash quote removal for one word, computed from its raw source text.

Front ends only decide where a word starts and ends; its value is computed
here, by one scanner that follows bash's rules (bash(1), QUOTING and
EXPANSION), so both front ends read every word the same way.
"""

from __future__ import annotations

import re

from .model import (
    ANSI_C,
    ARITHMETIC,
    BRACE,
    COMMAND_SUB,
    EXTGLOB,
    GLOB,
    LOCALE,
    OUTPUT_SUB,
    PARAMETER,
    PROCESS_SUB,
    TILDE,
    Expansion,
    Span,
    Word,
)

# Characters that may follow `$` to form a parameter expansion.
_PARAM_START = re.compile(r"[A-Za-z_0-9@*#?$!\-{]")
# A word bash treats as an assignment, in which `~` after `=` or `:` expands.
_ASSIGNMENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
# Text in which no character quotes, expands or ends a word: `_scan` would
# append each character as it is (`{` alone starts brace bookkeeping).
_ORDINARY = re.compile(r"[^\\'\"$`*?\[~{ \t\n;&|<>()]*")
# Backslash escapes that keep their meaning inside double quotes.
_DQ_ESCAPABLE = '$`"\\\n'


class WordSyntaxError(ValueError):
    """The text is not one complete word (unterminated quote, stray operator)."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def scan_word(text: str, start: int = 0) -> Word:
    """Return the `Word` for raw source `text` found at offset `start`.

    bash deletes each backslash-newline pair outside single quotes before it
    reads the word (bash(1), QUOTING), so `$\\<newline>--` is the parameter
    `$-`: the pairs are removed first and spans mapped back to the raw text.
    """
    if _ORDINARY.fullmatch(text):  # most words: the value is the text
        return Word(text, Span(start, start + len(text)), text)
    if "\\\n" not in text:
        return _scan(text, start, None)
    clean, where = _join_continuations(text)
    try:
        word = _scan(clean, 0, where)
    except WordSyntaxError as error:
        raise WordSyntaxError(str(error), start + where[min(error.offset, len(clean))]) from None
    shift = [Expansion(e.kind, Span(start + e.span.start, start + e.span.end)) for e in word.expansions]
    return Word(text, Span(start, start + len(text)), word.value, tuple(shift), word.prefix)


def _join_continuations(text: str) -> tuple[str, list[int]]:
    """`text` without backslash-newline pairs outside single quotes, and for
    each remaining character (plus the end) its index in `text`."""
    out: list[str] = []
    where: list[int] = []
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = ""
        elif c == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            out.append(c)
            where.append(i)
            i += 1
            c = text[i]
        elif quote == "$'":
            if c == "'":
                quote = ""
        elif c == '"':
            quote = "" if quote == '"' else '"'
        elif c == "'" and not quote:
            quote = "$'" if out and out[-1] == "$" else "'"
        out.append(c)
        where.append(i)
        i += 1
    where.append(n)
    return "".join(out), where


def _scan(text: str, start: int, where: list[int] | None) -> Word:
    out: list[str] = []
    expansions: list[Expansion] = []
    prefix: str | None = None
    # Unquoted brace and assignment bookkeeping (positions in `out`).
    brace_open = brace_sep = False
    i, n = 0, len(text)

    def expansion(kind: str, a: int, b: int) -> None:
        nonlocal prefix
        if prefix is None:
            prefix = "".join(out)
        if where is not None:
            a, b = where[a], where[min(b, len(where) - 1)]
        expansions.append(Expansion(kind, Span(start + a, start + b)))

    while i < n:
        c = text[i]
        if c == "\\":
            if i + 1 >= n:
                out.append("\\")
                i += 1
            elif text[i + 1] == "\n":
                i += 2
            else:
                out.append(text[i + 1])
                i += 2
        elif c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise WordSyntaxError("unterminated single quote", start + i)
            out.append(text[i + 1 : j])
            i = j + 1
        elif c == '"':
            i = _scan_double(text, i + 1, out, expansion, start)
        elif c == "$":
            i = _scan_dollar(text, i, expansion, out, quoted=False)
        elif c == "`":
            j = _skip_backticks(text, i, start)
            expansion(COMMAND_SUB, i, j)
            i = j
        elif c in "*?":
            if i + 1 < n and text[i + 1] == "(":
                expansion(EXTGLOB, i, n)
                break
            expansion(GLOB, i, i + 1)
            out.append(c)
            i += 1
        elif c == "[":
            if "]" in text[i + 1 :]:
                expansion(GLOB, i, i + 1)
            out.append(c)
            i += 1
        elif c in "@+!" and i + 1 < n and text[i + 1] == "(":
            expansion(EXTGLOB, i, n)
            break
        elif c in "<>" and i + 1 < n and text[i + 1] == "(":
            expansion(PROCESS_SUB if c == "<" else OUTPUT_SUB, i, n)
            break
        elif c == "~" and _tilde_position(text, i, out):
            expansion(TILDE, i, i + 1)
            out.append(c)
            i += 1
        elif c in " \t\n;&|<>()":
            raise WordSyntaxError(f"unexpected {c!r} inside a word", start + i)
        else:
            if c == "{" and not (out and out[-1].endswith("$")):
                brace_open = True
            elif c == "," and brace_open:
                brace_sep = True
            elif c == "." and brace_open and i + 1 < n and text[i + 1] == ".":
                brace_sep = True
            elif c == "}" and brace_open and brace_sep:
                expansion(BRACE, i, i + 1)
            out.append(c)
            i += 1

    if expansions:
        return Word(text, Span(start, start + n), None, tuple(expansions), prefix or "")
    return Word(text, Span(start, start + n), "".join(out))


def _tilde_position(text: str, i: int, out: list[str]) -> bool:
    """Whether an unquoted `~` at text[i] undergoes tilde expansion."""
    if i == 0:
        return True
    if text[i - 1] in "=:":
        return bool(_ASSIGNMENT_LIKE.match("".join(out)))
    return False


def _scan_double(text, i, out, expansion, start) -> int:
    """Scan a double-quoted string body from text[i]; return index after `"`."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n and text[i + 1] in _DQ_ESCAPABLE:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
        elif c == "$":
            i = _scan_dollar(text, i, expansion, out, quoted=True)
            if i >= n:
                return n  # an expansion took the rest of the word: it is unknowable
        elif c == "`":
            j = _skip_backticks(text, i, start)
            expansion(COMMAND_SUB, i, j)
            i = j
        else:
            out.append(c)
            i += 1
    raise WordSyntaxError("unterminated double quote", start + i)


def _scan_dollar(text, i, expansion, out, quoted) -> int:
    """Classify the `$` at text[i]; return the index to continue from.

    The extent of an expansion does not matter (the word is unknowable either
    way) except for `$'…'` and `$"…"`, whose quotes must be skipped so that
    the rest of the word is scanned in the right state.
    """
    n = len(text)
    nxt = text[i + 1] if i + 1 < n else ""
    if nxt == "(":
        kind = ARITHMETIC if text.startswith("$((", i) else COMMAND_SUB
        expansion(kind, i, n)
        return n
    if nxt == "[":
        expansion(ARITHMETIC, i, n)
        return n
    if not quoted and nxt == "'":
        j = i + 2
        while j < n and text[j] != "'":
            j += 2 if text[j] == "\\" else 1
        if j >= n:
            raise WordSyntaxError("unterminated $'…' quote", i)
        expansion(ANSI_C, i, j + 1)
        return j + 1
    if not quoted and nxt == '"':
        sink: list[str] = []
        j = _scan_double(text, i + 2, sink, expansion, 0)
        expansion(LOCALE, i, j)
        return j
    if nxt and _PARAM_START.match(nxt):
        expansion(PARAMETER, i, n)
        return n
    out.append("$")
    return i + 1


def _skip_backticks(text: str, i: int, start: int) -> int:
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "`":
            return j + 1
        j += 1
    raise WordSyntaxError("unterminated backquote", start + i)
