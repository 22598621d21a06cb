"""Human-readable views of specs and codes: `bash-policy programs` and
`bash-policy codes`, as text or JSON."""

from __future__ import annotations

import textwrap
from typing import Any, Protocol

from .judge.policy import Policy
from .judge.spec import CommandSpec, Flag, Reason


class CodePage(Protocol):
    """An entry of `bash_policy.judge.codes.CODES` (read-only fields)."""

    @property
    def code(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def blocks(self) -> str: ...
    @property
    def why(self) -> str: ...
    @property
    def example(self) -> str: ...
    @property
    def fix(self) -> str: ...


def _kind(reason: Reason) -> str:
    """The effect a denied spec or flag would have (exec, write, …)."""
    return reason.effect.value


def listing(policy: Policy) -> str:
    """Allowed programs, then the known programs that are denied as a whole."""
    allowed, denied = _split(policy)
    width = max(len(s.name) for s in allowed + [s for s, _ in denied]) + 2
    out = [f"allowed ({len(allowed)}):"]
    out += [f"  {s.name:{width}}{s.summary}" for s in allowed]
    out += ["", f"denied ({len(denied)}; known, never run in plan mode):"]
    out += [f"  {s.name:{width}}[{_kind(e)}] {e.why}" for s, e in denied]
    return "\n".join(out)


def listing_json(policy: Policy) -> dict[str, Any]:
    allowed, denied = _split(policy)
    return {"allowed": [{"name": s.name, "summary": s.summary} for s in allowed],
            "denied": [{"name": s.name, "summary": s.summary, "category": _kind(e),
                        "why": e.why, "fix": e.fix} for s, e in denied]}


def _split(policy: Policy) -> tuple[list[CommandSpec], list[tuple[CommandSpec, Any]]]:
    """Allowed specs, and denied ones with the effect that denies them."""
    allowed, denied = [], []
    for name in policy.program_names():
        spec = policy.spec(name)
        if spec is None:
            continue
        if spec.denied is None:
            allowed.append(spec)
        else:
            denied.append((spec, spec.denied))
    return allowed, denied


def describe(spec: CommandSpec, width: int = 80, depth: int = 0) -> str:
    """One program's spec; long flag lists wrap at `width`."""
    pad = "  " * depth
    out = [f"{pad}{spec.display}: {spec.summary}".rstrip(": ")]
    if spec.aliases:
        out.append(f"{pad}  also called: {', '.join(spec.aliases)}")
    if spec.checked:
        out += textwrap.wrap(spec.checked, max(width, 40), initial_indent=f"{pad}  checked: ",
                             subsequent_indent=f"{pad}           ", break_on_hyphens=False)
    if spec.denied:
        out.append(f"{pad}  denied [{_kind(spec.denied)}]: {spec.denied.why}")
        return "\n".join(out)
    allowed = sorted(flag_text(f) for f in spec.unique_flags() if f.denied is None)
    denied = [(f, f.denied) for f in spec.unique_flags() if f.denied is not None]
    if allowed:
        out += textwrap.wrap(" ".join(allowed), max(width, 40), initial_indent=f"{pad}  allowed: ",
                             subsequent_indent=f"{pad}           ", break_on_hyphens=False,
                             break_long_words=False)
    for f, effect in sorted(denied, key=lambda pair: pair[0].names):
        out.append(f"{pad}  denied {flag_text(f)} [{_kind(effect)}]: {effect.why}")
    if spec.modes is not None:
        out.append(f"{pad}  modes: {modes_text(spec)}")
    out.append(f"{pad}  operands: {operands_text(spec)}")
    for sub in spec.subcommands.values():
        out.append(describe(sub, width, depth + 1))
    return "\n".join(out)


def describe_json(spec: CommandSpec) -> dict[str, Any]:
    data: dict[str, Any] = {"name": spec.display, "summary": spec.summary, "checked": spec.checked,
                            "aliases": list(spec.aliases)}
    if spec.denied:
        data["denied"] = {"category": _kind(spec.denied), "why": spec.denied.why,
                          "fix": spec.denied.fix}
        return data
    flags = sorted(spec.unique_flags(), key=lambda f: f.names)
    data["allowed_flags"] = sorted(flag_text(f) for f in flags if f.denied is None)
    data["denied_flags"] = [{"flag": flag_text(f), "category": _kind(e), "why": e.why,
                             "fix": e.fix} for f in flags if (e := f.denied) is not None]
    data["operands"] = {"role": spec.positionals.role, "max": spec.positionals.max}
    data["subcommands"] = [describe_json(sub) for sub in spec.subcommands.values()]
    return data


_COMBINE_TEXT = {"last": "the last one given wins", "first": "the first one given wins",
                 "error": "two different ones are refused", "all": "each one given takes effect"}


def modes_text(spec: CommandSpec) -> str:
    """Which flags select the program's mode and how it combines them, in words."""
    modes = spec.modes
    assert modes is not None
    text = f"{' '.join(modes.flags)}: {_COMBINE_TEXT[modes.combine]}"
    if modes.default:
        text += f"; without one, {modes.default}"
    if modes.reset:
        text += f"; {' '.join(modes.reset)} resets the ones before it"
    return text


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
    elif p.role == "read" and p.shape != "file":
        text += f" ({_READS_TEXT[p.shape]})"
    if p.pattern is not None:
        text += ", the first a pattern or program" + (f" unless {', '.join(p.pattern)} is given"
                                                      if p.pattern else "")
    if not spec.permute and not spec.subcommands:
        text += "; options end at the first operand"
    if spec.obsolete is not None:
        text += f"; obsolete first word `{spec.obsolete.form.pattern}`"
    return text


_READS_TEXT = {"file": "reads a file", "file-if-slash": "reads a file when it holds a /",
               "directory": "reads the files in a directory", "siblings": "reads a file and the ones beside it",
               "suffixed": "reads a file, or one with a suffix added or dropped when it is missing"}


def flag_text(flag: Flag) -> str:
    names = "/".join(flag.names)
    if flag.value in ("required", "attached", "lastarg", "unless_flag"):
        names += f"={flag.metavar}"
    elif flag.value == "optional":
        names += f"[={flag.metavar}]"
    if flag.choices:
        names += "{" + ",".join(sorted(flag.choices)) + "}"
    notes = {"attached": "value only attached", "lastarg": "no value when last",
             "unless_flag": "no value when last or before a word starting with -"}.get(flag.value, "")
    if flag.reads:
        notes += ("; " if notes else "") + _READS_TEXT[flag.reads]
    return f"{names} ({notes})" if notes else names


def code_listing(codes: dict[str, Any]) -> str:
    width = max(len(c.name) for c in codes.values()) + 2
    return "\n".join(f"{c.code}  {c.name:{width}}{_first_sentence(c.blocks)}" for c in codes.values())


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + dot.strip()


def code_page(c: CodePage) -> str:
    """One code as `ruff rule` shows a rule: what, why, example, fix."""
    return "\n".join([f"{c.code} {c.name}", "", "What it blocks:", _indent(c.blocks), "",
                      "Why:", _indent(c.why), "", "Example:", f"    {c.example}", "",
                      "Fix:", _indent(c.fix)])


def _indent(text: str) -> str:
    return textwrap.fill(text, 76, initial_indent="    ", subsequent_indent="    ")
