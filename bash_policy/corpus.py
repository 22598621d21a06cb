"""Fixture corpora: one case a line, expected verdict first.

    # a comment
    allow              rg -n "foo bar" src | head -20
    deny  BP400        rg --pre cat x
    deny  BP500,BP200  rg $(id) > out
    allow              json:"cat <<'EOF'\\nhi\\nEOF"

A case is `allow` or `deny`, then for `deny` optionally the codes the
denial must include, then the command.  A first word that looks like a code
must be one (`bp400` or `BP999` is an error, not a command that happens to
be denied).  A command with a newline is written `json:` followed by a JSON
string.  Lines `@cwd DIR` set the working directory (relative to the corpus
file) for the cases below them; `@cwd` alone clears it.  A directory stands
for every `*.txt` file under it, recursively, in name order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .judge.codes import CODES
from .judge.engine import check
from .judge.policy import Policy
from .judge.verdict import Verdict

_CASE = re.compile(r"(allow|deny)\s+(\S.*)")
_CODE_LIKE = re.compile(r"(?i)bp\d+(?:,\S*)?")


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
        expect, command = match[1], match[2]
        codes: tuple[str, ...] = ()
        first, *rest = command.split(None, 1)
        if _CODE_LIKE.fullmatch(first):
            codes = tuple(first.split(","))
            for code in codes:
                if code not in CODES:
                    known = code.upper() in CODES
                    raise CorpusError(f"{path}:{number}: {code!r} is not a code"
                                      + (f" (write {code.upper()})" if known else "")
                                      + "; `bash-policy codes` lists them")
            if expect == "allow":
                raise CorpusError(f"{path}:{number}: an allow case takes no codes")
            command = rest[0] if rest else ""
            if not command:
                raise CorpusError(f"{path}:{number}: no command after the codes")
        if command.startswith("json:"):
            try:
                command = json.loads(command[5:])
            except json.JSONDecodeError as error:
                raise CorpusError(f"{path}:{number}: bad json: command: {error}") from None
            if not isinstance(command, str):
                raise CorpusError(f"{path}:{number}: json: must hold a string")
        yield Case(str(path), number, expect, codes, command, cwd)


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.rglob("*.txt"))
            if not found:
                raise CorpusError(f"{p}: no corpus files (*.txt) in this directory")
            files.extend(found)
        else:
            files.append(p)
    return files


def run(paths: Iterable[str | Path], policy: Policy | None = None) -> list[Result]:
    results = []
    for file in corpus_files(paths):
        for case in read_cases(file):
            results.append(Result(case, check(case.command, policy, cwd=case.cwd)))
    return results
