"""Renderers: a verdict as text for people (caret under the span) or JSON.

Plain text by default: hook reasons, the gate and `run` pass it on to a
model.  The CLI asks for colour on a terminal and for a pointer to each
code's page.
"""

from __future__ import annotations

import json

from .judge.verdict import Denial, Verdict

# ANSI SGR sequences: bold green, bold red, bold yellow, red.
_STYLE = {"allowed": "1;32", "denied": "1;31", "code": "1;33", "caret": "31"}


def paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_STYLE[style]}m{text}\x1b[0m" if color else text


def caret_lines(source: str, denial: Denial, indent: str = "    ", color: bool = False) -> list[str]:
    """The source line holding the span, and a caret line under the span."""
    start, end = denial.span.start, max(denial.span.end, denial.span.start + 1)
    line_start = source.rfind("\n", 0, start) + 1
    line_end = source.find("\n", start)
    if line_end < 0:
        line_end = len(source)
    line = source[line_start:line_end]
    width = min(end, line_end) - start
    prefix = ""
    if source.count("\n"):
        prefix = f"{source.count(chr(10), 0, line_start) + 1}| "
    if len(line) > 160:  # keep long lines readable: a window around the span
        left = max(0, start - line_start - 60)
        line = ("…" if left else "") + line[left:left + 160]
        start -= left - (1 if left else 0)
    pad = " " * (len(prefix) + start - line_start)
    caret = paint("^" * max(1, min(width, 160)), "caret", color)
    return [f"{indent}{prefix}{line}", f"{indent}{pad}{caret}"]


def text(verdict: Verdict, *, color: bool = False, pointers: bool = False) -> str:
    """The verdict for people.  `pointers`: end each denial with the command
    that prints its code's page."""
    if verdict.allowed:
        out = [paint("allowed", "allowed", color)]
    else:
        count = len(verdict.denials)
        out = [paint("denied", "denied", color) + f" ({count} problem{'s' if count != 1 else ''})"]
        for d in verdict.denials:
            effect = f" [{d.effect}]" if d.effect else ""
            out.append(f"  {paint(d.code, 'code', color)} {d.name}{effect}: {d.message}")
            out.extend(caret_lines(verdict.command, d, color=color))
            out.append(f"    fix: {d.hint}")
            if pointers:
                out.append(f"    see: bash-policy codes {d.code}")
    out.extend(f"  note: {n}" for n in verdict.notes)
    return "\n".join(out)


def as_json(verdict: Verdict) -> str:
    return json.dumps(verdict.to_dict(), ensure_ascii=False)
