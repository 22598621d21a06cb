import io
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bash_policy import check
from bash_policy.integrations.serve import Policies, answer, serve


def exchange(*lines: str, policies=None) -> list[dict]:
    out = io.StringIO()
    serve(io.StringIO("".join(line + "\n" for line in lines)), out, policies or Policies())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_verdicts_have_the_check_json_schema_and_keep_ids():
    responses = exchange(json.dumps({"id": 1, "command": "rg -n foo src"}),
                         json.dumps({"id": "b", "command": "rg --pre cat x", "cwd": "/tmp"}))
    assert [r["id"] for r in responses] == [1, "b"]
    assert responses[0]["verdict"] == check("rg -n foo src", cwd=os.getcwd()).to_dict()
    assert responses[1]["verdict"]["allowed"] is False
    assert responses[1]["verdict"]["denials"][0]["code"] == "BP400"


def test_bad_lines_get_errors_and_the_server_keeps_going():
    responses = exchange("{oops", "[1]", json.dumps({"id": 3}), json.dumps({"id": 4, "command": "ls", "cwd": 5}),
                         "", json.dumps({"id": 5, "command": "head -n 1 README.md"}))
    assert [r["id"] for r in responses] == [None, None, 3, 4, 5]
    assert all("error" in r for r in responses[:4])
    assert "command must be a string" in responses[2]["error"]
    assert "verdict" in responses[4]


def test_every_answer_is_json_even_for_numbers_json_cannot_echo():
    """An id of 1e400 or NaN came back as Infinity or NaN, which a JSON
    client cannot read (red team RT-B)."""
    out = io.StringIO()
    serve(io.StringIO('{"id": 1e400, "command": "ls"}\n{"id": NaN, "command": "ls"}\n'), out, Policies())
    answers = [json.loads(line, parse_constant=lambda name: pytest.fail(name))
               for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [None, None] and all("error" in a for a in answers)


@pytest.mark.parametrize("cwd", ["/nonexistent", "a\0b", ["x"]])
def test_a_cwd_that_is_not_a_directory_is_an_error(cwd):
    assert "error" in exchange(json.dumps({"id": 1, "command": "ls", "cwd": cwd}))[0]


def test_a_requests_cwd_selects_that_directorys_config(tmp_path, trusted):
    for name, program in (("a", "tokei"), ("b", "scc")):
        (tmp_path / name / ".git").mkdir(parents=True)
        (tmp_path / name / "bash-policy.toml").write_text(f'[programs.{program}]\npositionals = "read"\n')
        trusted(tmp_path / name / "bash-policy.toml")
        (tmp_path / name / "src").mkdir()
    responses = exchange(*(json.dumps({"id": i, "command": cmd, "cwd": str(tmp_path / d / "src")})
                           for i, (cmd, d) in enumerate([("tokei x", "a"), ("tokei x", "b"),
                                                         ("scc x", "b")])))
    assert [r["verdict"]["allowed"] for r in responses] == [True, False, True]
    bad = tmp_path / "c"
    (bad / ".git").mkdir(parents=True)
    (bad / "bash-policy.toml").write_text("nonsense = 1\n")
    assert "nonsense" in exchange(json.dumps({"id": 9, "command": "ls", "cwd": str(bad)}))[0]["error"]


def test_config_given_to_the_server_wins_over_the_requests_directory(tmp_path, trusted):
    (tmp_path / ".git").mkdir()
    trusted((tmp_path / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
            and tmp_path / "bash-policy.toml")
    fixed = Policies(config=None, cwd=str(tmp_path))
    assert exchange(json.dumps({"id": 1, "command": "tokei x"}), policies=fixed)[0]["verdict"]["allowed"]
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    pinned = Policies(config=str(empty))
    request = json.dumps({"id": 1, "command": "tokei x", "cwd": str(tmp_path)})
    assert not exchange(request, policies=pinned)[0]["verdict"]["allowed"]


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=60), st.binary(max_size=60),
                 st.dictionaries(st.sampled_from(["id", "command", "cwd"]),
                                 st.one_of(st.none(), st.integers(), st.text(max_size=8),
                                           st.sampled_from(["/", "\0", "rg --pre sh x"])))
                 .map(json.dumps)))
def test_answer_never_raises(line):
    response = answer(line, Policies())
    assert set(response) in ({"id", "verdict"}, {"id", "error"})
    json.dumps(response)


