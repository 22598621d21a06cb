"""The CLI translates: exit codes, text with carets, JSON, stdin, errors,
colour, pipes, and one way to find the policy."""

import json
import subprocess
import sys

import pytest

from bash_policy import __version__
from bash_policy.cli import build_parser, main, use_color
from bash_policy.judge.codes import CODES


@pytest.mark.parametrize("timeout", ["inf", "1e308", "nan", "0", "-1"])
def test_a_timeout_beyond_a_year_or_not_a_number_is_a_usage_error(timeout):
    done = run(["run", "--timeout", timeout, "--", "ls"])
    assert done.returncode == 2 and b"--timeout" in done.stderr and b"internal error" not in done.stderr


def run(args, stdin=None, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "bash_policy", *args], input=stdin,
                          capture_output=True, cwd=cwd, env=env)


def test_allowed_exits_zero(capsys):
    assert main(["check", 'rg -n "foo bar" src | head -20']) == 0
    assert capsys.readouterr().out.splitlines()[0] == "allowed"


def test_denied_exits_one_with_caret_fix_and_a_pointer_to_the_code(capsys):
    assert main(["check", "rg --pre cat x"]) == 1
    out = capsys.readouterr().out
    assert "BP400" in out and "fix:" in out
    lines = out.splitlines()
    source = next(i for i, line in enumerate(lines) if line.strip() == "rg --pre cat x")
    caret = lines[source + 1]
    assert caret.index("^") == lines[source].index("--pre") and caret.count("^") == len("--pre")
    assert lines[source + 3].strip() == "see: bash-policy codes BP400"


def test_exit_zero_still_shows_the_denial_but_not_errors(capsys, tmp_path):
    assert main(["check", "--exit-zero", "rg --pre cat x"]) == 0
    assert "BP400" in capsys.readouterr().out
    (tmp_path / "bad.toml").write_text("nonsense = 1\n")
    assert main(["check", "--exit-zero", "--config", str(tmp_path / "bad.toml"), "ls"]) == 2


