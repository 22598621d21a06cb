"""What bash must do for a command the checker allowed, and how a run differs."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from bash_policy.judge.loops import counting_passes
from bash_policy.judge.verdict import Verdict
from bash_policy.read.model import (
    PROCESS_SUB,
    Arith,
    ArithFor,
    Case,
    Command,
    Cond,
    For,
    Group,
    If,
    List,
    Pipeline,
    Subshell,
    While,
    Word,
    children,
)

from .sandbox import FuzzRun


class OracleGap(Exception):
    """The checker reported something this oracle cannot predict bash's effect of."""


class _Break(Exception):
    """`break` leaving the loop around it (raised through the walk)."""


@dataclass
class Expected:
    """What bash must do for an allowed command when every program exits 0.

    `steps` in order; each a group of commands that may start in any order (a
    pipeline's members, or everything from a `&` or a process substitution
    on), each as the checker's words; `failures`: redirection errors bash
    reports on stderr.
    """

    steps: list[list[tuple]]
    failures: int
    source: str = ""  # the command (names of expansions are read from it)


_STD = {0: "stdin", 1: "stdout", 2: "stderr"}


class _Walk:
    """Walks the checker's tree (bash_policy.read.model) as bash runs it, every
    program exiting 0: `&&`/`||` look at the last pipeline's status (1 when a
    redirection failed, flipped by `!`); substitutions run before their
    command; groups and subshells run their lists; `if` takes the first branch
    whose test succeeds; `for` runs its body once per literal word; `case` the
    first arm whose literal pattern equals the word.  What the oracle cannot
    foretell raises OracleGap."""

    def __init__(self, cwd: Path):
        self.cwd = cwd
        self.expected = Expected([], 0)
        self.group: list[tuple] | None = None  # inside a pipeline: commands start in any order
        self.concurrent = False  # after a `&`: everything starts in any order

    def emit(self, words: tuple) -> None:
        steps = self.expected.steps
        if self.group is not None:
            self.group.append(words)
        elif self.concurrent and steps:
            steps[-1].append(words)
        else:
            steps.append([words])

    def background_from(self, start: int) -> None:
        steps = self.expected.steps
        if self.group is None:
            steps[start:] = [sum(steps[start:], [])] if steps[start:] else []
        self.concurrent = True

    def run_list(self, node: List, fds: dict) -> int:
        status = 0
        start = len(self.expected.steps)  # where the current and-or list began
        for k, item in enumerate(node.items):
            op = node.ops[k - 1] if k else ";"
            if op in (";", "\n", "&"):
                start = len(self.expected.steps)
            if not (op == "&&" and status != 0 or op == "||" and status == 0):
                status = self.pipeline(item, fds)
            if k < len(node.ops) and node.ops[k] == "&":
                self.background_from(start)
                status = 0
        return status

    def pipeline(self, node: Pipeline, fds: dict) -> int:
        status = 0
        if len(node.commands) == 1:
            try:
                status = self.unit(node.commands[0], fds, False)
            except _Break:
                if isinstance(node.commands[0], Subshell):
                    raise OracleGap("a break inside a subshell") from None
                raise
        else:
            outer = self.group
            if outer is None:
                self.group = []
            for i, member in enumerate(node.commands):
                piped_stderr = i < len(node.stderr) and node.stderr[i]
                member_fds = dict(fds)
                if i + 1 < len(node.commands):
                    member_fds[1] = "pipe"
                if i:
                    member_fds[0] = "pipe"
                status = self.unit(member, member_fds, piped_stderr)
            if outer is None:
                group, self.group = self.group, None
                if group:
                    if self.concurrent and self.expected.steps:
                        self.expected.steps[-1].extend(group)
                    else:
                        self.expected.steps.append(group)
        return 1 - status if node.negated else status

    def substitutions(self, node, fds: dict) -> None:
        for child in children(node):
            if isinstance(child, List):
                self.run_list(child, {**fds, 1: "pipe"})

    def redirected(self, node, fds: dict, piped_stderr: bool) -> dict | None:
        """The descriptors after the node's redirections, or None if one fails."""
        failed, reported, after = _redirect_failure(node.redirects, self.cwd, piped_stderr, fds)
        self.expected.failures += reported
        return None if failed else after

    def unit(self, node, fds: dict, piped_stderr: bool) -> int:
        if any(e.kind == PROCESS_SUB for w in _words_of(node) for e in w.expansions):
            # <(…) runs alongside its command and may start after it
            self.background_from(len(self.expected.steps))
        if isinstance(node, Command):
            self.substitutions(node, fds)
            if self.redirected(node, fds, piped_stderr) is None:
                return 1
            words = _timed_command(node.words)
            if words and words[0].value == "break":  # bash's own, never shadowed by a stub
                raise _Break
            if words:
                self.emit(words)
            return 0
        if isinstance(node, Cond):
            return 0 if self.redirected(node, fds, piped_stderr) is not None else 1
        if isinstance(node, Arith):
            raise OracleGap("(( )) whose status the oracle does not compute")
        inner = self.redirected(node, fds, piped_stderr)
        if inner is None:
            return 1
        if isinstance(node, (Group, Subshell)):
            return self.run_list(node.body, inner)
        if isinstance(node, If):
            for test, body in node.branches:
                if self.run_list(test, inner) == 0:
                    return self.run_list(body, inner)
            return self.run_list(node.orelse, inner) if node.orelse is not None else 0
        if isinstance(node, For):
            if node.words is None or any(w.value is None for w in node.words):
                raise OracleGap("for loop over words the oracle cannot count")
            status = 0
            try:
                for _ in node.words:
                    status = self.run_list(node.body, inner)
            except _Break:
                return 0
            return status
        if isinstance(node, Case):
            if node.word.value is None:
                raise OracleGap("case of an unknown word")
            for arm in node.arms:
                for pattern in arm.patterns:
                    if pattern.value is None:
                        raise OracleGap("case with a pattern the oracle does not match")
                    if pattern.value == node.word.value:
                        if arm.terminator not in (";;", ""):
                            raise OracleGap(f"case arm ending in {arm.terminator}")
                        return self.run_list(arm.body, inner) if arm.body is not None else 0
            return 0
        if isinstance(node, ArithFor):
            counted = counting_passes(node)
            if isinstance(counted, str):
                raise OracleGap(f"for (( )) the oracle cannot count: {counted}")
            status = 0
            try:
                for _ in counted[1]:
                    status = self.run_list(node.body, inner)
            except _Break:
                return 0
            return status
        if isinstance(node, While):
            if self.run_list(node.test, inner) ^ node.until == 0:
                try:
                    self.run_list(node.body, inner)
                except _Break:
                    return 0
                raise OracleGap("a loop whose test succeeds runs forever with the stubs")
            return 0
        raise OracleGap(f"unknown node {type(node).__name__}")


