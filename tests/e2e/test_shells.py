"""The shell each real client runs a command in, and the hook judging for it
(issue 24) or rewriting it to run under `bash-policy run` (issue 17 point 4).

* The execution model of each pinned client, recorded from inside its own
  shell (argv, options, functions, stdin, environment) and compared with its
  profile (bash_policy/integrations/profiles/): an upgrade that changes one
  of them fails here.
* Each example of issue 24, through the real client, with the hook's
  rewriting on (it runs harmlessly under `bash-policy run`) and off
  (`--no-confine`: it is denied for the client's own shell).
* A rewritten command reaches `bash-policy run` byte for byte through each
  client's own quoting, and read-only commands print the same either way.
* With a test-only user spec that allows `touch`, `touch canary` in plan
  mode leaves no canary: the kernel confinement of `bash-policy run`, not
  the checker, must stop it.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bash_policy.corpus import corpus_files, read_cases
from bash_policy.integrations.profiles import load_profile
from bash_policy.integrations.snapshot import parse

from .mock_model import MockModel
from .test_clients import CLAUDES, TOKEN, Session, assert_denied, bash, shell, usable

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = load_profile("claude-code")
GEMINI = load_profile("gemini")
ALLOW_ALL = {"claude-code": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", "
                            "\"permissionDecision\": \"allow\"}}'",
             "gemini": "echo '{}'"}


@pytest.fixture(scope="module")
def model():
    with MockModel() as server:
        yield server


@pytest.fixture
def session(tmp_path, model):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text(f"{TOKEN}\nsecond line\n")
    return Session(home, project, model)


# Gemini CLI 0.61.0 tells the model when a hook rewrote a call's input.
REWRITE_NOTE = "\n\n[System] Tool input parameters were modified by a hook before execution."


def output(result: str) -> str:
    """A tool result's text: Gemini CLI's JSON `output` without its framing
    (and without the note that a hook rewrote the call)."""
    if result.startswith("{"):
        body = json.loads(result)
        text = body.get("output", body.get("error", "")).removesuffix(REWRITE_NOTE)
        text = re.sub(r"^<untrusted_context>\nOutput: ?", "", text)
        return re.sub(r"\n?Process Group PGID: \d+\n?</untrusted_context>$", "", text)
    return result


def rewrites_in_plan_mode(version: str) -> bool:
    newest = CLAUDE.rewrite_in_plan_mode_up_to
    return newest is not None and tuple(int(p) for p in version.split(".")) <= newest


# -- the execution model each client really has --------------------------------------------------

BASHRC = ("alias ll='ls -l'\nshopt -s globstar\n"
          'cd() { builtin cd "$@" && if [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi; }\n')
PROBES = [
    "tr '\\0' '\\n' < /proc/$$/cmdline",             # the shell's own argv (has `<`)
    "readlink /proc/$$/fd/0",                        # stdin without `<`
    "readlink /proc/$$/fd/0; true < /dev/null",      # stdin with `<` in the command
    "shopt -p; set +o",                              # options in effect for the command
    "type -t cd ll grep find which; declare -F | cut -d' ' -f3 | sort",
    "env | cut -d= -f1 | sort",
]


def probe(session: Session, client, mode: str, *more: str) -> tuple[dict[str, str], list[str]]:
    results = session.run(client, mode, [(bash if client.harness == "claude-code" else shell)(p)
                                         for p in (*PROBES, *more)], command=ALLOW_ALL[client.harness])
    texts = [output(r) for r in results]
    return dict(zip(("argv", "stdin", "stdin_with_input", "options", "names", "env"), texts)), \
        texts[len(PROBES):]


def options_on(text: str) -> set[str]:
    on = set(re.findall(r"^shopt -s (\S+)$", text, re.M))
    return on | set(re.findall(r"^set -o (\S+)$", text, re.M))


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_code_execution_model(key, session):
    client = usable(key)
    (session.home / ".bashrc").write_text(BASHRC)
    # The snapshot itself, as the hook reads it, while the session runs; and
    # the stdin rule: any `<` (here only in quotes) leaves the socket.
    seen, more = probe(session, client, "bypassPermissions", "cat ~/.claude/shell-snapshots/*.sh",
                       'echo "a < b" > /dev/null; readlink /proc/$$/fd/0',
                       "echo x > /dev/null\nreadlink /proc/$$/fd/0", "echo 'a >NUL b'")
    argv = seen["argv"].split("\n")
    assert argv[:2] == ["/bin/bash", "-c"], argv
    wrapper = argv[2]
    snapshot = re.match(r"source (\S+/shell-snapshots/snapshot-bash-\d{13}-\w+\.sh) 2>/dev/null \|\| true"
                        r" && (?:\\builtin )?shopt -u extglob 2>/dev/null \|\| true && ", wrapper)
    assert snapshot, wrapper
    assert snapshot.group(1).startswith(str(session.home / ".claude" / CLAUDE.shell["snapshot_dir"]))
    for name in CLAUDE.shell["unshadowed"] if key.endswith("332") else ():
        assert f"\\builtin unset -f -- '{name}'" in wrapper
    assert re.search(r"eval '.*' && pwd -P >\| /tmp/claude-\w+-cwd$", wrapper, re.S), wrapper
    assert "< /dev/null" not in wrapper  # the probe has `<`: stdin is left to the client
    assert seen["stdin"] == more[2] == "/dev/null"
    assert more[3] == "a >/dev/null b"  # its one rewrite of the text, even inside quotes
    assert seen["stdin_with_input"].startswith("socket:") and more[1].startswith("socket:"), seen
    on = options_on(seen["options"])
    assert {"globstar", "expand_aliases", "interactive_comments"} <= on and "extglob" not in on
    assert on <= profiles_harmless() | {"globstar"}, on - profiles_harmless()
    names = seen["names"].split("\n")
    assert names[:5] == ["function", "alias", "function", "function", "file"], names
    assert set(CLAUDE.replacements) - {"rg"} <= set(names[5:]) and "cd" in names[5:]
    env = set(seen["env"].split("\n"))
    assert {"CLAUDECODE", "PATH", "HOME", "AI_AGENT"} <= env and "PAGER" not in env
    # Every line of the snapshot in a shape the hook's reader knows.
    snap = parse(more[0] + "\n", snapshot.group(1))
    assert snap.aliases == {"ll": "ls -l"} and "builtin cd" in snap.functions["cd"]
    assert set(snap.client_functions) <= set(CLAUDE.replacements) | {"pkill"}, snap.client_functions
    assert snap.options["globstar"] and snap.complete


def profiles_harmless() -> set[str]:
    from bash_policy.judge.client_shell import FOLLOWED_OPTIONS, HARMLESS_OPTIONS

    return set(HARMLESS_OPTIONS | FOLLOWED_OPTIONS)


def test_gemini_execution_model(session):
    client = usable("gemini-0.61.0")
    (session.home / ".bashrc").write_text(BASHRC)  # not read: no startup file
    seen, _ = probe(session, client, "yolo")
    argv = seen["argv"].split("\n", 2)
    assert argv[:2] in (["bash", "-c"], ["/usr/bin/bash", "-c"], ["/bin/bash", "-c"]), argv
    script = argv[2]
    assert script.startswith(f"shopt -u {' '.join(GEMINI.shell['options_off'])}; _bgpids_file="), script
    assert "(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\ntr " in script
    assert seen["stdin"] == seen["stdin_with_input"] == "/dev/null"  # -p
    on = options_on(seen["options"])
    from bash_policy.integrations.profiles import BASH_C_OPTIONS

    assert on == BASH_C_OPTIONS - set(GEMINI.shell["options_off"]), on
    assert seen["names"].split("\n") == ["builtin", "file", "file", "file"], seen["names"]
    env = set(seen["env"].split("\n"))
    assert {"PAGER", "GIT_PAGER", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GEMINI_CLI"} <= env


# -- issue 24's examples, with and without rewriting -----------------------------------------------

def issue_24_project(session: Session) -> None:
    """The set-ups of issue 24's Claude Code examples, in one project and HOME."""
    project = session.project
    (session.home / ".bashrc").write_text(BASHRC)
    (project / "README.md").write_text("one\ntwo\n")
    (project / ".gitignore").symlink_to("/dev/zero")
    (project / "src" / "deep").mkdir(parents=True)
    (project / "src" / "main.py").write_text("foo\n")
    (project / "src" / "deep" / ".gitignore").symlink_to("/dev/zero")
    (project / "lib" / "a" / "b").mkdir(parents=True)
    (project / "lib" / "a" / "b" / "c.py").symlink_to("/dev/zero")
    (project / "sub" / ".venv" / "bin").mkdir(parents=True)
    (project / "sub" / ".venv" / "bin" / "activate").write_text(f"touch {project / 'venv-ran'}\n")


