"""The `bash-policy` command: translates arguments into library calls.

One argparse parser with a subcommand each; `--config` and `--cwd` come
from shared parents and every subcommand finds its policy with the same
`load_policy()`.  The CLI decides nothing itself.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

EXIT_CODES = """\
exit status:
  0  allowed (check, explain), every case passed (test), or done
  1  denied (check, explain), or a case failed (test)
  2  usage, config or internal error
  run: the command's own status, 124 timed out, 126 denied (nothing ran)
  hook: 0 with the answer on stdout, 2 blocks the call (any failure)"""


class UsageError(Exception):
    """A usage mistake: one line, then a pointer to the subcommand's --help."""

    def __init__(self, prog: str, message: str):
        super().__init__(f"{prog}: {message}")
        self.prog = prog


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message)


def _directory(value: str) -> str:
    if not os.path.isdir(value):
        reason = "does not exist" if not os.path.exists(value) else "is not a directory"
        raise argparse.ArgumentTypeError(f"{value!r} {reason}")
    return os.path.abspath(value)


def _positive(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(value: str):
        number = kind(value)
        if number <= 0:
            raise ValueError(value)
        return number

    convert.__name__ = kind.__name__
    return convert


class _Unused:
    """Stands for the parser of a subcommand this run does not need: every
    ArgumentParser costs gettext file look-ups, a tenth of a check's start."""

    def add_argument(self, *args, **kwargs) -> None:
        pass


def build_parser(wanted: str | None = None) -> Parser:
    """The parser; when `wanted` names a subcommand, only that subcommand's
    own parser is built (anything else, such as --help, gets them all)."""
    from . import __version__
    from .integrations.harnesses import HARNESSES

    config = Parser(add_help=False)
    config.add_argument("--config", metavar="FILE",
                        help="a bash-policy.toml or pyproject.toml (default: the nearest one from "
                             "the directory up to the repository root)")
    cwd = Parser(add_help=False)
    cwd.add_argument("--cwd", metavar="DIR", type=_directory, default=".",
                     help="the directory the command runs in (default: the current one)")
    command: dict[str, Any] = {"nargs": argparse.REMAINDER, "metavar": "COMMAND",
               "help": "the command line, quoted as one argument, or - to read it from stdin"}

    top = Parser(prog="bash-policy", epilog=EXIT_CODES,
                 formatter_class=argparse.RawDescriptionHelpFormatter,
                 description="Decide whether a shell command may run in an AI agent's "
                             "read-only plan mode.")
    top.add_argument("--version", action="version", version=f"bash-policy {__version__}")
    sub = top.add_subparsers(dest="subcommand", metavar="COMMAND", required=True)

    names: list[str] = []

    def add(name: str, handler, help: str, parents=(), usage: str | None = None) -> Parser:
        names.append(name)
        if wanted not in (None, name):
            return _Unused()  # type: ignore[return-value]
        p = sub.add_parser(name, help=help, description=help, parents=list(parents), usage=usage,
                           epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(handler=handler)
        return p

    p = add("check", cmd_check, "decide whether COMMAND may run in plan mode", (config, cwd),
            "%(prog)s [-h] [--json] [--exit-zero] [--config FILE] [--cwd DIR] (COMMAND | -)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 for a denial too (errors still exit 2), as ruff's --exit-zero")
    p.add_argument("command", **command)

    p = add("explain", cmd_explain, "show the words and literal values the checker read",
            (config, cwd), "%(prog)s [-h] [--config FILE] [--cwd DIR] (COMMAND | -)")
    p.add_argument("command", **command)

    p = add("programs", cmd_programs, "list the allowed and denied programs, or show one's spec",
            (config,))
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("name", nargs="?", metavar="NAME")

    p = add("codes", cmd_codes, "list the denial codes, or show one code's page")
    p.add_argument("code", nargs="?", metavar="CODE", help="a code such as BP400, or its name")

    p = add("test", cmd_test, "run corpora of expected verdicts (format: docs/integrations.md, Corpus files)",
            (config,))
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="corpus files, or directories whose *.txt files are read recursively "
                        "(default: corpora)")

    p = add("hook", cmd_hook, "answer a Claude Code PreToolUse or Gemini CLI BeforeTool event "
                              "on stdin (docs/integrations.md)", (config,))
    p.add_argument("harness", choices=sorted(HARNESSES))
    p.add_argument("--always", action="store_true",
                   help="enforce plan mode whatever the session's mode (Gemini CLI's events "
                        "carry no mode, so there it always applies)")
    p.add_argument("--allow-readonly", action="store_true",
                   help="answer allow for commands the policy allows (no prompt); otherwise "
                        "give no opinion")
    p.add_argument("--plan-file", action="append", default=[], metavar="GLOB",
                   help="a file the plan may be written to (repeatable; replaces the default: "
                        "Claude Code's plan file for the session, Gemini CLI's "
                        "$GEMINI_PLANS_DIR/*.md)")
    p.add_argument("--way-out", metavar="TEXT", help="how the user leaves plan mode, named in "
                                                     "every denial")
    p.add_argument("--no-confine", action="store_true",
                   help="do not rewrite allowed commands to run under `bash-policy run`: they "
                        "run in the client's own shell, judged for that shell")
    p.add_argument("--print-config", action="store_true",
                   help="print the settings snippet that installs this hook")

    p = add("serve", cmd_serve, "check commands sent as JSON lines on stdin, one verdict a line",
            (config, cwd))

    p = add("run", cmd_run, "check COMMAND, then run it in a hardened bash only if allowed",
            (config, cwd), "%(prog)s [-h] [--config FILE] [--cwd DIR] [--timeout SECONDS] "
                           "[--max-output BYTES] [--] COMMAND")
    # Defaults filled in by cmd_run, so that other subcommands need not import the runner.
    p.add_argument("--timeout", type=_positive(float), metavar="SECONDS")
    p.add_argument("--max-output", type=_positive(int), metavar="BYTES")
    p.add_argument("command", **command)
    return top if wanted is None or wanted in names else build_parser()


# -- output --------------------------------------------------------------------

def _emit(text: str) -> None:
    """Print; if the reader has gone (`| head`), stop writing quietly so the
    exit status is still the verdict's."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def use_color(stream, env=os.environ) -> bool:
    """FORCE_COLOR wins (a value of 0 or false turns colour off), then
    NO_COLOR (https://no-color.org), then whether `stream` is a terminal."""
    force = env.get("FORCE_COLOR")
    if force is not None:
        return force.lower() not in ("0", "false")
    if env.get("NO_COLOR"):
        return False
    return stream.isatty() and env.get("TERM") != "dumb"


# -- subcommands ---------------------------------------------------------------

def _command(args) -> str:
    words = list(args.command)
    if words[:1] == ["--"]:
        words.pop(0)
    prog = f"bash-policy {args.subcommand}"
    if not words:
        raise UsageError(prog, "give the COMMAND to check, quoted, or - to read it from stdin")
    if len(words) > 1:
        if any(w.split("=", 1)[0] in ("--json", "--config", "--cwd") for w in words[1:]):
            raise UsageError(prog, "options go before the COMMAND")
        import shlex

        raise UsageError(prog, "give the command as one argument: "
                               f"{prog} {shlex.quote(' '.join(words))}")
    if words[0] == "-":
        data = sys.stdin.buffer.read()
        return data.decode("utf-8", "surrogateescape").removesuffix("\n")
    return words[0]


def _policy(args):
    from .integrations.config import load_policy

    return load_policy(args.config, getattr(args, "cwd", "."))


def cmd_check(args) -> int:
    from .judge.engine import check
    from .render import as_json, text

    command = _command(args)
    verdict = check(command, _policy(args), cwd=args.cwd)
    _emit(as_json(verdict) if args.json
          else text(verdict, color=use_color(sys.stdout), pointers=True))
    return 0 if verdict.allowed or args.exit_zero else 1


def cmd_explain(args) -> int:
    from .explain import explain

    command = _command(args)
    report, allowed = explain(command, _policy(args), cwd=args.cwd, color=use_color(sys.stdout))
    _emit(report)
    return 0 if allowed else 1


def cmd_programs(args) -> int:
    import json

    from .reference import describe, describe_json, listing, listing_json

    policy = _policy(args)
    if args.name is None:
        _emit(json.dumps(listing_json(policy)) if args.json else listing(policy))
        return 0
    spec = policy.spec(args.name)
    if spec is None:
        print(f"bash-policy programs: {args.name} is not a known program, so it is denied "
              "(BP300)", file=sys.stderr)
        return 1
    import shutil

    width = shutil.get_terminal_size((80, 24)).columns
    _emit(json.dumps(describe_json(spec)) if args.json else describe(spec, width))
    return 0


def cmd_codes(args) -> int:
    from .judge.codes import CODES
    from .reference import code_listing, code_page

    if args.code is None:
        _emit(code_listing(CODES))
        return 0
    wanted = args.code.strip()
    found = CODES.get(wanted.upper()) or next(
        (c for c in CODES.values() if c.name == wanted.lower()), None)
    if found is None:
        raise UsageError("bash-policy codes", f"unknown code {wanted!r}; "
                                              "`bash-policy codes` lists them")
    _emit(code_page(found))
    return 0


def cmd_test(args) -> int:
    import json

    from .corpus import CorpusError, run
    from .render import text

    paths = args.paths or ["corpora"]
    if not args.paths and not os.path.isdir("corpora"):
        raise UsageError("bash-policy test", "give corpus files or directories "
                                             "(the default, ./corpora, does not exist)")
    try:
        results = run(paths, _policy(args))
    except CorpusError as error:
        print(f"bash-policy test: {error}", file=sys.stderr)
        return 2
    except FileNotFoundError as error:
        print(f"bash-policy test: {error.filename}: no such file", file=sys.stderr)
        return 2
    files: dict[str, list] = {}
    for r in results:
        files.setdefault(r.case.path, []).append(r)
    failed = sum(not r.ok for r in results)
    if args.json:
        _emit(json.dumps({"passed": len(results) - failed, "failed": failed, "files": [
            {"path": path, "passed": sum(r.ok for r in rs), "failed": sum(not r.ok for r in rs),
             "failures": [{"line": r.case.line, "expected": r.case.expect,
                           "codes": list(r.case.codes), "command": r.case.command,
                           "verdict": r.verdict.to_dict()} for r in rs if not r.ok]}
            for path, rs in files.items()]}))
        return 1 if failed else 0
    color = use_color(sys.stdout)
    out = []
    for path, rs in files.items():
        for r in rs:
            if not r.ok:
                want = r.case.expect + (" " + ",".join(r.case.codes) if r.case.codes else "")
                out.append(f"{path}:{r.case.line}: expected {want}: {r.case.command!r}")
                out.append("  got " + text(r.verdict, color=color).replace("\n", "\n  "))
        bad = sum(not r.ok for r in rs)
        out.append(f"{path}: {len(rs) - bad} passed, {bad} failed")
    out.append(f"{len(results) - failed} passed, {failed} failed")
    _emit("\n".join(out))
    return 1 if failed else 0


def cmd_hook(args) -> int:
    from .integrations import adapters
    from .integrations.harnesses import HARNESSES

    harness = HARNESSES[args.harness]
    opts = adapters.Options(always=args.always, allow_readonly=args.allow_readonly,
                            plan_files=args.plan_file, way_out=args.way_out, config=args.config,
                            confine=not args.no_confine)
    if args.print_config:  # the hook runs in the client's directory: name the config absolutely
        opts.config = os.path.abspath(opts.config) if opts.config else None
        _emit(adapters.settings_snippet(harness, opts))
        return 0
    return adapters.main(harness, opts)


def cmd_serve(args) -> int:
    from .integrations.serve import Policies, serve

    policies = Policies(args.config, args.cwd)
    stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
    serve(stdin, sys.stdout, policies)
    return 0


def cmd_run(args) -> int:
    from .integrations.runner import (
        DEFAULT_MAX_OUTPUT,
        DEFAULT_TIMEOUT,
        DENIED_EXIT,
        TIMEOUT_EXIT,
        run,
    )
    from .render import text

    command = _command(args)
    timeout, max_output = args.timeout or DEFAULT_TIMEOUT, args.max_output or DEFAULT_MAX_OUTPUT
    result = run(command, cwd=args.cwd, policy=_policy(args), timeout=timeout,
                 max_output=max_output)
    if not result.ran:
        print(f"bash-policy: not run: {text(result.verdict)}", file=sys.stderr)
        return DENIED_EXIT
    try:
        sys.stdout.buffer.write(result.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.stderr.buffer.write(result.stderr)
    if result.truncated:
        print(f"\nbash-policy: output cut at {max_output} bytes; the command was stopped",
              file=sys.stderr)
    if result.timed_out:
        print(f"\nbash-policy: stopped after {timeout:g}s", file=sys.stderr)
        return TIMEOUT_EXIT
    code = result.returncode or 0
    return 128 - code if code < 0 else code


# -- entry point ---------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    from .judge.policy import ConfigError

    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # echoing invalid UTF-8 back must not crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser(argv[0] if argv else None)
    if not argv:
        parser.print_help(sys.stderr)
        return 2
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # reported here so that the pointer names the subcommand's help
            raise UsageError(f"bash-policy {args.subcommand}",
                             f"unrecognized arguments: {' '.join(extra)}")
        return args.handler(args)
    except UsageError as error:
        print(f"{error}\nSee '{error.prog} --help'.", file=sys.stderr)
        return 2
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else 0
    except (ConfigError, OSError) as error:
        print(f"bash-policy: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug: a message and exit 2, never a traceback and exit 1
        print(f"bash-policy: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
