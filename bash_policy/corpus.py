"""Fixture corpora: one case a line, expected verdict first.

    # a comment
    allow              rg -n "foo bar" src | head -20
    deny  BP400        rg --pre cat x
    deny  BP500,BP200  rg $(id) > out
    allow              json:"cat <<'EOF'\\nhi\\nEOF"

A case is `allow` or `deny`, optionally the codes the denial must include,
then the command.  A command with a newline is written `json:` followed by a
JSON string.  Lines `@cwd DIR` set the working directory (relative to the
corpus file) for the cases below them; `@cwd` alone clears it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from .judge.engine import check
from .judge.policy import Policy
from .judge.verdict import Verdict

_CASE = re.compile(r"(allow|deny)(?:\s+(BP\d{3}(?:,BP\d{3})*))?\s+(\S.*)")


class CorpusError(ValueError):
    pass


@dataclass(frozen=True)
class Case:
    path: str
    line: int
    expect: str
    codes: tuple[str, ...]
    command: str
    cwd: str | None = None


@dataclass(frozen=True)
class Result:
    case: Case
    verdict: Verdict

    @property
    def ok(self) -> bool:
        if self.verdict.allowed != (self.case.expect == "allow"):
            return False
        got = {d.code for d in self.verdict.denials}
        return all(code in got for code in self.case.codes)


def read_cases(path: str | Path) -> Iterator[Case]:
    path = Path(path)
    cwd: str | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@cwd"):
            arg = line[4:].strip()
            cwd = str((path.parent / arg).resolve()) if arg else None
            continue
        match = _CASE.fullmatch(line)
        if not match:
            raise CorpusError(f"{path}:{number}: expected 'allow|deny [CODES] command'")
        command = match[3]
        if command.startswith("json:"):
            try:
                command = json.loads(command[5:])
            except json.JSONDecodeError as error:
                raise CorpusError(f"{path}:{number}: bad json: command: {error}") from None
            if not isinstance(command, str):
                raise CorpusError(f"{path}:{number}: json: must hold a string")
        codes = tuple(match[2].split(",")) if match[2] else ()
        yield Case(str(path), number, match[1], codes, command, cwd)


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(sorted(p.rglob("*.txt")) if p.is_dir() else [p])
    return files


def run(paths: Iterable[str | Path], policy: Policy | None = None) -> list[Result]:
    results = []
    for file in corpus_files(paths):
        for case in read_cases(file):
            results.append(Result(case, check(case.command, policy, cwd=case.cwd)))
    return results
