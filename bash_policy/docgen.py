"""Generate docs/codes.md and docs/reference.md from the code table and specs.

    python -m bash_policy.docgen          # rewrite both files
    python -m bash_policy.docgen --check  # exit 1 if either is stale

tests/test_docs.py fails when the files drift from what this produces.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .judge.codes import CODES
from .judge.policy import Policy
from .reference import flag_text
from .judge.spec import CommandSpec

DOCS = Path(__file__).resolve().parent.parent / "docs"


def codes_md() -> str:
    out = ["# Denial codes", "",
           "Every denial carries one of these codes. Generated from `bash_policy/judge/codes.py` by",
           "`python -m bash_policy.docgen`; do not edit by hand.", ""]
    out.append("| code | name | blocks |")
    out.append("| --- | --- | --- |")
    for c in CODES.values():
        out.append(f"| [{c.code}](#{c.code.lower()}-{c.name}) | {c.name} | {_cell(c.blocks)} |")
    for c in CODES.values():
        out += ["", f"## {c.code} {c.name}", "",
                f"**What it blocks.** {c.blocks}", "",
                f"**Why it is dangerous.** {c.why}", "",
                "**Example.**", "", "```sh", c.example, "```", "",
                f"**Fix.** {c.fix}"]
    return "\n".join(out) + "\n"


def reference_md(policy: Policy | None = None) -> str:
    policy = policy or Policy.default()
    names = policy.program_names()
    out = ["# Program reference", "",
           f"{len(names)} programs. Generated from `bash_policy/judge/specs/` by "
           "`python -m bash_policy.docgen`; do not edit by hand.", ""]
    out.append(" · ".join(f"[{n}](#{_anchor(n)})" for n in names))
    for name in names:
        out += _program(policy.spec(name))
    return "\n".join(out) + "\n"


def _program(spec: CommandSpec, level: int = 2) -> list[str]:
    out = ["", f"{'#' * level} {spec.display}", ""]
    if spec.summary:
        out += [spec.summary, ""]
    if spec.checked:
        out += [f"Checked against: {spec.checked}", ""]
    if spec.denied:
        out += [f"**Denied as a whole** ({spec.denied.category}): {spec.denied.why}."
                + (f" Fix: {spec.denied.fix}" if spec.denied.fix else ""), ""]
        return out
    p = spec.positionals
    operands = {"read": "read only", "none": "none allowed", "command": "an inner command",
                "hook": "judged by a hook"}[p.role]
    if p.max is not None:
        operands += f", at most {p.max}"
    if p.role == "command" and p.skip:
        operands += f" after {p.skip} operand(s)"
    extra = f"; hook `{spec.hook}`" if spec.hook else ""
    out += [f"Option style: {spec.style}. Operands: {operands}{extra}.", ""]
    flags = sorted(spec.unique_flags(), key=lambda f: (f.denied is not None, f.names))
    if flags:
        out += ["| flag | verdict | reason |", "| --- | --- | --- |"]
        for f in flags:
            if f.denied:
                reason = f.denied.why + (f" — {f.denied.fix}" if f.denied.fix else "")
                out.append(f"| `{_cell(flag_text(f))}` | denied ({f.denied.category}) | {_cell(reason)} |")
            else:
                out.append(f"| `{_cell(flag_text(f))}` | allowed | |")
    for sub in spec.subcommands.values():
        out += _program(sub, min(level + 1, 6))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def main(argv: list[str]) -> int:
    targets = {DOCS / "codes.md": codes_md(), DOCS / "reference.md": reference_md()}
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
