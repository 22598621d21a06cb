"""`bash-policy explain`: what the checker read, segment by segment."""

from __future__ import annotations

from .judge.engine import check
from .judge.policy import Policy
from .render import text


def explain(command: str, policy: Policy | None = None, cwd: str | None = None,
            color: bool = False) -> tuple[str, bool]:
    verdict = check(command, policy, cwd=cwd)
    out = ["tree-sitter read:", *_reading(verdict.segments)]
    if any(d.code == "BP106" for d in verdict.denials):
        out = _side_by_side(out, _bashlex_reading(command))
    out.append("verdict: " + text(verdict, color=color, pointers=True))
    return "\n".join(out), verdict.allowed


def _reading(segments) -> list[str]:
    out = []
    if not segments:
        out.append("  (no simple commands)")
    for index, seg in enumerate(segments):
        joiner = {"": "", "\n": "newline "}.get(seg.joiner, seg.joiner + " ")
        out.append(f"  segment {index}: {joiner}{'! ' if seg.negated else ''}"
                   f"[{seg.span.start}:{seg.span.end}]")
        for a in seg.assignments:
            out.append(f"    assign {a.name} = {_value(a.value)}")
        for i, w in enumerate(seg.words):
            role = "program" if i == 0 else f"arg {i}"
            out.append(f"    {role:8} {w.text!r:28} -> {_value(w)}")
        for r in seg.redirects:
            target = _value(r.target) if r.target else ("here-document" if r.body is not None else "")
            out.append(f"    redirect {'' if r.fd is None else r.fd}{r.op} {target}")
    return out


def _bashlex_reading(command: str) -> list[str]:
    """What the cross-check's second parser read (only shown when the two differ)."""
    try:
        from .read.bashlex_reader import parse
    except ModuleNotFoundError:
        return ["bashlex read:", "  (bashlex is not installed)"]
    script = parse(command)
    problems = [f"  problem: {message}" for _, _, message, _ in script.problems]
    return ["bashlex read:", *_reading(script.segments), *problems]


def _side_by_side(left: list[str], right: list[str]) -> list[str]:
    width = max(len(line) for line in left) + 2
    rows = max(len(left), len(right))
    left = left + [""] * (rows - len(left))
    right = right + [""] * (rows - len(right))
    return [f"{a:{width}}| {b}".rstrip() for a, b in zip(left, right)]


def _value(word) -> str:
    if word.value is not None:
        return repr(word.value)
    kinds = ", ".join(sorted({e.kind for e in word.expansions}))
    return f"<not literal: {kinds}>"