ISSUE_24 = [  # (command, its code when judged for Claude Code's own shell, its output under run)
    ("grep -r foo .", "BP703", "./src/main.py:foo"),
    ("grep -rn foo src", "BP703", "src/main.py:1:foo"),
    ("wc -l < README.md; cat", "BP702", "2"),
    ("wc -l **/*.py", "BP701", "1 src/main.py"),
    ("cd sub && ls", "BP700", ""),
]


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_code_issue_24_denied_for_its_own_shell(key, session):
    client = usable(key)
    issue_24_project(session)
    results = session.run(client, "plan", [bash(c) for c, _, _ in ISSUE_24], ["--no-confine"])
    for (_, code, _), result in zip(ISSUE_24, results):
        assert_denied(result, code)
    assert not (session.project / "venv-ran").exists() and session.seconds < 90


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_code_issue_24_harmless_under_run(key, session):
    client = usable(key)
    issue_24_project(session)
    # 2.1.332's own plan mode holds what it cannot see is read-only: there the
    # rewrite is shown outside plan mode, with the hook enforcing (--always).
    mode, options = ("plan", []) if rewrites_in_plan_mode(client.version) else ("default", ["--always"])
    results = session.run(client, mode, [bash(c) for c, _, _ in ISSUE_24], options)
    for (command, _, expected), result in zip(ISSUE_24, results):
        text = output(result).strip()
        assert text == expected or (not expected and "no output" in text), (command, result)
    assert not (session.project / "venv-ran").exists() and session.seconds < 90


