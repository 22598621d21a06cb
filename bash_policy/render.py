"""Renderers: a verdict as text for people (caret under the span) or JSON.

Plain text by default: hook reasons, the gate and `run` pass it on to a
model.  The CLI asks for colour on a terminal and for a pointer to each
code's page.
"""

from __future__ import annotations

import codecs
import json
import unicodedata

from .judge.verdict import Denial, Verdict

# ANSI SGR sequences: bold green, bold red, bold yellow, red.
_STYLE = {"allowed": "1;32", "denied": "1;31", "code": "1;33", "caret": "31"}


def paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_STYLE[style]}m{text}\x1b[0m" if color else text


def escape(text: str) -> str:
    """`text` safe to print on a terminal: control characters (ESC, BEL, NUL,
    CR, tab, DEL, C1), invisible format characters (bidi controls, zero-width
    ones) and line separators are written as escapes (`\\x1b`, `\\u202e`),
    and a byte that was not UTF-8 (a surrogate escape) as `\\xff`, so that the
    echo of a command can neither drive the terminal nor hide text."""
    if text.isprintable():
        return text
    return "".join(_escaped(c) for c in text)


def _escaped(c: str) -> str:
    if c.isprintable() or c == " ":
        return c
    point = ord(c)
    if 0xDC80 <= point <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\x{point - 0xDC00:02x}"
    if unicodedata.category(c) == "Co":  # private use: printable on its terminal, not hidden
        return c
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"


class TerminalOutput:
    """A program's output made safe to relay to a terminal, chunk by chunk:
    everything `escape` escapes but line feeds and tabs, so that it can
    neither set the terminal's modes nor make it answer (a cursor report is
    typed into the shell's input).  A UTF-8 character split across chunks
    is kept whole."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")

    def __call__(self, data: bytes) -> bytes:
        text = self._decoder.decode(data)
        return "\n".join("\t".join(map(escape, line.split("\t"))) for line in text.split("\n")).encode()


def width(text: str) -> int:
    """Columns `text` takes on a terminal: wide East Asian characters and
    emoji take two, combining marks none (text already escaped)."""
    return sum(_width(c) for c in text)


def _width(c: str) -> int:
    if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def caret_lines(source: str, denial: Denial, indent: str = "    ", color: bool = False) -> list[str]:
    """The source line holding the span, escaped, and a caret line under the
    span, aligned by display width."""
    start, end = denial.span.start, max(denial.span.end, denial.span.start + 1)
    line_start = source.rfind("\n", 0, start) + 1
    line_end = source.find("\n", start)
    if line_end < 0:
        line_end = len(source)
    line = source[line_start:line_end]
    prefix = ""
    if source.count("\n"):
        prefix = f"{source.count(chr(10), 0, line_start) + 1}| "
    before, inside, after = line[:start - line_start], line[start - line_start:end - line_start], \
        line[end - line_start:]
    if len(line) > 160:  # keep long lines readable: a window around the span
        left = max(0, len(before) - 60)
        before = ("…" if left else "") + before[left:]
        inside = inside[:max(1, 160 - len(before))]
        after = after[:max(0, 160 - len(before) - len(inside))]
    before, inside, after = escape(before), escape(inside), escape(after)
    pad = " " * (len(prefix) + width(before))
    caret = paint("^" * max(1, min(width(inside), 160)), "caret", color)
    return [f"{indent}{prefix}{before}{inside}{after}", f"{indent}{pad}{caret}"]


def text(verdict: Verdict, *, color: bool = False, pointers: bool = False, notes: bool = True) -> str:
    """The verdict for people.  `pointers`: end each denial with the command
    that prints its code's page; `notes`: what the reader and the cross-check
    said (the CLI shows them under --verbose).  Everything taken from the
    command is escaped."""
    if verdict.allowed:
        out = [paint("allowed", "allowed", color)]
    else:
        count = len(verdict.denials)
        out = [paint("denied", "denied", color) + f" ({count} problem{'s' if count != 1 else ''})"]
        for d in verdict.denials:
            effect = f" [{d.effect}]" if d.effect else ""
            out.append(f"  {paint(d.code, 'code', color)} {d.name}{effect}: {escape(d.message)}")
            out.extend(caret_lines(verdict.command, d, color=color))
            out.append(f"    fix: {escape(d.hint)}")
            if pointers:
                out.append(f"    see: bash-policy codes {d.code}")
        if verdict.fix is not None and verdict.fix.command is not None:
            out.append(f"  rewrite ({verdict.fix.applicability}): {escape(verdict.fix.command)}")
    if notes:
        out.extend(f"  note: {escape(n)}" for n in verdict.notes)
    return "\n".join(out)


def as_json(verdict: Verdict) -> str:
    return json.dumps(verdict.to_dict(), ensure_ascii=False)
