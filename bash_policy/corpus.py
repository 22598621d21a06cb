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
from pathlib import Path

from .judge.codes import CODES
from .judge.engine import check
from .judge.policy import Policy
from .judge.verdict import Verdict
from .records import dataclass

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


@dataclass(frozen=True)
class Problem:
    """A corpus line (or file) that is not a case: reported with its place, never fatal."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass
class Report:
    """A corpus run: every case's result and every problem, in file order."""

    results: list[Result]
    problems: list[Problem]

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if not r.ok]


def parse(path: str | Path) -> tuple[list[Case], list[Problem]]:
    """The cases of one corpus file and its malformed lines (all of them)."""
    path = Path(path)
    cases: list[Case] = []
    problems: list[Problem] = []
    cwd: str | None = None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return [], [Problem(str(path), None, "no such file")]
    except (OSError, UnicodeDecodeError) as error:
        return [], [Problem(str(path), None, f"cannot read: {error}")]
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@cwd"):
            arg = line[4:].strip()
            cwd = str((path.parent / arg).resolve()) if arg else None
            continue
        case = _case(path, number, line, cwd)
        if isinstance(case, str):
            problems.append(Problem(str(path), number, case))
        else:
            cases.append(case)
    return cases, problems


def _case(path: Path, number: int, line: str, cwd: str | None) -> Case | str:
    """The case a line holds, or what is wrong with it."""
    match = _CASE.fullmatch(line)
    if not match:
        return "expected 'allow|deny [CODES] command'"
    expect, command = match[1], match[2]
    codes: tuple[str, ...] = ()
    first, *rest = command.split(None, 1)
    if _CODE_LIKE.fullmatch(first):
        codes = tuple(first.split(","))
        for code in codes:
            if code not in CODES:
                known = code.upper() in CODES
                return (f"{code!r} is not a code" + (f" (write {code.upper()})" if known else "")
                        + "; `bash-policy codes` lists them")
        if expect == "allow":
            return "an allow case takes no codes"
        command = rest[0] if rest else ""
        if not command:
            return "no command after the codes"
    if command.startswith("json:"):
        try:
            command = json.loads(command[5:])
        except json.JSONDecodeError as error:
            return f"bad json: command: {error}"
        if not isinstance(command, str):
            return "json: must hold a string"
    return Case(str(path), number, expect, codes, command, cwd)


def read_cases(path: str | Path) -> Iterator[Case]:
    """The cases of one file; the first malformed line raises CorpusError
    (for callers that must not run a corpus they cannot read whole)."""
    cases, problems = parse(path)
    if problems:
        raise CorpusError(str(problems[0]))
    yield from cases


def _files(paths: Iterable[str | Path], problems: list[Problem]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.rglob("*.txt"))
            if not found:
                problems.append(Problem(str(p), None, "no corpus files (*.txt) in this directory"))
            files.extend(found)
        else:
            files.append(p)
    return files


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    """The corpus files `paths` stand for; a directory without any raises CorpusError."""
    problems: list[Problem] = []
    files = _files(paths, problems)
    if problems:
        raise CorpusError(str(problems[0]))
    return files


def run(paths: Iterable[str | Path], policy: Policy | None = None) -> Report:
    """Check every case that parses; collect every problem on the way."""
    problems: list[Problem] = []
    results = []
    for file in _files(paths, problems):
        cases, found = parse(file)
        problems.extend(found)
        for case in cases:
            results.append(Result(case, check(case.command, policy, cwd=case.cwd)))
    return Report(results, problems)