def _words_of(node) -> tuple[Word, ...]:
    words = tuple(getattr(node, "words", None) or ())
    words += tuple(r.target for r in getattr(node, "redirects", ()) if r.target is not None)
    return words + tuple(a.value for a in getattr(node, "assignments", ()))


def expected_runs(verdict: Verdict, cwd: Path) -> Expected:
    """What bash must run for an allowed verdict, from the exact reader's tree."""
    if verdict.script is None or verdict.script.body is None:
        if verdict.segments:
            raise OracleGap("an allowed verdict with segments and no tree")
        return Expected([], 0)
    walk = _Walk(cwd)
    walk.expected.source = verdict.command
    walk.run_list(verdict.script.body, dict(_STD))
    return walk.expected


def _timed_command(words: tuple) -> tuple:
    """The command the checker takes the `time` program to run: its operand
    after `-p` and `--` (bash's keyword is `Pipeline.timed`; /usr/bin/time
    runs its operand too)."""
    if not words or words[0].value != "time":
        return words
    rest = words[1:]
    while rest and rest[0].value is not None and re.fullmatch(r"-p+", rest[0].value):
        rest = rest[1:]
    if rest and rest[0].value == "--":
        rest = rest[1:]
    return rest


def _redirect_failure(redirects, cwd: Path, piped_stderr: bool,
                      fds: dict | None = None) -> tuple[bool, bool, dict]:
    """Whether a redirection fails (input from a missing file, a copy of a
    descriptor that is not open, `N>&FILE`), whether bash's message about it
    reaches the original stderr, and the descriptors after them, following
    each descriptor left to right; `|&` adds a `2>&1` after the command's own
    redirections."""
    fds = dict(_STD if fds is None else fds)

    def fail() -> tuple[bool, bool, dict]:
        return True, fds.get(2) == "stderr", fds

    for r in sorted(redirects, key=lambda r: r.span.start):  # bash's order
        op = r.op
        target = r.target.value if r.target is not None else None
        fd = r.fd if r.fd is not None else (0 if op.startswith("<") else 1)
        if op == "<":
            if target is None:
                raise OracleGap(f"input redirection from an unknown word: {r!r}")
            if not target or not (cwd / target).exists():
                return fail()
            fds[fd] = "file"
        elif op in (">", ">>", ">|", "<>", "<<", "<<-", "<<<"):
            fds[fd] = "file"
        elif op in ("&>", "&>>") or op == ">&" and fd == 1 and target is not None \
                and not re.fullmatch(r"\d+-?|-", target):
            fds[1] = fds[2] = "file"  # `>&FILE` and `1>&FILE` are `&>FILE`
        elif op in (">&-", "<&-") or op in (">&", "<&") and target == "-":
            fds.pop(fd, None)
        elif op in (">&", "<&") and target is not None and re.fullmatch(r"\d+-?", target):
            source = int(target.rstrip("-"))  # `N>&M-` moves M to N; `N>&N` does nothing
            if source == fd:
                continue
            if source not in fds:
                return fail()
            fds[fd] = fds[source]
            if target.endswith("-") and source != fd:
                del fds[source]
        elif op in (">&", "<&") and target is not None:  # "ambiguous redirect"
            return fail()
        else:
            raise OracleGap(f"unknown redirection {r!r}")
    if piped_stderr:
        if 1 not in fds:
            return fail()
        fds[2] = fds[1]
    return False, False, fds


