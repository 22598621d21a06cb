"""A reader for git's config-file syntax, so repository config is judged without running git.

It follows git 2.39's own parser (config.c): `[section]`, `[section "sub"]`
with `\\"` and `\\\\` escapes, the legacy `[section.sub]` form (lower-cased),
case-insensitive section and key names, values with quotes, the escapes
\\n \\t \\b \\\\ \\" and line continuations, and `#`/`;` comments.  Text git
would reject raises `ConfigSyntaxError`: the caller cannot tell what git
would do with it, so it fails closed.
"""

from __future__ import annotations

from ..records import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import NoReturn

_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}
# git's own isspace (git-compat-util.h, ctype.c): not \v or \f, which are
# ordinary characters in a value (`path = x<VT>` names the file `x<VT>`).
_SPACE = " \t\r"


class ConfigSyntaxError(ValueError):
    """Text that git's config parser rejects; the message names the line."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One `key = value`; `value` is None for a bare `key` (boolean true)."""

    section: str | None  # None before any section header
    subsection: str | None
    key: str
    value: str | None
    line: int

    @property
    def name(self) -> str:
        if self.section is None:  # a key before any section header: git names it by the key alone
            return self.key
        parts = [self.section] + ([self.subsection] if self.subsection is not None else []) + [self.key]
        return ".".join(parts)


def _is_key_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "-")


class _Reader:
    def __init__(self, text: str):
        self.text = text.replace("\r\n", "\n")
        if self.text.startswith("\ufeff"):
            self.text = self.text[1:]
        self.pos = 0
        self.line = 1

    def next(self) -> str:
        """The next character; end of text reads as a final newline ('' after it)."""
        if self.pos >= len(self.text):
            self.pos += 1
            return "\n" if self.pos == len(self.text) + 1 else ""
        ch = self.text[self.pos]
        self.pos += 1
        if ch == "\n":
            self.line += 1
        return ch

    def fail(self, what: str) -> NoReturn:
        raise ConfigSyntaxError(f"line {self.line}: {what}")


# The entries of config texts read lately, by the text itself (parsing is a
# function of the text alone): a server reads the same files for every git
# command.  Short texts only, and a few of them.
_KEPT: dict[str, tuple[Entry, ...]] = {}
_MAX_KEPT = 32
_KEEP_CHARS = 1 << 16


def parse(text: str) -> list[Entry]:
    """Every entry of a config file, in order."""
    if len(text) > _KEEP_CHARS:
        return _parse(text)
    kept = _KEPT.get(text)
    if kept is None:
        kept = tuple(_parse(text))
        if len(_KEPT) >= _MAX_KEPT:
            _KEPT.clear()
        _KEPT[text] = kept
    return list(kept)


def _parse(text: str) -> list[Entry]:
    reader = _Reader(text)
    entries: list[Entry] = []
    section: str | None = None
    subsection: str | None = None
    comment = False
    while True:
        ch = reader.next()
        if ch == "":
            return entries
        if ch == "\n":
            comment = False
            continue
        if comment or ch in _SPACE:
            continue
        if ch in "#;":
            comment = True
            continue
        if ch == "[":
            section, subsection = _header(reader)
            continue
        if not (ch.isascii() and ch.isalpha()):
            reader.fail(f"unexpected character {ch!r}")
        line = reader.line
        key = ch.lower()
        while True:
            ch = reader.next()
            if not _is_key_char(ch) or ch == "":
                break
            key += ch.lower()
        while ch in (" ", "\t"):
            ch = reader.next()
        value: str | None = None
        if ch not in ("\n", ""):
            if ch != "=":
                reader.fail(f"expected `=` after `{key}`")
            value = _value(reader)
        entries.append(Entry(section, subsection, key, value, line))


def _header(reader: _Reader) -> tuple[str, str | None]:
    name = ""
    while True:
        ch = reader.next()
        if ch in ("", "\n"):
            reader.fail("unterminated section header")
        if ch == "]":
            break
        if ch in _SPACE:
            return _extended_header(reader, name)
        if not _is_key_char(ch) and ch != ".":
            reader.fail(f"bad character {ch!r} in section name")
        name += ch.lower()
    if not name:
        reader.fail("empty section name")
    section, dot, sub = name.partition(".")  # `[.]` is the section "" with the subsection ""
    return section, (sub if dot else None)


def _extended_header(reader: _Reader, section: str) -> tuple[str, str]:
    ch = reader.next()
    while ch in _SPACE:
        ch = reader.next()
    if ch != '"':
        reader.fail("expected a quoted subsection name")
    sub = ""
    while True:
        ch = reader.next()
        if ch in ("", "\n"):
            reader.fail("unterminated subsection name")
        if ch == '"':
            break
        if ch == "\\":
            ch = reader.next()
            if ch in ("", "\n"):
                reader.fail("unterminated subsection name")
        sub += ch
    if reader.next() != "]":
        reader.fail("expected `]` after the subsection name")
    return section, sub


def _value(reader: _Reader) -> str:
    """config.c parse_value: blanks outside quotes count only once the value
    holds a character (`path = "" x` is `x`), and trailing ones are dropped."""
    out: list[str] = []
    quote = comment = False
    spaces = 0
    while True:
        ch = reader.next()
        if ch in ("\n", ""):
            if quote:
                reader.fail("unterminated quote in value")
            return "".join(out)
        if comment:
            continue
        if ch in _SPACE and not quote:
            if any(out):
                spaces += 1
            continue
        if not quote and ch in "#;":
            comment = True
            continue
        out.append(" " * spaces)
        spaces = 0
        if ch == "\\":
            ch = reader.next()
            if ch == "\n":
                continue
            if ch not in _ESCAPES:
                reader.fail(f"unknown escape `\\{ch}` in value")
            out.append(_ESCAPES[ch])
            continue
        if ch == '"':
            quote = not quote
            continue
        out.append(ch)
