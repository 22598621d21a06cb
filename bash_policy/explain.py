"""`bash-policy explain`: what the checker read, segment by segment."""

from __future__ import annotations

from .engine import check
from .policy import Policy
from .render import text


def explain(command: str, policy: Policy | None = None, cwd: str | None = None) -> tuple[str, bool]:
    verdict = check(command, policy, cwd=cwd)
    out = ["tree-sitter read:"]
    if not verdict.segments:
        out.append("  (no simple commands)")
    for index, seg in enumerate(verdict.segments):
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
    out.append("verdict: " + text(verdict))
    return "\n".join(out), verdict.allowed


def _value(word) -> str:
    if word.value is not None:
        return repr(word.value)
    kinds = ", ".join(sorted({e.kind for e in word.expansions}))
    return f"<not literal: {kinds}>"
