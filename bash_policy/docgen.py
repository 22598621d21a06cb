"""Generate docs/codes.md, docs/rules.md and docs/reference.md from the code
table, the rule registry and the specs.

    python -m bash_policy.docgen          # rewrite the files
    python -m bash_policy.docgen --check  # exit 1 if any is stale

tests/test_docs.py fails when the files drift from what this produces.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .judge.codes import CODES
from .judge.policy import Policy
from .judge.rules import load_all
from .judge.spec import CommandSpec
from .reference import flag_text, modes_text, operands_text

DOCS = Path(__file__).resolve().parent.parent / "docs"


def codes_md() -> str:
    out = ["# Denial codes", "",
           "Every denial carries one of these codes. Generated from `bash_policy/judge/codes.py` by",
           "`python -m bash_policy.docgen`; do not edit by hand.", ""]
    out.append("| code | name | blocks |")
    out.append("| --- | --- | --- |")
    for c in CODES.values():
        out.append(f"| [{c.code}](#{c.anchor}) | {c.name} | {_cell(c.blocks)} |")
    for c in CODES.values():
        out += ["", f"## {c.code} {c.name}", "",
                f"**What it blocks.** {c.blocks}", "",
                f"**Why it is dangerous.** {c.why}", "",
                "**Example.**", "", "```sh", _visible(c.example), "```", "",
                f"**Fix.** {c.fix}", "", "**Passes.**", "", "```sh", c.passes, "```"]
    return "\n".join(out) + "\n"


def _kinds() -> dict[str, list[str]]:
    """The kinds of problem (judge/problems.py) of each engine rule (a program
    rule's are declared in its module, and belong to whichever rule runs)."""
    from .judge import engine  # noqa: F401  (imports every module that declares kinds)
    from .judge.problems import Problem

    found: dict[str, list[str]] = {}
    stack = list(Problem.__subclasses__())
    while stack:
        kind = stack.pop()
        stack.extend(kind.__subclasses__())
        if hasattr(kind, "code") and kind.rule is not None:
            found.setdefault(kind.rule, []).append(kind.__name__)
    return {key: sorted(set(names)) for key, names in found.items()}


def rules_md() -> str:
    """One section per rule, ruff-style: what it blocks, why, examples both ways."""
    rules = sorted(load_all().values(), key=lambda r: (r.kind, r.name))
    kinds = _kinds()
    out = ["# Rules", "",
           "Every denial names the rule that produced it (`Denial.rule`, `\"rule\"` in JSON).",
           "Engine rules apply to every program; program rules are named by specs",
           "(`hooks = [\"NAME\", …]`, or `hook = \"NAME\"` for one) and found in",
           "`bash_policy/judge/rules/`. A rule denies by reporting a *problem*, one small class per",
           "kind of denial that owns its code, effect, message and hint (bash_policy/judge/problems.py,",
           "docs/spec-format.md); the kinds of each rule are listed below, and the text of each is",
           "kept in tests/fixtures/messages/, one file per code. Generated from the rule registry by",
           "`python -m bash_policy.docgen`; do not edit by hand. Every example below is run by",
           "tests/test_rules.py.", "",
           "| rule | kind | codes | blocks |", "| --- | --- | --- | --- |"]
    for r in rules:
        out.append(f"| [{r.name}](#{r.name}) | {r.kind} | {', '.join(c.value for c in r.codes)} "
                   f"| {_cell(r.summary)} |")
    for r in rules:
        out += ["", f"## {r.name}", "", f"**What it blocks.** {r.summary}", "",
                f"**Why.** {r.why}", "", f"**Codes.** {', '.join(c.value for c in r.codes)}", ""]
        if r.check is None:
            out += [f"**Kinds.** {', '.join(f'`{k}`' for k in kinds.get(r.name, ()))}", ""]
        else:
            out += [f"**Kinds.** declared beside it, in `{r.check.__module__.replace('.', '/')}.py`", ""]
        if r.deny:
            out += ["**Denied.**", "", "```sh", *map(_visible, r.deny), "```", ""]
        else:
            out += [f"**Denied.** {r.untestable}", ""]
        out += ["**Allowed.**", "", "```sh", *r.allow, "```"]
    return "\n".join(out) + "\n"


def reference_md(policy: Policy | None = None) -> str:
    policy = policy or Policy.default()
    names = policy.program_names()
    out = ["# Program reference", "",
           f"{len(names)} programs. Generated from `bash_policy/judge/specs/` by "
           "`python -m bash_policy.docgen`; do not edit by hand.", ""]
    out.append(" · ".join(f"[{n}](#{_anchor(n)})" for n in names))
    for name in names:
        spec = policy.spec(name)
        assert spec is not None, name  # every name listed has a built-in spec
        out += _program(spec)
    return "\n".join(out) + "\n"


def _program(spec: CommandSpec, level: int = 2) -> list[str]:
    out = ["", f"{'#' * level} {spec.display}", ""]
    if spec.aliases:
        out += ["Also called " + ", ".join(f"`{a}`" for a in spec.aliases) + ".", ""]
    if spec.summary:
        out += [spec.summary, ""]
    if spec.checked:
        out += [f"Checked against: {spec.checked}", ""]
    if spec.denied:
        out += [f"**Denied as a whole** ({spec.denied.effect}): {spec.denied.why}."
                + (f" Fix: {spec.denied.fix}" if spec.denied.fix else ""), ""]
        return out
    extra = (f"; hook{'s' if len(spec.hooks) > 1 else ''} " + ", ".join(f"`{h}`" for h in spec.hooks)
             if spec.hooks else "")
    parser = f" ({spec.parser})" if spec.parser else ""
    out += [f"Option style: {spec.style}{parser}. Operands: {operands_text(spec)}{extra}.", ""]
    if spec.modes is not None:
        out += [f"Modes: {modes_text(spec)}.", ""]
    flags = sorted(spec.unique_flags(), key=lambda f: (f.denied is not None, f.names))
    if flags:
        out += ["| flag | verdict | reason |", "| --- | --- | --- |"]
        for f in flags:
            if f.denied:
                reason = f.denied.why + (f" — {f.denied.fix}" if f.denied.fix else "")
                out.append(f"| `{_cell(flag_text(f))}` | denied ({f.denied.effect}) | {_cell(reason)} |")
            else:
                out.append(f"| `{_cell(flag_text(f))}` | allowed | |")
    for sub in spec.subcommands.values():
        out += _program(sub, min(level + 1, 6))
    return out


def _visible(text: str) -> str:
    """Control characters other than newline written as escapes, so the page shows them."""
    return "".join(ch if ch == "\n" or ch.isprintable() else ch.encode("unicode_escape").decode()
                   for ch in text)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def main(argv: list[str]) -> int:
    targets = {DOCS / "codes.md": codes_md(), DOCS / "rules.md": rules_md(),
               DOCS / "reference.md": reference_md()}
    stale = [p for p, text in targets.items() if not p.exists() or p.read_text() != text]
    if "--check" in argv:
        for p in stale:
            print(f"{p} is stale: run python -m bash_policy.docgen")
        return 1 if stale else 0
    for p in stale:
        p.write_text(targets[p])
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