def test_json_output(capsys):
    assert main(["check", "--json", "rg foo > out"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["allowed"] is False
    assert data["denials"][0]["code"] == "BP500"
    assert data["segments"][0]["argv"] == ["rg", "foo"]


def test_stdin_command():
    result = run(["check", "-"], stdin=b"rg -n foo src\n")
    assert result.returncode == 0, result.stderr


def test_junk_bytes_on_stdin_are_denied_without_traceback():
    result = run(["check", "-"], stdin=b"rg \xff\xfe \x00 x")
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr and b"BP104" in result.stdout


@pytest.mark.parametrize("argv,says", [
    (["check"], "give the COMMAND"),
    (["check", "ls", "-la"], "bash-policy check 'ls -la'"),
    (["explain", "rg", "foo", "src"], "bash-policy explain 'rg foo src'"),
    (["check", "ls", "--json"], "options go before the COMMAND"),
    (["frobnicate"], "invalid choice"),
    (["check", "--bogus", "x"], "unrecognized arguments: --bogus"),
    (["check", "--cwd", "/nonexistent", "ls"], "does not exist"),
    (["check", "--cwd", __file__, "ls"], "is not a directory"),
    (["codes", "BP999"], "unknown code"),
])
def test_usage_errors_are_one_line_and_a_pointer_to_help(argv, says, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and says in err[0]
    prog = "bash-policy" if argv[0] == "frobnicate" else f"bash-policy {argv[0]}"
    assert err[1] == f"See '{prog} --help'."


def test_no_arguments_prints_the_help_and_exits_two(capsys):
    assert main([]) == 2
    assert "check" in capsys.readouterr().err


def every_subcommand():
    return sorted(build_parser()._subparsers._group_actions[0].choices)


@pytest.mark.parametrize("name", every_subcommand())
def test_help_on_every_subcommand_exits_zero(name, capsys):
    assert main([name, "--help"]) == 0
    assert f"usage: bash-policy {name}" in capsys.readouterr().out


def test_version_names_the_reader_stack(capsys):
    from importlib.metadata import version

    assert main(["--version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"bash-policy {__version__}"
    assert lines[1] == "exact reader: bash 5.2 (parse.y)"
    assert lines[2] == f"tree-sitter {version('tree-sitter')}, tree-sitter-bash {version('tree-sitter-bash')}"
    assert lines[3].startswith(f"bashlex {version('bashlex')}")


def test_version_without_bashlex():
    code = ("import sys; sys.modules['bashlex'] = None\n"
            "import importlib.metadata as m; real = m.version\n"
            "def fake(name):\n"
            "    if name == 'bashlex': raise m.PackageNotFoundError(name)\n"
            "    return real(name)\n"
            "m.version = fake\n"
            "from bash_policy.cli import version_text; print(version_text())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "bashlex not installed" in out


def test_config_error_exits_two_with_message(tmp_path):
    bad = tmp_path / "bash-policy.toml"
    bad.write_text("nonsense = 1\n")
    result = run(["check", "--config", str(bad), "rg x"])
    assert result.returncode == 2
    assert b"nonsense" in result.stderr and b"Traceback" not in result.stderr


def test_an_internal_error_is_a_message_and_exit_two(monkeypatch, capsys):
    import bash_policy.judge.engine

    monkeypatch.setattr(bash_policy.judge.engine, "check", lambda *a, **k: 1 / 0)
    assert main(["check", "ls"]) == 2
    assert "internal error: ZeroDivisionError" in capsys.readouterr().err


def test_config_is_discovered_upward_to_the_repository_root(tmp_path, trusted):
    (tmp_path / "bash-policy.toml").write_text('[programs.scc]\npositionals = "read"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[tool.bash-policy.programs.tokei]\npositionals = "read"\n')
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    trusted(tmp_path / "bash-policy.toml")
    assert run(["check", "tokei src"], cwd=deep).returncode == 2  # loosens, untrusted: refused
    trusted(repo / "pyproject.toml")
    assert run(["check", "tokei src"], cwd=deep).returncode == 0
    # The search stops at the repository root: the file above it is not read.
    assert run(["check", "scc src"], cwd=deep).returncode == 1
    # Outside a repository only the directory itself is read.
    outside = tmp_path / "plain" / "sub"
    outside.mkdir(parents=True)
    assert run(["check", "scc src"], cwd=outside).returncode == 1
    assert run(["check", "scc src"], cwd=tmp_path).returncode == 0


def hostile_repo(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", "touch pwned"], check=True)
    return repo


@pytest.mark.parametrize("subcommand", ["check", "explain"])
def test_cwd_defaults_to_the_current_directory(tmp_path, subcommand):
    repo = hostile_repo(tmp_path)
    plain = run([subcommand, "git status"], cwd=repo)
    explicit = run([subcommand, "--cwd", ".", "git status"], cwd=repo)
    assert plain.returncode == explicit.returncode == 1
    assert b"BP601" in plain.stdout


def test_explain_shows_words_and_values(capsys):
    assert main(["explain", "rg 'a b' $x"]) == 1
    out = capsys.readouterr().out
    assert "'a b'" in out and "not literal: parameter-expansion" in out


def test_codes_lists_every_code_and_prints_one_page(capsys):
    assert main(["codes"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(CODES)
    for spelling in ("BP400", "bp400", "denied-flag"):
        assert main(["codes", spelling]) == 0
        page = capsys.readouterr().out
        assert page.startswith("BP400 denied-flag") and CODES["BP400"].example in page
        assert "Fix:" in page and "Why:" in page


def test_programs_lists_allowed_and_denied_apart(capsys):
    assert main(["programs"]) == 0
    out = capsys.readouterr().out
    allowed, denied = out.split("\n\n")
    assert allowed.startswith("allowed") and "\n  rg " in allowed
    assert denied.startswith("denied") and "\n  bash " in denied and "\n  rg " not in denied
    assert main(["programs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "rg" in {p["name"] for p in data["allowed"]}
    assert "bash" in {p["name"] for p in data["denied"]}


def test_programs_describes_one_wrapping_long_flag_lists(capsys):
    assert main(["programs", "rg"]) == 0
    out = capsys.readouterr().out
    assert "--pre" in out and max(len(line) for line in out.splitlines() if "allowed" in line
                                   or line.startswith("           ")) <= 80
    assert main(["programs", "--json", "rg"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "rg" and "--pre" in {d["flag"].split("=")[0] for d in data["denied_flags"]}
    assert main(["programs", "nosuchprogram"]) == 1


def test_output_into_a_closed_pipe_exits_quietly_with_the_verdicts_code():
    for command, code in (("bash-policy check 'rg --pre cat x'", 1), ("bash-policy programs", 0)):
        command = command.replace("bash-policy", f"{sys.executable} -m bash_policy")
        proc = subprocess.run(["bash", "-c", f"{command} | head -c 1 >/dev/null; "
                                             "echo ${PIPESTATUS[0]}"], capture_output=True, text=True)
        assert proc.stdout.strip() == str(code) and proc.stderr == "", proc.stderr


@pytest.mark.parametrize("env,tty,expected", [
    ({}, True, True),
    ({}, False, False),
    ({"NO_COLOR": "1"}, True, False),
    ({"NO_COLOR": ""}, True, True),
    ({"FORCE_COLOR": "1"}, False, True),
    ({"FORCE_COLOR": "0"}, True, False),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, True),
    ({"TERM": "dumb"}, True, False),
])
def test_colour_follows_the_terminal_no_color_and_force_color(env, tty, expected):
    class Stream:
        def isatty(self):
            return tty

    assert use_color(Stream(), env) is expected


def test_colour_marks_the_verdict_code_and_caret():
    import os

    env = {**os.environ, "FORCE_COLOR": "1"}
    out = run(["check", "rg --pre cat x"], env=env).stdout.decode()
    assert "\x1b[1;31mdenied\x1b[0m" in out and "\x1b[1;33mBP400\x1b[0m" in out
    assert "\x1b[31m^^^^^\x1b[0m" in out
    assert "\x1b[" not in run(["check", "rg --pre cat x"]).stdout.decode()


def test_corpus_runner_reports_mismatches_per_file(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("allow  rg foo\ndeny BP400  rg --pre sh x\nallow  rg --pre sh x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("deny  rg --pre sh x\n")
    (tmp_path / "ignored.md").write_text("not a corpus\n")
    assert main(["test", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert f"{tmp_path / 'a.txt'}:3: expected allow: 'rg --pre sh x'" in out
    assert f"{tmp_path / 'a.txt'}: 2 passed, 1 failed" in out
    assert f"{tmp_path / 'sub' / 'b.txt'}: 1 passed, 0 failed" in out
    assert out[-1] == "3 passed, 1 failed"


def test_corpus_runner_json(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("allow  rg foo\nallow  rg --pre sh x\n")
    assert main(["test", "--json", str(tmp_path / "a.txt")]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["passed"], data["failed"]) == (1, 1)
    failure = data["files"][0]["failures"][0]
    assert failure["line"] == 2 and failure["verdict"]["denials"][0]["code"] == "BP400"


@pytest.mark.parametrize("text,problem", [
    ("maybe rg foo\n", "expected 'allow|deny"),
    ("deny bp400  rg --pre cat x\n", "'bp400' is not a code (write BP400)"),
    ("deny BP999  rg x\n", "'BP999' is not a code"),
    ("deny BP400,bp2  rg x\n", "'bp2' is not a code"),
    ("allow BP400  rg x\n", "takes no codes"),
])
def test_corpus_errors_instead_of_silent_passes(tmp_path, capsys, text, problem):
    corpus = tmp_path / "c.txt"
    corpus.write_text(text)
    assert main(["test", str(corpus)]) == 2
    assert problem in capsys.readouterr().err


def test_a_directory_without_corpus_files_is_an_error(tmp_path, capsys):
    (tmp_path / "notes.md").write_text("x\n")
    assert main(["test", str(tmp_path)]) == 2
    assert "no corpus files" in capsys.readouterr().err


def test_test_reads_corpora_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["test"]) == 2
    assert "./corpora" in capsys.readouterr().err
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "x.txt").write_text("allow  rg foo\n")
    assert main(["test"]) == 0


# -- help, exit statuses, defaults ---------------------------------------------------------

def _help(name, capsys) -> str:
    assert main([name, "--help"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", every_subcommand())
def test_each_subcommand_lists_its_own_exit_statuses_and_every_default(name, capsys):
    from bash_policy.cli import EXITS

    text = _help(name, capsys)
    assert text.rstrip().endswith(EXITS[name].rstrip()) and "exit status:" in text
    parser = build_parser()._subparsers._group_actions[0].choices[name]
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert "default" in formatter._get_help_string(action), (name, action.option_strings)


def test_help_shows_the_defaults(capsys):
    text = " ".join(_help("audit", capsys).split())
    assert "(default: 10)" in text and "(default: auto," in text and "(default: off)" in text
    text = " ".join(_help("check", capsys).split())
    assert "(default: text)" in text


def test_run_help_gives_the_runners_defaults_and_the_output_cap_status(capsys):
    from bash_policy.integrations.runner import DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT

    text = " ".join(_help("run", capsys).split())
    assert f"(default: {DEFAULT_TIMEOUT:g})" in text and f"(default: {DEFAULT_MAX_OUTPUT})" in text
    assert "137 stopped at the output cap" in text


def test_run_stopped_at_the_output_cap_exits_137(tmp_path):
    result = run(["run", "--cwd", str(tmp_path), "--max-output", "100", "--", "seq 1 1000000"])
    assert result.returncode == 137 and len(result.stdout) == 100
    assert result.stderr.decode().rstrip().endswith("output cut at 100 bytes; the command was stopped")


def test_serve_help_states_the_protocol(capsys):
    text = _help("serve", capsys)
    assert '{"id": ANY, "command": "rg -n foo src", "cwd": "/repo"}' in text
    assert '{"id": ANY, "verdict": {...}}' in text and '"error": "..."' in text


# -- notes, --fix, --show-config -------------------------------------------------------------

def test_notes_only_under_verbose(capsys):
    assert main(["check", "ls"]) == 0
    assert capsys.readouterr().out == "allowed\n"
    assert main(["check", "--verbose", "ls"]) == 0
    assert "note: cross-check" in capsys.readouterr().out


def test_fix_prints_the_command_to_run(capsys):
    assert main(["check", "--fix", "rg foo *.py"]) == 0
    out, err = capsys.readouterr()
    assert out == "rg foo -- *.py\n" and "fixed BP203" in err
    assert main(["check", "--fix", "rg -n foo src"]) == 0
    assert capsys.readouterr().out == "rg -n foo src\n"
    assert main(["check", "--fix", "rg foo > out"]) == 1  # only an unsafe fix
    out, err = capsys.readouterr()
    assert out == "" and "--unsafe-fixes applies it" in err
    assert main(["check", "--fix", "--unsafe-fixes", "rg foo > out"]) == 0
    assert capsys.readouterr().out == "rg foo\n"
    assert main(["check", "--fix", "rg foo | sh"]) == 1  # no fix at all
    out, err = capsys.readouterr()
    assert out == "" and "BP300" in err


@pytest.mark.parametrize("argv", [["check", "--unsafe-fixes", "ls"],
                                  ["check", "--fix", "--output-format", "json", "ls"]])
def test_fix_usage_errors(argv, capsys):
    assert main(argv) == 2


def test_show_config_names_the_file_how_it_was_found_and_the_merged_settings(tmp_path, capsys):
    import tomllib

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "bash-policy.toml").write_text('write_targets = ["/dev/null", "out.txt"]\n'
                                           '[programs.tokei]\npositionals = "read"\n')
    assert main(["check", "--show-config", "--cwd", str(repo / "src")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# config: {repo / 'bash-policy.toml'}\n# found: the nearest bash-policy.toml")
    settings = tomllib.loads(out)
    assert settings["write_targets"] == ["/dev/null", "out.txt"]
    assert settings["network_paths"] == ["/dev/tcp/", "/dev/udp/"]  # a default, merged
    assert settings["programs"] == {"tokei": {"positionals": "read"}}
    assert settings["env"]["IFS"] == "*" and settings["limits"]["max_length"] == 16384
    assert main(["test", "--show-config", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["crosscheck"] == "auto"
    assert main(["check", "--show-config", "--cwd", str(tmp_path)]) == 0
    assert "# config: built-in" in capsys.readouterr().out


@pytest.mark.parametrize("text,suggestion", [
    ("trusted_dir = []\n", "did you mean 'trusted_dirs'?"),
    ("[limits]\nmax_segment = 3\n", "did you mean 'max_segments'?"),
    ('[programs.foo]\npositional = "read"\n', "did you mean 'positionals'?"),
    ('[trusted_repo_keys]\ngti = []\n', "did you mean 'git'?"),
])
def test_unknown_config_keys_suggest_the_nearest(text, suggestion, tmp_path, capsys):
    config = tmp_path / "bash-policy.toml"
    config.write_text(text)
    assert main(["check", "--config", str(config), "ls"]) == 2
    assert suggestion in capsys.readouterr().err


# -- bash-policy test: every problem in one run ------------------------------------------------

def test_test_reports_every_problem_in_one_run(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("allow  rg foo\nmaybe rg x\nallow  rg --pre sh x\n"
                                    "deny bp400  rg --pre cat x\ndeny  ls\n")
    (tmp_path / "b.txt").write_text("allow BP400  rg x\nallow  cat > o\n")
    missing = tmp_path / "missing.txt"
    assert main(["test", str(tmp_path), str(missing)]) == 2
    out, err = capsys.readouterr()
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    assert err.splitlines() == [
        f"bash-policy test: {a}:2: expected 'allow|deny [CODES] command'",
        f"bash-policy test: {a}:4: 'bp400' is not a code (write BP400); `bash-policy codes` lists them",
        f"bash-policy test: {b}:1: an allow case takes no codes",
        f"bash-policy test: {missing}: no such file",
    ]
    assert f"{a}:3: expected allow: 'rg --pre sh x'" in out and f"{a}:5: expected deny: 'ls'" in out
    assert f"{b}:2: expected allow: 'cat > o'" in out
    assert out.splitlines()[-1] == "1 passed, 3 failed"
    assert main(["test", "--json", str(tmp_path)]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1 and data["kind"] == "test"
    assert [(p["line"], p["message"][:8]) for p in data["problems"]] == [
        (2, "expected"), (4, "'bp400' "), (1, "an allow")]
    assert (data["passed"], data["failed"]) == (1, 3)


def test_test_without_corpora_says_how_to_start(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["test"]) == 2
    err = capsys.readouterr().err
    assert "no ./corpora here" in err and "corpora/commands.txt" in err and "allow  rg -n TODO src" in err


def test_the_pre_commit_hook_runs_only_when_corpora_or_config_change():
    import re
    from pathlib import Path

    hooks = (Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text()
    assert "always_run" not in hooks
    pattern = re.compile(re.search(r"^\s*files: (.+)$", hooks, re.M)[1])
    for path in ("corpora/x.txt", "corpora/sub/y.txt", "bash-policy.toml", "pyproject.toml"):
        assert pattern.search(path), path
    for path in ("src/app.py", "README.md", "corpora/notes.md", "sub/bash-policy.toml.bak"):
        assert not pattern.search(path), path


@pytest.mark.parametrize("given", [[], ["--cwd", "."], ["--cwd", "sub/.."]])
def test_the_default_directory_is_the_logical_pwd(tmp_path, monkeypatch, given):
    """Run from a linked directory, the shell's `cd ..` and a program's
    `pwd` follow $PWD, not getcwd(): the checker judges there too (red team
    RT-E: `cd .. && git status` ran the fsmonitor of the repository the
    link sits in)."""
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere" / "dir"
    (elsewhere / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", "touch pwned; true"], check=True)
    (repo / "lnk").symlink_to(elsewhere)
    monkeypatch.chdir(repo / "lnk")
    monkeypatch.setenv("PWD", str(repo / "lnk"))
    assert main(["check", *given, "cd .. && git status"]) == 1
    monkeypatch.setenv("PWD", str(repo / "lnk" / ".." / "lnk"))  # not one bash keeps: getcwd() is used
    assert main(["check", *given, "cd .. && git status"]) == 0