# -- comparing a run with the expectation --------------------------------------

# Order of severity: a finding is named after its first problem.  "bash-crash" is
# bash's own bug, not the checker's: bash 5.2.15 reading a script on stdin
# crashes in the child for `cat <&- 5<in.txt`, before the program starts.
CATEGORIES = ("hang", "changed", "extra-program", "missing-program", "argv", "stderr",
              "stdin-script", "bash-crash")
_BASH_CRASH = re.compile(r"^/bin/bash: line \d+: +\d+ Segmentation fault", re.M)
# A builtin's failed `N>&M-` is reported twice: bash first fails to save the
# descriptor it would restore (`: 1>&- 2>&1-`, bash 5.2.15, fuzzer seed 2028).
_FAILURE = re.compile(
    r"^(?:/bin/bash: redirection error: cannot duplicate fd: Bad file descriptor\n)?"
    r"/bin/bash: line \d+: (?:(?!\n/bin/bash: ).)*?: "
    r"(?:No such file or directory|Bad file descriptor|ambiguous redirect)\n", re.M | re.S)
# The `time` keyword's report: TIMEFORMAT is empty, but `-p` and `--` print it.
_TIMING = re.compile(r"^real \d+\.\d+\nuser \d+\.\d+\nsys \d+\.\d+\n", re.M)


@dataclass
class Problem:
    category: str
    message: str