def test_a_checker_exception_becomes_an_error_response(monkeypatch):
    import bash_policy.judge.engine

    def boom(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(bash_policy.judge.engine, "check", boom)
    assert exchange(json.dumps({"id": 9, "command": "ls"})) == [
        {"id": 9, "error": "internal error: RuntimeError: bug"}]
    monkeypatch.setattr(json, "loads", boom)
    assert answer("{}", Policies()) == {"id": None, "error": "internal error: RuntimeError: bug"}


def test_the_process_answers_each_line_before_the_next_arrives():
    proc = subprocess.Popen([sys.executable, "-m", "bash_policy", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        for ident, command in ((1, "rg -n foo"), (2, "rg --pre cat x")):
            proc.stdin.write(json.dumps({"id": ident, "command": command}) + "\n")
            proc.stdin.flush()
            response = json.loads(proc.stdout.readline())
            assert response["id"] == ident
            assert response["verdict"]["allowed"] is (ident == 1)
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_text_and_run_are_opt_in_and_run_only_for_allowed_commands(tmp_path, monkeypatch):
    from bash_policy.integrations.adapters import executable
    from bash_policy.integrations.wrapping import run_command
    from bash_policy.render import text

    config = tmp_path / "team.toml"
    config.write_text("")
    monkeypatch.chdir(tmp_path)
    policies = Policies("team.toml")  # relative: `run` must still name it absolutely
    allowed, denied, plain = exchange(
        json.dumps({"id": 1, "command": "rg -n foo", "text": True, "run": True}),
        json.dumps({"id": 2, "command": "rg --pre cat x", "text": True, "run": True}),
        json.dumps({"id": 3, "command": "rg -n foo", "run": "yes"}),
        policies=policies)
    assert allowed["run"] == run_command("rg -n foo", executable=executable(), config=str(config))
    assert allowed["text"] == text(check("rg -n foo", cwd=str(tmp_path)))
    assert "run" not in denied and "BP400" in denied["text"]
    assert set(plain) == {"id", "verdict"}  # only `true` asks


def test_the_run_text_runs_the_command_under_bash_policy_run(tmp_path):
    (tmp_path / "notes.txt").write_text("token\n")
    [reply] = exchange(json.dumps({"id": 1, "command": "head -n 1 notes.txt", "cwd": str(tmp_path),
                                   "run": True}))
    proc = subprocess.run(["sh", "-c", reply["run"]], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "token\n", proc.stderr


def test_a_failure_anywhere_after_the_line_was_read_keeps_its_id(monkeypatch):
    """An answer with a null id would leave a client that pairs answers by id
    waiting; only a line that is not a JSON object gets one."""
    import bash_policy.integrations.serve as serve_module

    def boom(path):
        raise OSError("disk on fire")

    monkeypatch.setattr(serve_module.os.path, "isdir", boom)
    assert exchange(json.dumps({"id": 7, "command": "ls"})) == [
        {"id": 7, "error": "internal error: OSError: disk on fire"}]


def test_config_from_picks_the_governing_config_and_run_names_it(tmp_path, trusted):
    """A harness whose commands run in another directory than its session
    (OpenCode's workdir) has the session's config govern, not one that a
    repository cloned below it ships; `run` then judges by the same."""
    session, vendored = tmp_path / "project", tmp_path / "project" / "vendor" / "x"
    (vendored / ".git").mkdir(parents=True)
    (session / ".git").mkdir()
    (vendored / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
    ask = {"command": "tokei src", "cwd": str(vendored), "run": True}
    [untrusted] = exchange(json.dumps({"id": 0, **ask}))
    assert "bash-policy trust" in untrusted["error"]  # the clone's own config may not loosen by itself
    trusted(vendored / "bash-policy.toml")
    own, governed = exchange(json.dumps({"id": 1, **ask}),
                             json.dumps({"id": 2, **ask, "config_from": str(session)}))
    assert own["verdict"]["allowed"] is True
    assert governed["verdict"]["allowed"] is False and "run" not in governed
    trusted((session / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
            and session / "bash-policy.toml")
    [named] = exchange(json.dumps({"id": 3, **ask, "config_from": str(session)}))
    assert named["run"].endswith(f"run --config {session / 'bash-policy.toml'} -- 'tokei src'")
    (session / "bash-policy.toml").unlink()
    (vendored / "bash-policy.toml").write_text("")  # allows what the defaults allow, and differs
    [mismatch] = exchange(json.dumps({"id": 4, **ask, "command": "ls", "config_from": str(session)}))
    assert "not by the built-in policy" in mismatch["error"]
    [bad] = exchange(json.dumps({"id": 5, **ask, "config_from": 3}))
    assert "config_from" in bad["error"]


def test_the_echo_of_an_oversized_command_is_cut():
    from bash_policy.integrations.serve import ECHO, Policies, answer

    command = "rg " + "x" * 50_000
    verdict = answer(json.dumps({"id": 1, "command": command}), Policies())["verdict"]
    assert verdict["command"] == command[:ECHO] + "…" and verdict["command_length"] == len(command)
    assert [d["code"] for d in verdict["denials"]] == ["BP103"]
    assert all(len(d["text"]) <= ECHO + 1 for d in verdict["denials"])
    short = answer(json.dumps({"id": 2, "command": "rg x > out"}), Policies())["verdict"]
    assert short["command"] == "rg x > out" and "command_length" not in short
