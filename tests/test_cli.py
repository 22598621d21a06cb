"""The CLI translates: exit codes, text with carets, JSON, stdin, errors."""

import json
import subprocess
import sys

from bash_policy.cli import main


def run(args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "bash_policy", *args], input=stdin,
                          capture_output=True, cwd=cwd)


def test_allowed_exits_zero(capsys):
    assert main(["check", 'rg -n "foo bar" src | head -20']) == 0
    assert capsys.readouterr().out.splitlines()[0] == "allowed"


def test_denied_exits_one_with_caret_and_fix(capsys):
    assert main(["check", "rg --pre cat x"]) == 1
    out = capsys.readouterr().out
    assert "BP400" in out and "fix:" in out
    lines = out.splitlines()
    source = next(i for i, line in enumerate(lines) if line.strip() == "rg --pre cat x")
    caret = lines[source + 1]
    assert caret.index("^") == lines[source].index("--pre") and caret.count("^") == len("--pre")


def test_json_output(capsys):
    assert main(["check", "--json", "rg foo > out"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["allowed"] is False
    assert data["denials"][0]["code"] == "BP500"
    assert data["denials"][0]["text"] == ">out" or "out" in data["denials"][0]["text"]
    assert data["segments"][0]["argv"] == ["rg", "foo"]


def test_stdin_command():
    result = run(["check", "-"], stdin=b"rg -n foo src\n")
    assert result.returncode == 0, result.stderr


def test_junk_bytes_on_stdin_are_denied_without_traceback():
    result = run(["check", "-"], stdin=b"rg \xff\xfe \x00 x")
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr and b"BP104" in result.stdout


def test_usage_errors_exit_two(capsys):
    assert main(["check"]) == 2
    assert main(["check", "a", "b"]) == 2
    assert main(["frobnicate"]) == 2
    assert main(["check", "--bogus", "x"]) == 2
    assert "usage:" in capsys.readouterr().err


def test_config_error_exits_two_with_message(tmp_path):
    bad = tmp_path / "bash-policy.toml"
    bad.write_text("nonsense = 1\n")
    result = run(["check", "--config", str(bad), "rg x"])
    assert result.returncode == 2
    assert b"nonsense" in result.stderr and b"Traceback" not in result.stderr


def test_config_is_discovered_in_cwd(tmp_path):
    (tmp_path / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
    assert run(["check", "tokei src"], cwd=tmp_path).returncode == 0


def test_explain_shows_words_and_values(capsys):
    assert main(["explain", "rg 'a b' $x"]) == 1
    out = capsys.readouterr().out
    assert "'a b'" in out and "not literal: parameter-expansion" in out


def test_programs_lists_and_describes(capsys):
    assert main(["programs"]) == 0
    assert "rg" in capsys.readouterr().out
    assert main(["programs", "rg"]) == 0
    assert "--pre" in capsys.readouterr().out
    assert main(["programs", "nosuchprogram"]) == 1


def test_corpus_runner_reports_mismatches(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("allow  rg foo\ndeny BP400  rg --pre sh x\nallow  rg --pre sh x\n")
    assert main(["test", str(corpus)]) == 1
    out = capsys.readouterr().out
    assert "c.txt:3: expected allow" in out and "2 passed, 1 failed" in out


def test_corpus_syntax_error_exits_two(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("maybe rg foo\n")
    assert main(["test", str(corpus)]) == 2
