"""`bash-policy audit`: the shell commands of each client's own files, checked.

The fixtures in tests/fixtures/transcripts/ are excerpts of files the real
clients wrote (see the README there): the records audit reads, verbatim.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bash_policy.audit import audit, read
from bash_policy.cli import main
from bash_policy.judge.policy import Policy

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"


@pytest.mark.parametrize("name,fmt,commands", [
    ("claude-code-2.1.197.jsonl", "claude-code",
     [("rg -n hello notes.txt", 4), ("rg foo *.py > out", 6), ("ls -la", 8)]),
    ("claude-code-2.1.332.jsonl", "claude-code",
     [("rg -n hello notes.txt", 7), ("rg foo *.py > out", 11), ("ls -la", 14)]),
    ("gemini-0.61.0.jsonl", "gemini", [("rg -n hello notes.txt", 6), ("rg foo *.py > out", 11)]),
    ("codex-0.171.0.jsonl", "codex", [("rg -n hello notes.txt", 7), ("rg foo *.py > out", 12)]),  # exec_command
    ("codex-0.66.0.jsonl", "codex", [("rg -n hello notes.txt", 7)]),                              # shell_command
    ("codex-0.50.0.jsonl", "codex", [("rg -n hello notes.txt", 8), ("rg foo '*.py'", 13)]),       # shell: argv
    ("codex-0.50.0-local-shell.jsonl", "codex", [("rg -n hello notes.txt", 8), ("ls -la", 13)]),
    ("opencode-1.18.33-export.json", "opencode", [("rg -n hello notes.txt", None), ("rg foo *.py > out", None)]),
    ("opencode-1.18.33-run.jsonl", "opencode", [("rg -n hello notes.txt", 2), ("rg foo *.py > out", 5)]),
])
def test_each_clients_file(name, fmt, commands):
    found, read_commands = read(TRANSCRIPTS / name)
    assert found == fmt
    assert [(c.text, c.line) for c in read_commands] == commands


def test_directories_the_clients_recorded():
    _, claude = read(TRANSCRIPTS / "claude-code-2.1.197.jsonl")
    assert {c.cwd for c in claude} == {"/tmp/e2e/claude/project"}
    _, codex = read(TRANSCRIPTS / "codex-0.171.0.jsonl")
    assert [c.cwd for c in codex] == ["/tmp/e2e/codex/project", "/tmp"]  # workdir wins
    _, local = read(TRANSCRIPTS / "codex-0.50.0-local-shell.jsonl")
    assert [c.cwd for c in local] == ["/tmp", "/tmp/e2e/codex/project"]
    _, export = read(TRANSCRIPTS / "opencode-1.18.33-export.json")
    assert [c.cwd for c in export] == ["/tmp/e2e/opencode/project", "/tmp"]


def test_an_argv_is_quoted_back_and_a_shell_script_is_itself():
    from bash_policy.audit import _argv_command

    assert _argv_command(["bash", "-lc", "rg x | head"]) == "rg x | head"
    assert _argv_command(["rg", "foo", "*.py", "a b"]) == "rg foo '*.py' 'a b'"
    assert _argv_command(["bash", "-lc"]) == "bash -lc"
    assert _argv_command([]) is None and _argv_command("rg") is None


def test_gemini_records_written_again_and_replaced(tmp_path):
    """As the client's loader reads them: a message written again as its tool
    calls come in is one call; `$set.messages` replaces the list; a legacy
    session-*.json is one object."""
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}}
    lines = [{"sessionId": "s", "projectHash": "h"},
             {"id": "m1", "type": "gemini", "content": ""},
             {"id": "m1", "type": "gemini", "toolCalls": [call]},
             {"id": "m1", "type": "gemini", "toolCalls": [call, {**call, "id": "c2", "args": {"command": "pwd"}}]},
             {"$set": {"messages": [{"id": "m2", "type": "gemini", "toolCalls": [
                 {"id": "c3", "name": "run_shell_command", "args": {"command": "date"}},
                 {"id": "c4", "name": "read_file", "args": {"file_path": "x"}}]}]}}]
    path = tmp_path / "session-x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines) + '{"id": "torn')
    fmt, commands = read(path)
    assert fmt == "gemini" and [c.text for c in commands] == ["ls", "pwd", "date"]
    legacy = tmp_path / "session-y.json"
    legacy.write_text(json.dumps({"sessionId": "s", "projectHash": "h", "messages": lines[2:3]}, indent=2))
    assert [c.text for c in read(legacy)[1]] == ["ls"]


def test_plain_text_and_corpora(tmp_path):
    text = tmp_path / "commands.txt"
    text.write_text("# a comment\nrg foo *.py\n\ngit status\n")
    assert read(text)[0] == "text" and [(c.text, c.line) for c in read(text)[1]] == [
        ("rg foo *.py", 2), ("git status", 4)]
    fmt, commands = read(ROOT / "corpora" / "search.txt")
    assert fmt == "corpus" and commands and commands[0].client == "corpus"


def test_an_unknown_json_file_is_reported_and_the_rest_audited(tmp_path, capsys):
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": 1}\n')
    code = main(["audit", str(odd), str(TRANSCRIPTS / "codex-0.66.0.jsonl")])
    captured = capsys.readouterr()
    assert code == 2 and "odd.jsonl: JSON in no format audit reads" in captured.err
    assert "audited 1 file: 1 shell commands" in captured.out


def test_the_report(capsys):
    assert main(["audit", str(TRANSCRIPTS)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("audited 9 files: 19 shell commands")
    assert "plan mode would have allowed 13 (68.4%) and denied 6 (31.6%)" in out
    assert "BP500" in out and "rewrite of that command (unsafe): rg foo -- *.py" in out


def test_the_json_report(capsys):
    assert main(["audit", "--json", "--top", "1", str(TRANSCRIPTS)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1 and data["kind"] == "audit"
    assert (data["commands"], data["allowed"], data["denied"]) == (19, 13, 6)
    assert {r["code"]: r["count"] for r in data["codes"]} == {"BP500": 6, "BP203": 6}
    [top] = data["top"]
    assert (top["code"], top["count"]) in (("BP203", 6), ("BP500", 6))
    assert top["fix"]["command"] == "rg foo -- *.py"


def test_commands_are_checked_where_they_ran_when_that_directory_is_here(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "fifo").mkdir()  # a directory named like an operand: not a special file
    transcript = tmp_path / "t.jsonl"
    record = {"type": "assistant", "cwd": str(repo), "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "git status"}}]}}
    transcript.write_text(json.dumps(record) + "\n")
    [checked] = audit([str(transcript)], Policy.default()).checked
    assert not any("no working directory" in n for n in checked.verdict.notes)
    record["cwd"] = str(tmp_path / "gone")
    transcript.write_text(json.dumps(record) + "\n")
    [checked] = audit([str(transcript)], Policy.default()).checked
    assert any("no working directory" in n for n in checked.verdict.notes)


def test_progress_on_stderr_for_large_inputs(tmp_path):
    many = tmp_path / "many.txt"
    many.write_text("rg foo src\n" * 2500)
    stream = io.StringIO()
    report = audit([str(many)], Policy.default(), progress=stream)
    assert len(report.checked) == 2500
    lines = stream.getvalue().splitlines()
    assert lines[0] == "audit: 250 of 2,500 commands" and lines[-1] == "audit: 2,500 of 2,500 commands"
    quiet = io.StringIO()
    audit([str(TRANSCRIPTS / "codex-0.66.0.jsonl")], Policy.default(), progress=quiet)
    assert quiet.getvalue() == ""


def test_lines_split_at_newlines_only(tmp_path):
    """A JSON string may hold U+2028 raw (JavaScript's JSON.stringify leaves
    it): the record must stay whole, and a plain-text command too."""
    record = {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo 'a\u2028b'"}}]}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n")
    assert [c.text for c in read(path)[1]] == ["echo 'a\u2028b'"]
    plain = tmp_path / "c.txt"
    plain.write_text("echo 'a\u2028b'\r\nls\n")
    assert [c.text for c in read(plain)[1]] == ["echo 'a\u2028b'", "ls"]


@pytest.mark.parametrize("text", [
    '[{"sessionId": "s", "messageId": 0, "type": "user", "message": "hi"}]\n',  # Gemini CLI's logs.json
    '{"name": "pkg", "version": "1.0.0"}\n',                                    # any other JSON file
    '{"a": 1}\n{"b": 2}\n',
])
def test_json_in_no_known_format_is_never_read_as_commands(text, tmp_path):
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="no format audit reads"):
        read(path)
