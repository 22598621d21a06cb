"""`bash-policy serve`: checks over a JSON-lines pipe, for harnesses not
written in Python.  One process, loaded once, answers many checks.

Request, one a line:  {"id": 1, "command": "rg -n foo src", "cwd": "/repo"}
Response, one a line: {"id": 1, "verdict": {...Verdict.to_dict()...}}
A bad line gets {"id": <id or null>, "error": "..."}; the server never stops
on input, only at end of file.
"""

from __future__ import annotations

import json
import sys
from typing import IO

USAGE = """\
usage: bash-policy serve [--config FILE]

Reads JSON requests on stdin, one a line: {"id": ID, "command": STR, "cwd": STR?}
and writes one JSON response a line: {"id": ID, "verdict": {...}} or {"id": ID, "error": STR}.
"""


def answer(line: str, policy) -> dict:
    """The response to one request line."""
    from ..judge.engine import check

    try:
        request = json.loads(line)
    except ValueError as error:
        return {"id": None, "error": f"not JSON: {error}"}
    if not isinstance(request, dict):
        return {"id": None, "error": "a request must be a JSON object"}
    ident = request.get("id")
    command, cwd = request.get("command"), request.get("cwd")
    if not isinstance(command, str):
        return {"id": ident, "error": "command must be a string"}
    if cwd is not None and not isinstance(cwd, str):
        return {"id": ident, "error": "cwd must be a string"}
    try:
        return {"id": ident, "verdict": check(command, policy, cwd=cwd).to_dict()}
    except Exception as error:  # a checker bug must not take the server down
        return {"id": ident, "error": f"internal error: {type(error).__name__}: {error}"}


def serve(stdin: IO[str], stdout: IO[str], policy) -> int:
    """Answer every line of `stdin` until end of file; return how many."""
    count = 0
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps(answer(line, policy), ensure_ascii=False) + "\n")
        stdout.flush()
        count += 1
    return count


def main(argv: list[str]) -> int:
    from ..judge.policy import ConfigError, Policy

    if argv and argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    if argv and (argv[0] != "--config" or len(argv) != 2):
        print(f"bash-policy serve: bad arguments {argv!r}\n\n{USAGE}", end="", file=sys.stderr)
        return 2
    try:
        policy = Policy.from_file(argv[1]) if argv else Policy.discover(".")
    except ConfigError as error:
        print(f"bash-policy serve: {error}", file=sys.stderr)
        return 2
    stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
    serve(stdin, sys.stdout, policy)
    return 0
