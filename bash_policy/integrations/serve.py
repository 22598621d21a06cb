"""`bash-policy serve`: checks over a JSON-lines pipe, for harnesses not
written in Python.  One process, loaded once, answers many checks.

Request, one a line:  {"id": 1, "command": "rg -n foo src", "cwd": "/repo"}
Response, one a line: {"id": 1, "verdict": {...Verdict.to_dict()...}}
A bad line gets {"id": <id or null>, "error": "..."}; the server never stops
on input, only at end of file.  The echo of a command over the policy's
length limit is cut (`command_length` gives its length).  A request's `cwd` is where the command runs
and also selects the config that governs that directory (unless the server
was started with --config); without one, the server's --cwd is used.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from .config import directory_error


class Policies:
    """The policy for each directory, loading each config file once."""

    def __init__(self, config: str | None = None, cwd: str = ".") -> None:
        from .config import load_policy

        self.config, self.cwd = config, os.path.abspath(cwd)
        self._fixed = load_policy(config) if config is not None else None
        self._loaded: dict[tuple[Path | None, int], Any] = {}

    def for_directory(self, directory: str):
        from ..judge.policy import Policy, find_config

        if self._fixed is not None:
            return self._fixed
        path = find_config(directory)
        if path is None:
            return Policy.default()
        key = (path, path.stat().st_mtime_ns)  # an edited config is read again
        if key not in self._loaded:
            self._loaded[key] = Policy.from_file(path)
        return self._loaded[key]


def answer(line: str | bytes, policies: Policies) -> dict:
    """The response to one request line.  Never raises."""
    try:
        return _answer(line, policies)
    except Exception as error:  # a bug must not take the server down; the client denies
        return {"id": None, "error": f"internal error: {type(error).__name__}: {error}"}


def _answer(line: str | bytes, policies: Policies) -> dict:
    from ..judge.engine import check
    from ..judge.policy import ConfigError

    try:
        request = json.loads(line)
    except ValueError as error:
        return {"id": None, "error": f"not JSON: {error}"}
    if not isinstance(request, dict):
        return {"id": None, "error": "a request must be a JSON object"}
    ident = request.get("id")
    command, cwd = request.get("command"), request.get("cwd", policies.cwd)
    if not isinstance(command, str):
        return {"id": ident, "error": "command must be a string"}
    if not isinstance(cwd, str) or "\0" in cwd:
        return {"id": ident, "error": "cwd must be a string naming a directory"}
    cwd = os.path.join(policies.cwd, cwd)
    problem = directory_error(cwd)
    if problem is not None:
        return {"id": ident, "error": problem}
    try:
        policy = policies.for_directory(cwd)
        return {"id": ident, "verdict": _echo_cut(check(command, policy, cwd=cwd).to_dict(),
                                                  policy.max_length)}
    except ConfigError as error:
        return {"id": ident, "error": str(error)}
    except Exception as error:  # a checker bug: an error answer, which the client treats as a denial
        return {"id": ident, "error": f"internal error: {type(error).__name__}: {error}"}


ECHO = 200  # characters of an oversized command echoed back


def _echo_cut(verdict: dict, limit: int) -> dict:
    """A command over the policy's length limit was never read (BP103); its
    echo, and the text of its denials, are cut to a prefix so that one answer
    does not carry a megabyte back.  `command_length` says how long it was."""
    command = verdict["command"]
    if len(command) <= limit:
        return verdict
    for denial in verdict["denials"]:
        if len(denial["text"]) > ECHO:
            denial["text"] = denial["text"][:ECHO] + "…"
    return {**verdict, "command": command[:ECHO] + "…", "command_length": len(command)}


def serve(stdin: IO[str], stdout: IO[str], policies: Policies) -> int:
    """Answer every line of `stdin` until end of file; return how many."""
    count = 0
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps(answer(line, policies)) + "\n")
        stdout.flush()
        count += 1
    return count
