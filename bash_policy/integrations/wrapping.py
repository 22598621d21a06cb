"""The shell text a hook substitutes for an allowed command: the same command
under `bash-policy run`, so that it runs in a clean, hardened, confined bash
(no user functions, aliases or shell options; stdin closed; a timeout that
kills) whatever shell the client pastes it into.

Every word is quoted with POSIX single quotes, which bash removes without
interpreting anything inside, so the inner command reaches `bash-policy run`
byte for byte (tests/test_wrapping.py proves it over every allowed corpus
command with the real bash).
"""

from __future__ import annotations

import shlex


def run_command(command: str, *, executable: str, config: str | None = None,
                timeout: float | None = None) -> str:
    """`command` wrapped in `bash-policy run`.  `executable` is shell text
    naming bash-policy (adapters.executable(): an absolute path, already
    quoted); `config`, when given, is the file the hook was told to use, so
    that `run` judges by the same policy as the hook did; `timeout` (seconds)
    replaces run's own, to end before the client's."""
    words = ["run"]
    if config is not None:
        words += ["--config", config]
    if timeout is not None:
        words += ["--timeout", f"{timeout:g}"]
    return f"{executable} {shlex.join([*words, '--', command])}"


def unwrap(text: str) -> str | None:
    """The command a rewrite runs, when `text` is exactly what run_command
    writes for one (else None): a client that records the rewritten input
    (Gemini CLI's chat recording) still shows what the model asked to run."""
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    start = 1 if words[:1] and words[0].endswith("/bash-policy") else \
        3 if words[1:3] == ["-m", "bash_policy"] else None
    if start is None or words[start:start + 1] != ["run"]:
        return None
    options, rest = {}, words[start + 1:]
    while len(rest) > 2 and rest[0] in ("--config", "--timeout"):
        options[rest[0]], rest = rest[1], rest[2:]
    if len(rest) != 2 or rest[0] != "--":
        return None
    timeout = float(options["--timeout"]) if "--timeout" in options else None
    again = run_command(rest[1], executable=shlex.join(words[:start]), config=options.get("--config"),
                        timeout=timeout)
    return rest[1] if again == text else None
