"""Renderers: a verdict as text for people (caret under the span) or JSON."""

from __future__ import annotations

import json

from .judge.verdict import Denial, Verdict


def caret_lines(source: str, denial: Denial, indent: str = "    ") -> list[str]:
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
    return [f"{indent}{prefix}{line}", f"{indent}{pad}{'^' * max(1, min(width, 160))}"]


def text(verdict: Verdict) -> str:
    if verdict.allowed:
        out = ["allowed"]
    else:
        count = len(verdict.denials)
        out = [f"denied ({count} problem{'s' if count != 1 else ''})"]
        for d in verdict.denials:
            effect = f" [{d.effect}]" if d.effect else ""
            out.append(f"  {d.code} {d.name}{effect}: {d.message}")
            out.extend(caret_lines(verdict.command, d))
            out.append(f"    fix: {d.hint}")
    out.extend(f"  note: {n}" for n in verdict.notes)
    return "\n".join(out)


def as_json(verdict: Verdict) -> str:
    return json.dumps(verdict.to_dict(), ensure_ascii=False)
