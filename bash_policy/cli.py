"""The `bash-policy` command: translates arguments into library calls.

Exit codes: 0 allowed (or all corpus cases pass), 1 denied (or a mismatch),
2 usage or config error.  The CLI decides nothing itself.
"""

from __future__ import annotations

import sys

USAGE = """\
usage: bash-policy check [--json] [--config FILE] [--cwd DIR] (COMMAND | -)
       bash-policy explain [--config FILE] [--cwd DIR] (COMMAND | -)
       bash-policy programs [--config FILE] [NAME]
       bash-policy test [--config FILE] PATH...
       bash-policy hook (claude-code | gemini) [OPTIONS]   (see docs/integrations.md)
       bash-policy serve [--config FILE]
       bash-policy run [--config FILE] [--cwd DIR] -- COMMAND

  check     decide whether COMMAND may run in plan mode (exit 0 allowed, 1 denied)
  explain   show the segments, words and literal values the checker read
  programs  list the whitelisted programs, or show one program's spec
  test      run fixture corpora (one case a line: allow|deny [CODES] command)
  hook      answer a Claude Code PreToolUse or Gemini CLI BeforeTool event on stdin
  serve     check commands sent as JSON lines on stdin, one verdict per line
  run       check COMMAND and run it under a hardened environment only if allowed

Options:
  --json         print the verdict as JSON
  --config FILE  a bash-policy.toml or pyproject.toml (default: discovered in the cwd)
  --cwd DIR      the directory the command would run in
"""


class UsageError(Exception):
    pass


def _options(argv: list[str], flags: set[str], valued: set[str]) -> tuple[dict, list[str]]:
    opts: dict = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i + 1:])
            break
        if arg in flags:
            opts[arg] = True
        elif arg in valued:
            if i + 1 >= len(argv):
                raise UsageError(f"{arg} needs a value")
            opts[arg] = argv[i + 1]
            i += 1
        elif arg.startswith("--") and "=" in arg and arg.split("=", 1)[0] in valued:
            key, value = arg.split("=", 1)
            opts[key] = value
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option {arg}")
        else:
            rest.append(arg)
        i += 1
    return opts, rest


def _policy(opts: dict):
    from .judge.policy import Policy

    if "--config" in opts:
        return Policy.from_file(opts["--config"])
    return Policy.discover(opts.get("--cwd", "."))


def _command_arg(rest: list[str]) -> str:
    if len(rest) != 1:
        raise UsageError("give exactly one COMMAND (quote it), or - to read it from stdin")
    if rest[0] == "-":
        data = sys.stdin.buffer.read()
        return data.decode("utf-8", "surrogateescape").removesuffix("\n")
    return rest[0]


def cmd_check(argv: list[str]) -> int:
    from .judge.engine import check
    from .render import as_json, text

    opts, rest = _options(argv, {"--json"}, {"--config", "--cwd"})
    command = _command_arg(rest)
    verdict = check(command, _policy(opts), cwd=opts.get("--cwd"))
    print(as_json(verdict) if opts.get("--json") else text(verdict))
    return 0 if verdict.allowed else 1


def cmd_explain(argv: list[str]) -> int:
    from .explain import explain

    opts, rest = _options(argv, {"--json"}, {"--config", "--cwd"})
    command = _command_arg(rest)
    report, allowed = explain(command, _policy(opts), cwd=opts.get("--cwd"))
    print(report)
    return 0 if allowed else 1


def cmd_programs(argv: list[str]) -> int:
    from .reference import describe, listing

    opts, rest = _options(argv, set(), {"--config"})
    policy = _policy(opts)
    if len(rest) > 1:
        raise UsageError("give at most one program NAME")
    if rest:
        spec = policy.spec(rest[0])
        if spec is None:
            print(f"{rest[0]} is not in the whitelist", file=sys.stderr)
            return 1
        print(describe(spec))
    else:
        print(listing(policy))
    return 0


def cmd_test(argv: list[str]) -> int:
    from .corpus import CorpusError, run
    from .render import text

    opts, rest = _options(argv, set(), {"--config"})
    if not rest:
        raise UsageError("give at least one corpus file or directory")
    try:
        results = run(rest, _policy(opts))
    except CorpusError as error:
        print(f"bash-policy: {error}", file=sys.stderr)
        return 2
    except FileNotFoundError as error:
        print(f"bash-policy: {error.filename}: no such file", file=sys.stderr)
        return 2
    failed = [r for r in results if not r.ok]
    for r in failed:
        want = r.case.expect + (" " + ",".join(r.case.codes) if r.case.codes else "")
        print(f"{r.case.path}:{r.case.line}: expected {want}: {r.case.command!r}")
        print("  got " + text(r.verdict).replace("\n", "\n  "))
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


# Subcommands provided by other modules: name -> "module:function".
EXTERNAL = {
    "hook": "bash_policy.integrations.adapters:main",
    "serve": "bash_policy.integrations.serve:main",
    "run": "bash_policy.integrations.runner:main",
}
COMMANDS = {"check": cmd_check, "explain": cmd_explain, "programs": cmd_programs, "test": cmd_test}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # echoing invalid UTF-8 back must not crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0 if argv else 2
    name, args = argv[0], argv[1:]
    try:
        if name in COMMANDS:
            return COMMANDS[name](args)
        if name in EXTERNAL:
            import importlib

            module, _, function = EXTERNAL[name].partition(":")
            return getattr(importlib.import_module(module), function)(args)
        raise UsageError(f"unknown command {name!r}")
    except UsageError as error:
        print(f"bash-policy: {error}\n\n{USAGE}", end="", file=sys.stderr)
        return 2
    except Exception as error:  # config errors and the like: a message, never a traceback
        from .judge.policy import ConfigError

        if isinstance(error, (ConfigError, OSError)):
            print(f"bash-policy: {error}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
