"""`bash-policy serve`: checks over a JSON-lines pipe, for harnesses not
written in Python.  One process, loaded once, answers many checks.

Request, one a line:  {"id": 1, "command": "rg -n foo src", "cwd": "/repo"}
Response, one a line: {"id": 1, "verdict": {...Verdict.to_dict()...}}
A bad line gets {"id": <id or null>, "error": "..."}; the server never stops
on input, only at end of file, and answers in the order it was asked, so a
client can pair an answer whose id is null (a line that was not a JSON
object) with its oldest open request.  The echo of a command over the
policy's length limit is cut (`command_length` gives its length).  A
request's `cwd` is where the
command runs and also selects the config that governs that directory
(unless the server was started with --config); without one, the server's
--cwd is used; `config_from`, when given, names the directory whose config
governs instead (a harness's session directory, so that a config shipped
by a repository cloned below it is not read).  Two opt-in fields serve the
shipped plugins:
`"text": true` adds the verdict as `bash-policy check` prints it, and
`"run": true` adds, for an allowed command, the shell text that runs it
under `bash-policy run` (wrapping.run_command), for clients that may
rewrite the command they were asked about.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .config import directory_error

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import IO, Any


class Policies:
    """The policy for each directory, loading each config file once."""

    def __init__(self, config: str | None = None, cwd: str = ".") -> None:
        from .config import load_policy

        self.config = os.path.abspath(config) if config is not None else None
        self.cwd = os.path.abspath(cwd)
        self._fixed = load_policy(config) if config is not None else None
        self._loaded: dict[tuple[Path, int, int | None], Any] = {}

    def for_directory(self, directory: str):
        from ..judge.policy import Policy, find_config
        from ..judge.trust import trust_file

        if self._fixed is not None:
            return self._fixed
        path = find_config(directory)
        if path is None:
            return Policy.default()
        # An edit of the file, or a trust given or taken back, reads it again.
        key = (path, path.stat().st_mtime_ns, _stamp(trust_file()))
        if key not in self._loaded:
            self._loaded[key] = Policy.from_discovered(path)
        return self._loaded[key]


def _stamp(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def answer(line: str | bytes, policies: Policies) -> dict:
    """The response to one request line.  Never raises; a request that was
    read keeps its id even when the checker fails on it."""
    request: Any = None
    try:
        request = json.loads(line, parse_constant=_no_constant, parse_float=_finite)
    except ValueError as error:
        return {"id": None, "error": f"not JSON: {error}"}
    except Exception as error:  # a bug must not take the server down; the client denies
        return _failed(None, error)
    if not isinstance(request, dict):
        return {"id": None, "error": "a request must be a JSON object"}
    try:
        return _answer(request, policies)
    except Exception as error:
        return _failed(request, error)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    """A number the answer can echo as JSON: 1e400 would come back as Infinity."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value


def _failed(request: Any, error: Exception) -> dict:
    ident = request.get("id") if isinstance(request, dict) else None
    return {"id": ident, "error": f"internal error: {type(error).__name__}: {error}"}


def _answer(request: dict, policies: Policies) -> dict:
    from ..judge.engine import check
    from ..judge.policy import ConfigError

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
    governed = request.get("config_from", cwd)
    if not isinstance(governed, str) or "\0" in governed:
        return {"id": ident, "error": "config_from must be a string naming a directory"}
    governed = os.path.join(policies.cwd, governed)
    if not os.path.isdir(governed):
        return {"id": ident, "error": f"config_from {governed!r} is not a directory"}
    try:
        policy = policies.for_directory(governed)
        verdict = check(command, policy, cwd=cwd)
        wrap = request.get("run") is True and verdict.allowed
        run_config = (policies.config or _run_config(governed, cwd)) if wrap else None
    except ConfigError as error:
        return {"id": ident, "error": str(error)}
    response: dict[str, Any] = {"id": ident, "verdict": _echo_cut(verdict.to_dict(), policy.max_length)}
    if request.get("text") is True:
        from ..render import text

        response["text"] = text(verdict)
    if wrap:
        from .adapters import executable
        from .wrapping import run_command

        response["run"] = run_command(command, executable=executable(), config=run_config)
    return response


def _run_config(governed: str, cwd: str) -> str | None:
    """The --config that makes `bash-policy run`, started in `cwd`, judge by
    the policy of `governed` (a harness's session directory): that one's
    file, or none when `cwd` finds the same by itself.  Raises ConfigError
    when `cwd` has a config of its own and the session has the built-in
    policy, which no --config names."""
    from ..judge.policy import ConfigError, find_config

    session, own = find_config(governed), find_config(cwd)
    if session is not None:
        return str(session) if own != session else None
    if own is not None:
        raise ConfigError(f"{cwd} is governed by {own}, not by the built-in policy of {governed}; "
                          "the command is not run there")
    return None


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
