"""Variables the script sets and uses (judge/values.py, judge/expand.py) against real bash.

Generated scripts assign shell-local names known values under every kind
of control flow (`&&`, `||`, `if`, subshells, groups, pipelines, loops,
`case`) and then pass expansions of them (`"$x"`, `$x`, `${x:-w}`,
`${x:+w}`, `${#x}`, arrays' `"${a[@]}"`, `${a[*]}`, `${a[1]}`,
`${#a[@]}`) to an argv-logging stub.  Wherever the checker replaced a
command's words by values, every run of that command under bash 5.2 must
have received exactly those words.  The unit suite runs 600 scripts; the
oracle run (`-m oracle`) 20,000 (BASH_POLICY_VALUE_SCRIPTS).
"""

from __future__ import annotations

import os
import random
import subprocess
from collections import defaultdict

import pytest

from bash_policy import check
from bash_policy.judge import argv as argv_reader
from bash_policy.judge import values

_NAMES = ["x", "y"]
_SCALARS = ["src", "'a b'", '""', "--pre=sh", "'*.py'", "-n", "' lead'", "'x  y'", "a:b", "'a\tb'",
            "$x", '"$y"', "${x:-d}", "1", "''"]
_ARRAYS = ["(a 'b c' '')", "()", "(one)", "(\"$x\" z)", "($y)", "(--v w)", "({a,b}c d)", "(*.py)",
           "(\"${y:-e f}\" ${x+g})"]
# Statements that change variables other than by assigning them plainly.
_OTHERS = ["read -r x <<< 'r v'", "x=tmp true", "read -r y < /dev/null", "for x in p q; do :; done"]
_WRAPS = ["{}", "true && {}", "false && {}", "false || {}", "true || {}", "if true; then {}; fi",
          "if false; then {}; else {}; fi", "( {} )", "{{ {}; }}", "true | {}", "{} | true",
          "for i in 1 2; do {}; done", "for i in; do {}; done", "case a in a) {};; esac",
          "case a in b) {};; esac", "while false; do {}; done"]
_USES = ['"$x"', "$x", '"${x:-d}"', "${x:-d e}", '"${x:+w}"', "${x+w}", '"${#x}"', '"${arr[@]}"',
         "${arr[@]}", '"${arr[*]}"', '"${arr[1]}"', '"${#arr[@]}"', "x$x", '"$x$y"', "''$x", "$x$y",
         '"${y-u}"', "${y:-}", "$arr", '"${#arr}"', "${arr[0]}"]


def _script(rng: random.Random, tag: int) -> str:
    statements = []
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.1:
            assignment = rng.choice(_OTHERS)
        elif rng.random() < 0.25:
            assignment = f"arr={rng.choice(_ARRAYS)}"
        else:
            assignment = f"{rng.choice(_NAMES)}={rng.choice(_SCALARS)}"
        wrap = rng.choice(_WRAPS) if rng.random() < 0.5 else "{}"
        statements.append(wrap.replace("{}", assignment).replace("{{", "{").replace("}}", "}"))
    for k in range(rng.randint(1, 2)):
        uses = " ".join(rng.choices(_USES, k=rng.randint(1, 3)))
        statements.append(f"stub U{tag}_{k} {uses}")
    out = statements[0]
    for statement in statements[1:]:
        out += rng.choice(["; ", " && ", "\n"]) + statement
    return out


def _bash_runs(scripts: list[str], tmp_path) -> dict[str, list[tuple[str, ...]]]:
    """Each marker's argv, once per run, from one bash running every script in a subshell."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "log"
    stub = stubs / "stub"
    stub.write_text("#!/bin/sh\nprintf '%s\\0' \"$@\" >> \"$LOG\"\nprintf '\\001' >> \"$LOG\"\n")
    stub.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    text = "".join(f"(\n{s}\n)\n" for s in scripts)
    subprocess.run(["bash"], input=text.encode(), cwd=work, capture_output=True, timeout=300,
                   env={"PATH": f"{stubs}:/usr/bin:/bin", "LOG": str(log), "LC_ALL": "C.UTF-8"})
    runs: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for record in log.read_bytes().decode().split("\1")[:-1]:
        argv = tuple(record.split("\0")[:-1])
        runs[argv[0]].append(argv[1:])
    return runs


def _checker_readings(scripts: list[str], monkeypatch) -> dict[str, tuple]:
    """The words the engine judged for each stub command (None: computed)."""
    seen: dict[str, tuple] = {}
    original = argv_reader.check_argv

    def recording(words, ctx, appended=None):
        if words and words[0].value == "stub" and len(words) > 1:
            seen[words[1].value] = tuple(w.value for w in words[2:])
        return original(words, ctx, appended)

    monkeypatch.setattr(argv_reader, "check_argv", recording)
    for script in scripts:
        check(script)
    return seen


def _compare(n: int, seed: int, tmp_path, monkeypatch) -> tuple[list, int]:
    rng = random.Random(seed)
    scripts = [_script(rng, tag) for tag in range(n)]
    runs = _bash_runs(scripts, tmp_path)
    readings = _checker_readings(scripts, monkeypatch)
    wrong, known = [], 0
    for marker, words in readings.items():
        if any(w is None for w in words):
            continue  # computed: judged by shapes, not compared here
        known += 1
        for argv in runs.get(marker, []):
            if argv != words:
                script = scripts[int(marker[1:].split("_")[0])]
                wrong.append((script, words, argv))
    return wrong, known


def test_generated_scripts_pass_what_bash_passes(tmp_path, monkeypatch):
    wrong, known = _compare(600, 1, tmp_path, monkeypatch)
    assert wrong == []
    assert known > 80  # the comparison is not vacuous


@pytest.mark.oracle
def test_many_generated_scripts_pass_what_bash_passes(tmp_path, monkeypatch):
    n = int(os.environ.get("BASH_POLICY_VALUE_SCRIPTS", "20000"))
    wrong, known = _compare(n, 2, tmp_path, monkeypatch)
    assert wrong == []
    assert known > n // 10


def test_join_keeps_only_what_every_path_agrees_on():
    a = {"x": "1", "y": "2", "z": ("a",)}
    b = {"x": "1", "y": "3", "z": ("a",)}
    joined = values.join(a, b)
    assert joined["x"] == "1" and joined["z"] == ("a",)
    assert joined["y"] is values.UNKNOWN
    assert values.join({"x": "1"}, {})["x"] is values.UNKNOWN  # unset on one path: the environment's


def test_names_a_subtree_may_assign():
    from bash_policy.read import exact
    body = exact.parse("x=1; read -r y z; for w in a; do v=2; done; (u=1)").body
    assert {"x", "y", "z", "w", "v", "u"} <= values.assigned(body)


@pytest.mark.parametrize("name, tracked", [("x", True), ("files", True), ("X", False), ("PATH", False),
                                           ("_x", False), ("_", False), ("http_proxy", False)])
def test_tracked_names(name, tracked):
    assert values.tracked(name) is tracked


def test_scripts_without_assignments_are_not_walked():
    assert values.known_values(None, (), None, None) == {}