def run_gemini_interactive(session: Session, calls, options=(), timeout=90.0) -> list[str]:
    """Gemini CLI in interactive mode (`-i PROMPT`) on a pseudo-terminal, as a
    person runs it: its shell commands then get a terminal as standard input."""
    client = usable("gemini-0.61.0")
    session.model.reset(*calls)
    argv, env = session._gemini(session.hook_command("gemini", *options), "yolo")
    env["TERM"] = "xterm-256color"
    settings = session.home / ".gemini" / "settings.json"  # no update check in interactive mode
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "general": {
        "enableAutoUpdate": False, "enableAutoUpdateNotification": False}}))
    pid, fd = pty.fork()
    if pid == 0:  # the child: become Gemini CLI on the terminal
        os.chdir(session.project)
        os.execve(str(client.executable), [str(client.executable), "-i", "Explore the project.",
                                           *argv], env)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and len(session.model.tool_results()) < len(calls):
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    os.read(fd, 65536)
                except OSError:
                    break
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
    results = session.model.tool_results()
    assert session.model.outbound == [], session.model.outbound
    assert len(results) == len(calls), results
    return results


def test_gemini_interactive_stdin_is_a_terminal(session):
    """Plain `cat` waits on the terminal Gemini CLI gives interactive commands:
    denied for its own shell, harmless (stdin closed) under run."""
    denied, terminal = run_gemini_interactive(
        session, [shell("cat"), shell("readlink /proc/$$/fd/0")], ["--no-confine"])
    assert_denied(denied, "BP702", "terminal")
    assert output(terminal).strip().startswith("/dev/pts/")  # its own shell's stdin
    started = time.monotonic()
    harmless, closed = run_gemini_interactive(session, [shell("cat"), shell("readlink /proc/$$/fd/0")])
    assert output(harmless).strip() in ("", "(empty)"), harmless
    assert REWRITE_NOTE.strip() in json.loads(harmless)["output"]
    assert output(closed).strip() == "/dev/null"  # under run
    assert time.monotonic() - started < 60


def test_gemini_headless_stdin_is_closed(session):
    """In -p mode Gemini CLI's stdin is /dev/null: `cat` reads nothing, and is allowed."""
    client = usable("gemini-0.61.0")
    [result] = session.run(client, "yolo", [shell("cat")], ["--no-confine"])
    assert "BP702" not in result


# -- what runs is what was checked ----------------------------------------------------------------

def hard_commands() -> list[str]:
    """One allowed corpus command for each kind of character a quoting could get wrong."""
    allowed = [c.command for f in corpus_files([ROOT / "corpora"]) for c in read_cases(f)
               if c.expect == "allow"]
    picked: list[str] = []
    for needle in ("'", '"', "\\", "\n", "$", "!", "<<", "*", "#", "\t", "é", "%", "'\\''", "`"):
        found = next((c for c in allowed if needle in c and c not in picked), None)
        if found is not None:
            picked.append(found)
    return picked


