"""Machine-applicable fixes (judge/fixes.py): each rewrite passes, resolves its
denial, and a safe one means what the command meant.

How "safe" is established: every safe fix over the corpora is run with real
bash, original and rewritten, where every whitelisted program is a stub
that logs its argv (tests/oracle_support.py), and bash must pass the same
argv to the same programs but for the `--` words the fix inserts.  A fix
that inserts `--` runs in a directory of ordinary file names (the globs
expand); one that quotes a flag's pattern runs in an empty one, where bash
passes the pattern unexpanded, which is what the quoted form passes always.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from oracle_support import STUB, StubBin

from bash_policy import check
from bash_policy.corpus import corpus_files, read_cases
from bash_policy.judge.policy import Policy
from bash_policy.judge.verdict import SAFE, UNSAFE, Fix

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
CASES = [case for f in corpus_files([CORPORA]) for case in read_cases(f)]
DENIED = [(case, v) for case in CASES if not (v := check(case.command, cwd=case.cwd)).allowed]
FIXED = [(case, v) for case, v in DENIED if v.fix is not None]


def _key(denial):
    return denial.code, denial.rule


def test_the_corpora_have_fixes_of_both_kinds():
    kinds = Counter(v.fix.applicability for _, v in FIXED)
    assert kinds[SAFE] >= 20 and kinds[UNSAFE] >= 100, kinds


def _id(x) -> str:
    return f"{Path(x.path).name}:{x.line}" if hasattr(x, "line") else ""


@pytest.mark.parametrize("case,verdict", FIXED, ids=_id)
def test_every_rewritten_command_is_allowed(case, verdict):
    """Checked in full (both readings, cross-check included): the engine
    judged the rewrite with the exact reader only."""
    fix = verdict.fix
    assert fix.command == fix.apply(case.command) != case.command
    again = check(fix.command, cwd=case.cwd)
    assert again.allowed, (fix.command, [d.message for d in again.denials])


def test_each_denials_fix_resolves_that_denial_and_adds_none():
    checked = 0
    for case, verdict in DENIED:
        everything = Counter(map(_key, verdict.denials))
        for denial in verdict.denials:
            if denial.fix is None:
                continue
            after = Counter(map(_key, check(denial.fix.apply(case.command), cwd=case.cwd).denials))
            expected = everything - Counter([_key(denial)])
            assert all(n <= expected[k] for k, n in after.items()), (case.command, denial.code)
            checked += 1
    assert checked > 300


# -- each kind of fix, and where there is none ------------------------------------

@pytest.mark.parametrize("command,rewritten,applicability", [
    ("rg foo *.py", "rg foo -- *.py", SAFE),                      # `--` before the glob
    ("file *", "file -- *", SAFE),
    ("rg foo *.py *.txt", "rg foo -- *.py *.txt", SAFE),          # one `--` for both globs
    ("rg -n foo $(git ls-files)", "rg -n foo -- $(git ls-files)", SAFE),
    ("find . -name '*.py' | xargs rg -n foo", "find . -name '*.py' | xargs rg -n -- foo", SAFE),
    ("find . | xargs file", "find . | xargs file --", SAFE),      # no operand: `--` last
    ("rg foo $PATTERN", "rg foo -- $PATTERN", UNSAFE),            # a variable may hold flags on purpose
    ("rg foo -*.py", "rg foo -- -*.py", UNSAFE),                  # names that always start with `-`
    ("rg foo *.py -n", "rg foo ./*.py -n", UNSAFE),               # a flag follows: `--` would eat it
    ("rg -g *.py foo", "rg -g '*.py' foo", SAFE),                 # a flag's pattern is quoted
    ("grep -r --include *.py foo .", "grep -r --include '*.py' foo .", SAFE),
    ("find . -name *.py", "find . -name '*.py'", SAFE),
    ("grep -Rn TODO src", "grep -D skip -Rn TODO src", UNSAFE),  # another argv: -R opens FIFOs it meets
    ("rg foo > out", "rg foo", UNSAFE),                           # a write redirection is dropped
    ("> out rg foo", "rg foo", UNSAFE),
    ("rg foo 2> err.log | head", "rg foo | head", UNSAFE),
    ("sed -i 's/a/b/' f", "sed 's/a/b/' f", UNSAFE),              # a denied flag its spec says to drop
    ("sort -o sorted.txt f", "sort f", UNSAFE),                   # with its value
    ("tail -f app.log", "tail app.log", UNSAFE),
    ("rg --pre cat x", "rg x", UNSAFE),
    ("rg foo *.py > out", "rg foo -- *.py", UNSAFE),              # together: unsafe if any part is
])
def test_fix(command, rewritten, applicability):
    fix = check(command).fix
    assert fix is not None and (fix.command, fix.applicability) == (rewritten, applicability)


@pytest.mark.parametrize("command", [
    "md5sum -c sums.md5",       # the spec's fix is another command: dropping -c is another mode
    "awk -f prog.awk data",     # dropping -f would make `data` the program
    "tail -fn 5 log",           # -f inside a cluster: dropping the word would drop -n
])
def test_no_fix_where_the_rewrite_would_mean_something_else(command):
    verdict = check(command)
    assert not verdict.allowed and verdict.fix is None
    assert all(d.fix is None for d in verdict.denials)


def test_a_fix_that_does_not_pass_is_not_offered():
    verdict = check("rg foo *.py | sh")  # the glob has a fix, sh has none
    assert verdict.fix is None
    assert [d.fix is not None for d in verdict.denials] == [True, False]
    verdict = check("python3 -c 'print(1)'")  # dropping -c leaves python3 reading its stdin
    assert verdict.fix is None and all(d.fix is None for d in verdict.denials)


def test_spans_count_code_points():
    fix = check("rg 日本 *.py").fix
    assert fix.edits[0].span.start == len("rg 日本 ") and fix.command == "rg 日本 -- *.py"


def test_fix_json_form():
    data = check("rg foo *.py").to_dict()
    assert data["fix"] == {"edits": [{"span": [7, 7], "replacement": "-- "}],
                           "applicability": "safe", "command": "rg foo -- *.py"}
    assert data["denials"][0]["fix"] == {"edits": [{"span": [7, 7], "replacement": "-- "}],
                                         "applicability": "safe"}
    assert check("ls").to_dict()["fix"] is None


def test_apply_orders_edits():
    from bash_policy.judge.verdict import Edit
    from bash_policy.read.model import Span

    fix = Fix((Edit(Span(6, 8), ""), Edit(Span(0, 0), "x ")), SAFE)
    assert fix.apply("abcdefgh") == "x abcdef"


# -- safe means the same argv, by real bash ---------------------------------------

POLICY = Policy.from_mapping({"stdin_script": False})
# list.txt: corpora/descriptors.txt feeds xargs from it (a missing input would
# make bash skip the command, and the fix would run nothing).
_FILES = ("a.py", "b.py", "c.txt", "d.ts", "notes.md", "x.json", "src/m.py", "list.txt")


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    root = tmp_path_factory.mktemp("fix-stubs")
    # Each stub also prints two file names, so that `$(…)` yields operands.
    names = [n for n in POLICY.program_names() if POLICY.spec(n).denied is None]  # not `.`
    return StubBin(root, names, stub=STUB + "echo a.py c.txt\n")


def _argv(stubs, command: str, cwd: Path, log: Path) -> Counter:
    run = stubs.run(command, cwd, log)
    return Counter(run.records)


def _without_dashes(records: Counter) -> tuple[Counter, int]:
    out: Counter = Counter()
    dashes = 0
    for record, n in records.items():
        out[tuple(w for w in record if w != "--")] += n
        dashes += n * record.count("--")
    return out, dashes


SAFE_FIXED = [(case, v) for case, v in FIXED if v.fix.applicability == SAFE] + [
    (None, check(c)) for c in ("rg foo *.py *.txt", "find . | xargs file", "rg -n foo $(git ls-files)")]


@pytest.mark.parametrize("case,verdict", SAFE_FIXED, ids=lambda x: getattr(x, "command", ""))
def test_a_safe_fix_passes_the_same_argv(case, verdict, stubs, tmp_path):
    fix = verdict.fix
    quoting = any(e.replacement.strip() != "--" for e in fix.edits)
    work = tmp_path / "work"
    work.mkdir()
    if not quoting:
        for name in _FILES:
            (work / name).parent.mkdir(exist_ok=True)
            (work / name).write_text("x\n")
    before = _argv(stubs, verdict.command, work, tmp_path / "before")
    after = _argv(stubs, fix.command, work, tmp_path / "after")
    assert before, "nothing ran"
    (b, b_dashes), (a, a_dashes) = _without_dashes(before), _without_dashes(after)
    assert a == b
    inserted = sum(e.replacement.strip() == "--" for e in fix.edits)
    assert a_dashes - b_dashes >= inserted  # a loop or xargs may run the inserted `--` more than once