def run_problems(expected: Expected, run: FuzzRun, cwd: Path,
                 script: str | None = None, reads_stdin=None) -> list[Problem]:
    """How a run differs from what the checker's reading says bash must do
    ([] if it does not).  With `script` (bash read it on stdin), a program
    whose stdin was the script while code was left in it is a problem too: a
    program that reads its input would swallow the rest of the script;
    `reads_stdin(argv)`, if given, says whether the program may read it (the
    checker's own judgement: a program that never reads stdin is harmless
    there, and the stubs cannot tell)."""
    # bash 5.2.15 reading a script on stdin segfaults when a command closes
    # descriptor 0 and a later redirection opens a file (`<&- 1</dev/null : a`,
    # fuzzer seed 2028): what bash then did is not the checker's to foresee
    if run.crashed or _BASH_CRASH.search(run.stderr):
        return [Problem("bash-crash", f"bash said {run.stderr!r}")]
    problems = []
    if run.timed_out:
        problems.append(Problem("hang", "bash did not finish"))
    if run.changes:
        problems.append(Problem("changed", "; ".join(run.changes)))
    argvs = [_timed_run(argv) for _, argv in run.records]
    want = sum(len(group) for group in expected.steps)
    start = 0
    for group in expected.steps:
        if not _group_fits(group, argvs[start:start + len(group)], cwd, expected.source):
            break
        start += len(group)
    if start != len(argvs) or start != want:
        category = ("extra-program" if len(argvs) > want else
                    "missing-program" if len(argvs) < want else "argv")
        checker = [[w.value if w.value is not None else w.text for w in words]
                   for group in expected.steps for words in group]
        problems.append(Problem(category, f"checker read {checker!r}, bash ran {argvs!r}"))
    rest, failures = _FAILURE.subn("", _TIMING.sub("", run.stderr))
    if rest or failures != expected.failures:
        problems.append(Problem("stderr", f"bash said {run.stderr!r} (expected "
                                          f"{expected.failures} redirection errors)"))
    if script is not None:
        data = script.encode("utf-8", "surrogateescape")
        for pos, argv in run.records:
            if pos is not None and _holds_code(data[pos:]) and (
                    reads_stdin is None or reads_stdin(argv)):
                problems.append(Problem(
                    "stdin-script", f"{argv!r} ran with the rest of the script on stdin: "
                                    f"{data[pos:].decode('utf-8', 'replace')!r}"))
                break
    problems.sort(key=lambda p: CATEGORIES.index(p.category))
    return problems


def _timed_run(argv: tuple[str, ...]) -> tuple[str, ...]:
    """What the `time` program (GNU time, whose stub logged this) runs: its
    operand after `-p`/`--portability` and `--`; any other option stays, to
    differ from what the checker read."""
    if argv[:1] != ("time",):
        return argv
    rest = argv[1:]
    while rest[:1] in (("-p",), ("--portability",)):
        rest = rest[1:]
    return rest[1:] if rest[:1] == ("--",) else rest


def _holds_code(rest: bytes) -> bool:
    return any(line.strip() and not line.strip().startswith(b"#") for line in rest.split(b"\n"))


def _group_fits(group: list[tuple], argvs: list[tuple[str, ...]], cwd: Path,
               source: str = "") -> bool:
    """Whether the programs bash started match the group's commands, in any order."""
    if len(argvs) != len(group):
        return False
    fit = [[_argv_fits(words, argv, cwd, source) for argv in argvs] for words in group]
    owner: dict[int, int] = {}  # argv index -> command index (a bipartite matching)

    def place(i: int, seen: set[int]) -> bool:
        for j, ok in enumerate(fit[i]):
            if ok and j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(place(i, set()) for i in range(len(group)))


def _argv_fits(words: tuple, argv: tuple[str, ...], cwd: Path, source: str = "") -> bool:
    """Whether bash's argv is what the words give.  A word the checker knows
    must be exactly that argument.  A glob or `~` must become one argument
    starting with the word's literal prefix (the glob unexpanded, or `~`
    replaced), or several existing paths that each do; another word that
    stays one word (a quoted expansion) one argument with its prefix; a word
    bash may split (`$x`, `$(…)`, braces) any number of arguments."""

    from bash_policy.judge.shapes import single

    @functools.cache
    def fits(w: int, a: int) -> bool:
        if w == len(words):
            return a == len(argv)
        word = words[w]
        if word.value is not None:
            return a < len(argv) and argv[a] == word.value and fits(w + 1, a + 1)
        if word.pathname_only:
            for end in range(a + 1, len(argv) + 1):
                arg = argv[end - 1]
                if not arg.startswith(word.prefix):
                    return False
                if end - a > 1 and not all(os.path.lexists(cwd / x) for x in argv[a:end]):
                    return False
                if fits(w + 1, end):
                    return True
            return False
        if single(word, source, {}):
            return a < len(argv) and argv[a].startswith(word.prefix) and fits(w + 1, a + 1)
        return any(fits(w + 1, end) for end in range(a, len(argv) + 1))

    return fits(0, 0)
