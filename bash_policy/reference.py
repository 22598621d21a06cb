"""Human-readable views of specs: `bash-policy programs` and docs/programs/."""

from __future__ import annotations

from .judge.policy import Policy
from .judge.spec import CommandSpec


def listing(policy: Policy) -> str:
    lines = []
    for name in policy.program_names():
        spec = policy.spec(name)
        mark = "  (denied)" if spec.denied else ""
        lines.append(f"{name:14} {spec.summary}{mark}")
    return "\n".join(lines)


def describe(spec: CommandSpec, depth: int = 0) -> str:
    pad = "  " * depth
    out = [f"{pad}{spec.display}: {spec.summary}".rstrip(": ")]
    if spec.checked:
        out.append(f"{pad}  checked: {spec.checked}")
    if spec.denied:
        out.append(f"{pad}  denied [{spec.denied.effect}]: {spec.denied.why}")
        return "\n".join(out)
    allowed = [f for f in spec.unique_flags() if f.denied is None]
    denied = [f for f in spec.unique_flags() if f.denied is not None]
    if allowed:
        out.append(f"{pad}  allowed: " + " ".join(sorted(flag_text(f) for f in allowed)))
    for f in sorted(denied, key=lambda f: f.names):
        out.append(f"{pad}  denied {flag_text(f)} [{f.denied.effect}]: {f.denied.why}")
    out.append(f"{pad}  operands: {operands_text(spec)}")
    for sub in spec.subcommands.values():
        out.append(describe(sub, depth + 1))
    return "\n".join(out)


def operands_text(spec: CommandSpec) -> str:
    """How a spec reads its operands, in words."""
    p = spec.positionals
    text = {"read": "read only", "none": "none allowed", "command": "an inner command",
            "hook": "judged by a hook"}[p.role]
    if p.max is not None:
        text += f", at most {p.max}"
    if p.role == "command" and p.skip:
        text += f" after {p.skip} operand(s)"
    if p.role == "read" and not p.files:
        text += ", names or text never opened"
    if p.pattern is not None:
        text += ", the first a pattern or program" + (f" unless {', '.join(p.pattern)} is given"
                                                      if p.pattern else "")
    if not spec.permute and not spec.subcommands:
        text += "; options end at the first operand"
    if spec.obsolete is not None:
        text += f"; obsolete first word `{spec.obsolete.form.pattern}`"
    return text


def flag_text(flag) -> str:
    names = "/".join(flag.names)
    if flag.value in ("required", "attached", "lastarg"):
        names += f"={flag.metavar}"
    elif flag.value == "optional":
        names += f"[={flag.metavar}]"
    if flag.choices:
        names += "{" + ",".join(sorted(flag.choices)) + "}"
    notes = {"attached": "value only attached", "lastarg": "no value when last"}.get(flag.value, "")
    if flag.reads:
        notes += ("; " if notes else "") + "reads a file"
    return f"{names} ({notes})" if notes else names
