"""`bash-policy explain`: what the checker read, command by command."""

from __future__ import annotations

from .judge.engine import check
from .judge.policy import Policy
from .render import text


def explain(command: str, policy: Policy | None = None, cwd: str | None = None,
            color: bool = False) -> tuple[str, bool]:
    verdict = check(command, policy, cwd=cwd)
    out = ["exact reader (bash's grammar) read:", *_reading(verdict.segments)]
    if any(d.code == "BP106" for d in verdict.denials):
        out = _side_by_side(out, _other_reading(command))
    out.append("verdict: " + text(verdict, color=color, pointers=True))
    return "\n".join(out), verdict.allowed


def _reading(commands) -> list[str]:
    out = []
    if not commands:
        out.append("  (no simple commands)")
    for index, seg in enumerate(commands):
        out.append(f"  command {index}: [{seg.span.start}:{seg.span.end}]")
        for a in seg.assignments:
            out.append(f"    assign {a.name} = {_value(a.value)}")
        for i, w in enumerate(seg.words):
            role = "program" if i == 0 else f"arg {i}"
            out.append(f"    {role:8} {w.text!r:28} -> {_value(w)}")
        for r in seg.redirects:
            target = _value(r.target) if r.target else ("here-document" if r.body is not None else "")
            out.append(f"    redirect {'' if r.fd is None else r.fd}{r.op} {target}")
    return out


def _other_reading(command: str) -> list[str]:
    """What tree-sitter (and bashlex) read, shown when a reading differs."""
    from .read import treesitter

    out = []
    readers = [("tree-sitter", treesitter.parse)]
    try:
        from .read import bashlex_reader
        readers.append(("bashlex", bashlex_reader.parse))
    except ModuleNotFoundError:
        pass
    for name, parse in readers:
        script = parse(command)
        problems = [f"  problem: {message}" for _, _, message, _ in script.problems]
        out += [f"{name} read:", *_reading(script.commands), *problems]
    return out


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