def recording_hook(session: Session, harness: str) -> tuple[str, Path]:
    """A hook that rewrites every call with wrapping.run_command, naming a
    recorder instead of bash-policy: the recorder logs the words it gets."""
    log = session.home / "words.log"
    recorder = session.home / "record"
    recorder.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$@\" >> {shlex.quote(str(log))}\n")
    recorder.chmod(0o755)
    script = session.home / "hook.py"
    script.write_text(
        "import json, shlex, sys\n"
        "from bash_policy.integrations.harnesses import HARNESSES\n"
        "from bash_policy.integrations.wrapping import run_command\n"
        "event = json.load(sys.stdin)\n"
        f"harness = HARNESSES[{harness!r}]\n"
        f"wrapped = run_command(event['tool_input']['command'], executable=shlex.quote({str(recorder)!r}))\n"
        "print(json.dumps(harness.rewrite(event['tool_input'], wrapped)))\n")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", log


@pytest.mark.parametrize("key", [*CLAUDES, "gemini-0.61.0"])
def test_a_rewritten_command_reaches_run_byte_for_byte(key, session):
    client = usable(key)
    commands = hard_commands()
    assert len(commands) >= 12
    hook, log = recording_hook(session, client.harness)
    call = bash if client.harness == "claude-code" else shell
    mode = "default" if client.harness == "claude-code" else "yolo"
    session.run(client, mode, [call(c) for c in commands], command=hook)
    words = log.read_bytes().decode().split("\0")[:-1]
    assert [words[i:i + 3] for i in range(0, len(words), 3)] == [["run", "--", c] for c in commands]


READ_ONLY = ["head -n 1 notes.txt", "cat notes.txt | sort | uniq -c", "grep -n token notes.txt",
             "find . -name '*.txt' | sort", "rg -n --sort path token", "git log --oneline",
             "printf '%s\\n' \"it's\" | tr a-z A-Z"]


def read_only_project(session: Session) -> None:
    project = session.project
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print('token')\n")
    git = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(session.home), "PATH": "/usr/bin:/bin"}
    for argv in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "first"]):
        subprocess.run(argv, cwd=project, env=git, check=True, capture_output=True)


@pytest.mark.parametrize("key", [*CLAUDES, "gemini-0.61.0"])
def test_read_only_commands_print_the_same_under_run(key, session):
    client = usable(key)
    read_only_project(session)
    call = bash if client.harness == "claude-code" else shell
    if client.harness == "claude-code" and not rewrites_in_plan_mode(client.version):
        mode, options = "default", ["--always"]
    else:
        mode, options = "plan", []
    # In the client's own shell, answered allow so that its own plan mode does not ask.
    plain = session.run(client, mode, [call(c) for c in READ_ONLY],
                        [*options, "--no-confine", "--allow-readonly"])
    wrapped = session.run(client, mode, [call(c) for c in READ_ONLY], options)
    for command, before, after in zip(READ_ONLY, plain, wrapped):
        assert output(before) == output(after), command
    assert TOKEN in output(wrapped[0])


# -- the confinement stops what the checker was told to allow ---------------------------------------

TOUCH = ('[programs.touch]\nreplace = true\npositionals = "read"\n'
         'summary = "test only: allowed so that the confinement, not the checker, must stop it"\n')


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_code_plan_mode_touch_leaves_no_canary(key, session):
    client = usable(key)
    (session.project / "bash-policy.toml").write_text(TOUCH)
    [result] = session.run(client, "plan", [bash("touch canary")])
    assert not session.canary.exists(), result
    if not rewrites_in_plan_mode(client.version):
        # Not rewritten here; Claude Code's own plan mode held it.  Rewritten
        # outside plan mode, the confinement must stop it.
        [result] = session.run(client, "default", [bash("touch canary")], ["--always"])
        assert not session.canary.exists(), result


def test_gemini_plan_mode_touch_leaves_no_canary(session):
    client = usable("gemini-0.61.0")
    (session.project / "bash-policy.toml").write_text(TOUCH)
    [result] = session.run(client, "plan", [shell("touch canary")])
    assert not session.canary.exists(), result


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_code_deny_rules_still_apply_with_rewriting_on(key, session):
    """A rewrite would hide the command from the user's own deny rules (Claude
    Code matches them against the new text): a session that has one is not
    rewritten, and Claude Code's rule still stops the read."""
    client = usable(key)
    settings = session.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"permissions": {"deny": ["Read(./notes.txt)"]}}))
    mode, options = ("plan", []) if rewrites_in_plan_mode(client.version) else ("default", ["--always"])
    [result] = session.run(client, mode, [bash("head -n 1 notes.txt")], options)
    assert TOKEN not in result and "denied" in result, result
