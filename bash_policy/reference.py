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
    p = spec.positionals
    limit = f", at most {p.max}" if p.max is not None else ""
    out.append(f"{pad}  operands: {p.role}{limit}")
    for sub in spec.subcommands.values():
        out.append(describe(sub, depth + 1))
    return "\n".join(out)


def flag_text(flag) -> str:
    names = "/".join(flag.names)
    if flag.value == "required":
        names += f"={flag.metavar}"
    elif flag.value == "optional":
        names += f"[={flag.metavar}]"
    if flag.choices:
        names += "{" + ",".join(sorted(flag.choices)) + "}"
    return names
