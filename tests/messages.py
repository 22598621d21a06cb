"""The text of every kind of denial, kept in one file per code.

    python tests/messages.py    # rewrite tests/fixtures/messages/ after a change of wording

Each kind of problem (judge/problems.py) that a corpus case or a rule's or
spec's example produces gets up to `PER_KIND` entries: the command (with
its working directory), and the message and hint it is denied with.  An
entry that still produces its kind keeps its command, so rewriting after a
change of wording shows only that change; a kind met for the first time
takes its first commands in corpus order.  tests/test_messages.py checks
that every entry holds and that every kind met has one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIRECTORY = ROOT / "tests" / "fixtures" / "messages"
PER_KIND = 2


@dataclass(frozen=True)
class Entry:
    kind: str
    rule: str
    command: str
    cwd: str | None  # relative to the repository root
    message: str
    hint: str


def _text(value: str) -> str:
    """A field as it is written: itself, or as JSON when it holds a line break,
    a control character or blanks at either end."""
    if value.isprintable() and value == value.strip():
        return value
    return "json:" + json.dumps(value, ensure_ascii=False)


def _read_text(value: str) -> str:
    return json.loads(value[5:]) if value.startswith("json:") else value


def render(code: str, entries: list[Entry]) -> str:
    from bash_policy.judge.codes import CODES

    out = [f"# {code} {CODES[code].name}: the text of every kind of denial with this code.",
           "# tests/test_messages.py checks each entry; after a deliberate change of wording,",
           "# `python tests/messages.py` rewrites the file.", ""]
    for entry in sorted(entries, key=lambda e: (e.kind, e.rule)):
        out.append(f"{entry.kind} ({entry.rule})")
        where = f"[cwd {entry.cwd}] " if entry.cwd is not None else ""
        out += [f"  $ {where}{_text(entry.command)}", f"  message: {_text(entry.message)}",
                f"  hint: {_text(entry.hint)}", ""]
    return "\n".join(out)


def parse(path: Path) -> list[Entry]:
    entries: list[Entry] = []
    lines = [line for line in path.read_text(encoding="utf-8").split("\n")
             if line and not line.startswith("#")]
    head = None
    for line in lines:
        if not line.startswith("  "):
            kind, _, rule = line.partition(" (")
            head = (kind, rule.rstrip(")"))
            continue
        field, _, value = line.strip().partition(" ")
        if field == "$":
            cwd = None
            if value.startswith("[cwd "):
                cwd, _, value = value[5:].partition("] ")
            command = _read_text(value)
        elif field == "message:":
            message = _read_text(value)
        elif field == "hint:":
            assert head is not None, path
            entries.append(Entry(head[0], head[1], command, cwd, message, _read_text(value)))
    return entries


def saved() -> dict[str, list[Entry]]:
    return {path.stem: parse(path) for path in sorted(DIRECTORY.glob("BP*.txt"))}


def commands() -> Iterator[tuple[str, str | None]]:
    """Every corpus case (in file order) and every rule's and spec's example."""
    from bash_policy.corpus import corpus_files, read_cases
    from bash_policy.judge.policy import Policy
    from bash_policy.judge.rules import load_all

    for path in corpus_files([ROOT / "corpora"]):
        for case in read_cases(path):
            if case.expect == "deny":
                yield case.command, (os.path.relpath(case.cwd, ROOT) if case.cwd is not None else None)
    for rule in sorted(load_all().values(), key=lambda r: r.name):
        for command in rule.deny:
            yield command, None
    policy = Policy.default()
    for name in policy.program_names():
        stack = [policy.spec(name)]
        while stack:
            spec = stack.pop()
            if spec is None:
                continue
            for command, _ in spec.examples_deny:
                yield command, None
            stack.extend(spec.subcommands[k] for k in sorted(spec.subcommands))


def found(command: str, cwd: str | None) -> list[Entry]:
    """The entries a command's denials make, in the order of the denials."""
    from bash_policy import check

    verdict = check(command, cwd=None if cwd is None else str(ROOT / cwd))
    return [Entry(d.kind, d.rule, command, cwd, _portable(d.message), _portable(d.hint))
            for d in verdict.denials if d.kind]


def _portable(text: str) -> str:
    """A text with the checkout's own path written `<root>`, so that the
    entries hold in any clone."""
    return text.replace(str(ROOT), "<root>")


def met() -> dict[str, list[Entry]]:
    """By kind, the entries of every command that yields it, in order."""
    by_kind: dict[str, list[Entry]] = {}
    seen: set[tuple[str, str | None]] = set()
    for command, cwd in commands():
        if (command, cwd) in seen:
            continue
        seen.add((command, cwd))
        for entry in found(command, cwd):
            by_kind.setdefault(entry.kind, []).append(entry)
    return by_kind


def rewrite() -> None:
    from bash_policy.judge.codes import CODES

    kept: dict[str, list[Entry]] = {}
    for entry in (e for entries in saved().values() for e in entries):
        now = [e for e in found(entry.command, entry.cwd) if e.kind == entry.kind]
        if now and len(kept.setdefault(entry.kind, [])) < PER_KIND:
            kept[entry.kind].append(now[0])
    codes: dict[str, list[Entry]] = {}
    from bash_policy import check

    for kind, entries in met().items():
        chosen = kept.get(kind, [])
        texts = {(e.message, e.hint) for e in chosen}
        for entry in entries:
            if len(chosen) >= PER_KIND:
                break
            if (entry.message, entry.hint) not in texts and entry.command not in {e.command for e in chosen}:
                chosen.append(entry)
                texts.add((entry.message, entry.hint))
        for entry in chosen:
            verdict = check(entry.command, cwd=None if entry.cwd is None else str(ROOT / entry.cwd))
            code = next(d.code for d in verdict.denials if d.kind == entry.kind).value
            codes.setdefault(code, []).append(entry)
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    for path in DIRECTORY.glob("BP*.txt"):
        if path.stem not in codes:
            path.unlink()
    for code in sorted(codes):
        assert code in CODES
        (DIRECTORY / f"{code}.txt").write_text(render(code, codes[code]), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    rewrite()
