"""A wrapped command reaches `bash-policy run` byte for byte through real bash."""

import subprocess
from pathlib import Path

from bash_policy.corpus import corpus_files, read_cases
from bash_policy.integrations.wrapping import run_command

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
ALLOWED = [c.command for f in corpus_files([CORPORA]) for c in read_cases(f) if c.expect == "allow"]
# Stands in for bash-policy: prints every word it is given, each ended by NUL.
ECHO_ARGS = r"printf '%s\0'"


def words_bash_passes(script: str) -> list[str]:
    done = subprocess.run(["bash", "--norc", "--noprofile"], input=script.encode(),
                          capture_output=True, timeout=120, check=True)
    return done.stdout.decode().split("\0")[:-1]


def test_every_allowed_corpus_command_arrives_unchanged():
    assert len(ALLOWED) > 2000
    script = "".join(run_command(c, executable=ECHO_ARGS) + "\n" for c in ALLOWED)
    words = words_bash_passes(script)
    assert [words[i:i + 3] for i in range(0, len(words), 3)] == [["run", "--", c] for c in ALLOWED]


def test_config_is_passed_before_the_command():
    hard = "echo 'it'\"'\"'s' $HOME `x` \\\n\t\u00e9 \"$(a)\""
    wrapped = run_command(hard, executable=ECHO_ARGS, config="/etc/my policy.toml")
    assert words_bash_passes(wrapped + "\n") == ["run", "--config", "/etc/my policy.toml", "--", hard]


def claude_code_runs(command: str) -> str:
    """The line Claude Code's Bash tool runs for `command` (2.1.197 and 2.1.332
    under strace; the snapshot here is empty): `eval` of the command in single
    quotes, each `'` written `'"'"'` (tests/e2e/test_shells.py checks the
    real clients still pass a wrapped command through unchanged)."""
    quoted = "'" + command.replace("'", "'\"'\"'") + "'"
    return (f"source /dev/null 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && "
            f"eval {quoted} < /dev/null && pwd -P >| /dev/null")


def gemini_runs(command: str) -> str:
    """The script Gemini CLI 0.61.0 runs: the trimmed command pasted into a
    subshell after its shopt line (ShellToolInvocation.wrapCommandForBackgroundPIDs)."""
    return ("shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/dev/null\n(\n"
            f"  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{command.strip()}\n)\n__code=$?\n")


def test_every_allowed_corpus_command_arrives_unchanged_through_each_client_s_wrapper():
    for client in (claude_code_runs, gemini_runs):
        script = "".join(client(run_command(c, executable=ECHO_ARGS)) + "\n" for c in ALLOWED)
        words = words_bash_passes(script)
        assert [words[i:i + 3] for i in range(0, len(words), 3)] == [["run", "--", c] for c in ALLOWED]


def test_unwrap_gives_back_exactly_what_run_command_wrapped():
    from bash_policy.integrations.wrapping import unwrap

    for command in ALLOWED:
        for wrapped in (run_command(command, executable="/opt/bp/bin/bash-policy"),
                        run_command(command, executable="/usr/bin/python3 -m bash_policy",
                                    config="/dev/null", timeout=115)):
            assert unwrap(wrapped) == command
    for other in ("ls", "/x/bash-policy run -- ls extra", "/x/bash-policy check -- ls",
                  "/x/bash-policy run -- \"ls\"",  # not the quoting run_command writes
                  "/x/bash-policy run --cwd / -- ls", "bash-policy run -- ls", "'unbalanced"):
        assert unwrap(other) is None, other
