"""The `bash-policy` command: translates arguments into library calls.

One argparse parser with a subcommand each; `--config` and `--cwd` come
from shared parents and every subcommand finds its policy with the same
`load_policy()`.  The CLI decides nothing itself.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, NoReturn

EXIT_CODES = """\
exit status (each subcommand's --help gives its own):
  0  allowed, every case passed, or done
  1  denied, or a corpus case failed
  2  usage, config or internal error
  run: the command's own status, 124 timed out, 137 stopped at the output cap, 126 denied
  hook: 0 with the answer on stdout, 2 blocks the call (any failure)
  confine: the program's own status, 124 timed out, 126 not confined, 127 not found"""

_ERROR = "  2  usage, config or internal error"
# Each subcommand's exit statuses, shown at the end of its --help.
EXITS = {
    "check": "  0  allowed (with --exit-zero, denied too; with --fix, a command that passes was printed)\n"
             "  1  denied (with --fix: no rewrite applies)\n" + _ERROR,
    "explain": "  0  allowed\n  1  denied\n" + _ERROR,
    "programs": "  0  listed, or NAME shown\n  1  NAME is not a known program (so it is denied, BP300)\n"
                + _ERROR,
    "codes": "  0  listed, or CODE shown\n  2  unknown code",
    "test": "  0  every case has its expected verdict\n  1  a case has another verdict\n"
            "  2  a corpus line or file is malformed (every problem is reported, and every case that\n"
            "     parses is still run), or a usage, config or internal error",
    "audit": "  0  every file was read and every command checked, whatever the verdicts\n"
             "  2  a file could not be read or is in no known format (the others are still\n"
             "     reported), or a usage, config or internal error",
    "hook": "  0  the answer is on stdout (allow, deny, or no opinion)\n"
            "  2  the tool call is blocked: the event or options are unusable, or anything failed\n"
            "     (stderr says why); the settings snippet adds `|| exit 2` for a hook that cannot start",
    "serve": "  0  end of input\n  2  usage or config error at start (a bad request line gets an\n"
             "     error answer and the server reads on)",
    "run": "  N    the command's own status, when it ran to its end\n"
           "  124  stopped at the --timeout (killed with its whole session)\n"
           "  137  stopped at the output cap: --max-output bytes of a stream were kept and the\n"
           "       command was killed (128 + SIGKILL); stderr ends with `bash-policy: output cut`\n"
           "  126  denied: nothing ran; the verdict is on stderr (or --confine required and\n"
           "       the kernel offers no full confinement)\n"
           "  2    usage or config error: nothing ran\n"
           "  (the command itself may exit 2, 124, 126 or 137: read stderr's `bash-policy:` lines)",
    "confine": "  N    the program's own status\n"
               "  124  stopped at the --timeout\n"
               "  126  not run: the kernel offers no full confinement here (stderr says which step)\n"
               "  127  the program was not found\n" + _ERROR,
    "doctor": "  0  reported (whatever the machine offers)\n" + _ERROR,
    "trust": "  0  trusted, listed or removed\n  1  --remove: PATH was not trusted\n"
             "  2  no config governs PATH, or a usage or config error",
}
SERVE_PROTOCOL = """\
Checks commands sent as JSON lines on stdin; one answer a line on stdout, in order.

  request  {"id": ANY, "command": "rg -n foo src", "cwd": "/repo"}
           cwd is optional (default --cwd); it is where the command runs, and it
           selects the config governing that directory unless --config is given
           or "config_from": DIR names the directory whose config governs
           optional "text": true adds "text", the verdict as check prints it;
           "run": true adds "run" for an allowed command: it under bash-policy run
  answer   {"id": ANY, "verdict": {...}}: the object `bash-policy check --json`
           prints (schema_version 1; docs/model.md)
           {"id": ANY or null, "error": "..."}: the line was unusable (not JSON, no
           command string, a cwd that is not a directory); treat it as a denial;
           null only for a line that is not a JSON object (answers keep order)

The server reads until end of input.  The echo of a command longer than the
policy's max_length (denied BP103) is cut short.  docs/integrations.md has a
client, bash_policy/integrations/js/serve-client.mjs."""


class UsageError(Exception):
    """A usage mistake: one line, then a pointer to the subcommand's --help."""

    def __init__(self, prog: str, message: str):
        super().__init__(f"{prog}: {message}")
        self.prog = prog


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message)


def _directory(value: str) -> str:
    """An absolute directory; a relative one (the default `.` included) is
    taken from the logical $PWD, as the shell that runs the command takes
    `cd ..` and a program its `pwd` (red team RT-E: with the physical path,
    `cd .. && git status` in a linked directory was judged in the wrong
    repository)."""
    if not os.path.isdir(value):
        reason = "does not exist" if not os.path.exists(value) else "is not a directory"
        raise argparse.ArgumentTypeError(f"{value!r} {reason}")
    return os.path.abspath(value) if os.path.isabs(value) else os.path.normpath(
        os.path.join(_logical_cwd(), value))


def _logical_cwd() -> str:
    """$PWD where bash would keep it: absolute, without `.` or `..`
    components, naming the current directory; else getcwd()."""
    pwd = os.environ.get("PWD", "")
    try:
        if (os.path.isabs(pwd) and "\0" not in pwd and not {".", ".."} & set(pwd.split("/"))
                and os.path.samefile(pwd, ".")):
            return pwd
    except (OSError, ValueError):
        pass
    return os.getcwd()


def _positive(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    """A number above 0; as seconds (a float), at most a year (inf or 1e308
    overflowed the clock arithmetic: red team RT-B)."""
    def convert(value: str):
        number = kind(value)
        if not 0 < number or (kind is float and not number <= 366 * 86400):
            raise ValueError(value)
        return number

    convert.__name__ = kind.__name__
    return convert


class _Unused:
    """Stands for the parser of a subcommand this run does not need: every
    ArgumentParser costs gettext file look-ups, a tenth of a check's start."""

    def add_argument(self, *args, **kwargs) -> None:
        pass

    def add_mutually_exclusive_group(self, *args, **kwargs) -> _Unused:
        return self


class _Help(argparse.RawDescriptionHelpFormatter):
    """Help that names every option's default: its value, or "off" for a switch."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        # argparse makes a formatter for every argument it adds, and without a
        # width it imports shutil (4 ms, with bz2 and lzma) to ask the terminal.
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if not action.option_strings or "default" in text or action.default is argparse.SUPPRESS:
            return text
        if action.nargs == 0:  # a switch
            return f"{text} (default: off)"
        return text if action.default is None else f"{text} (default: %(default)s)"


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    stdout = sys.__stdout__
    if columns <= 0 and stdout is not None:
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Version(argparse.Action):
    """--version: the version and the reader stack, looked up only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace, values, option_string=None) -> NoReturn:
        print(version_text())
        parser.exit()


def version_text() -> str:
    """`bash-policy X` and what reads the commands: bash's grammar (the exact
    reader), tree-sitter with its bash grammar, and bashlex if installed."""
    from importlib import metadata

    from . import __version__
    from .read.exact import GRAMMAR

    def installed(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    ts, ts_bash, bashlex = installed("tree-sitter"), installed("tree-sitter-bash"), installed("bashlex")
    return "\n".join([
        f"bash-policy {__version__}",
        f"exact reader: {GRAMMAR}",
        f"tree-sitter {ts or 'not installed'}, tree-sitter-bash {ts_bash or 'not installed'}",
        f"bashlex {bashlex} (cross-check)" if bashlex else "bashlex not installed (the cross-check "
        "compares tree-sitter alone; pip install 'bash-policy[crosscheck]')",
    ])


def build_parser(wanted: str | None = None) -> Parser:
    """The parser; when `wanted` names a subcommand, only that subcommand's
    own parser is built (anything else, such as --help, gets them all)."""
    def needed(name: str) -> bool:
        return wanted in (None, name)

    def choices(module: str, name: str, *subcommands: str) -> tuple[str, ...]:
        """The names `module.name` lists, imported only to build one of `subcommands`."""
        if not any(needed(s) for s in subcommands):
            return ()
        from importlib import import_module

        return tuple(getattr(import_module(module, __package__), name))

    config = Parser(add_help=False)
    config.add_argument("--config", metavar="FILE",
                        help="a bash-policy.toml or pyproject.toml (default: the nearest one from "
                             "the directory up to the repository root)")
    config.add_argument("--show-config", action="store_true",
                        help="print which config file governs here, how it was found, and the "
                             "settings merged with the defaults, then exit")
    cwd = Parser(add_help=False)
    cwd.add_argument("--cwd", metavar="DIR", type=_directory, default=".",
                     help="the directory the command runs in (default: the current one, by the "
                          "path $PWD gives it, from which the shell follows `cd ..`; a relative DIR "
                          "is taken from there too)")
    output = Parser(add_help=False)
    output.add_argument("--output-format", choices=choices(".formats", "FORMATS", "check", "test", "audit"),
                        default="text",
                        help="text for people; json (one document), json-lines (one object a "
                             "line), github (workflow annotations) or sarif (SARIF 2.1.0)")
    output.add_argument("--json", dest="output_format", action="store_const", const="json",
                        help="the same as --output-format json (default: off)")
    output.add_argument("--statistics", action="store_true",
                        help="print only the number of denials per code (and how many have a fix)")
    verbose = Parser(add_help=False)
    verbose.add_argument("--verbose", action="store_true",
                         help="also print the notes of each verdict (what the cross-check compared)")
    command: dict[str, Any] = {"nargs": argparse.REMAINDER, "metavar": "COMMAND",
               "help": "the command line, quoted as one argument, or - to read it from stdin"}

    top = Parser(prog="bash-policy", epilog=EXIT_CODES, formatter_class=_Help,
                 description="Decide whether a shell command may run in an AI agent's "
                             "read-only plan mode.")
    top.add_argument("--version", action=_Version,
                     help="print the version and the readers (bash grammar, tree-sitter, bashlex)")
    sub = top.add_subparsers(dest="subcommand", metavar="COMMAND", required=True)

    names: list[str] = []

    def add(name: str, handler, help: str, parents=(), usage: str | None = None,
            description: str | None = None) -> Parser:
        names.append(name)
        if not needed(name):
            return _Unused()  # type: ignore[return-value]
        epilog = f"exit status:\n{EXITS[name]}" if name in EXITS else EXIT_CODES
        if description is not None and "\n" not in description:
            import textwrap

            description = textwrap.fill(description, 79)
        p = sub.add_parser(name, help=help, description=description or help, parents=list(parents),
                           usage=usage, epilog=epilog, formatter_class=_Help)
        p.set_defaults(handler=handler)
        return p

    p = add("check", cmd_check, "decide whether COMMAND may run in plan mode", (config, cwd, output, verbose),
            "%(prog)s [-h] [--output-format FORMAT] [--fix [--unsafe-fixes]] [--exit-zero] "
            "[--config FILE] [--cwd DIR] (COMMAND | -)")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 for a denial too (errors still exit 2), as ruff's --exit-zero")
    p.add_argument("--fix", action="store_true",
                   help="print the command to run instead of the verdict: COMMAND itself if it is "
                        "allowed, else its rewrite if that has a safe fix (what changed goes to stderr)")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix, also apply fixes that change what the command does (they drop "
                        "a write, a wait or a preprocessor)")
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
            (config, output, verbose))
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="corpus files, or directories whose *.txt files are read recursively "
                        "(default: corpora)")

    p = add("audit", cmd_audit, "check every shell command in agent transcripts: what plan mode "
                                "would have allowed and denied", (config, output),
            description="Check every shell command an agent ran, as its client recorded it, and "
                        "report what plan mode would have allowed and denied.  Reads Claude Code "
                        "session JSONL (~/.claude/projects/*/*.jsonl), Codex CLI rollouts "
                        "(~/.codex/sessions/**/rollout-*.jsonl), Gemini CLI chat recordings "
                        "(~/.gemini/tmp/*/chats/session-*), OpenCode exports (`opencode export "
                        "ID`, `opencode run --format json`), bash-policy corpora, and plain text "
                        "(one command a line).")
    p.add_argument("--input-format", choices=choices(".audit", "FORMATS", "audit"), default="auto",
                   help="the files' format (default: auto, found from their content)")
    p.add_argument("--cwd", metavar="DIR", type=_directory,
                   help="check every command as if run in DIR (default: in the directory the "
                        "client recorded, when it exists here, else in none)")
    p.add_argument("--top", type=_positive(int), default=10, metavar="N",
                   help="how many of the most frequent denials to show")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("paths", nargs="+", metavar="FILE",
                   help="transcript files, or directories whose *.jsonl, *.json and *.txt files "
                        "are read recursively")

    p = add("hook", cmd_hook, "answer a client's tool-call hook event on stdin: Claude Code, "
                              "Gemini CLI, Codex CLI, Copilot CLI, Qwen Code; or print the OpenCode "
                              "plugin or the pi extension (docs/integrations.md)", (config,))
    p.add_argument("harness", choices=sorted(choices(".integrations.harnesses", "HARNESSES", "hook")
                                             + choices(".integrations.plugins", "PLUGINS", "hook")))
    p.add_argument("--always", action="store_true",
                   help="enforce plan mode whatever the session's mode (the events of Gemini, "
                        "Codex and Copilot CLI carry no mode, so there it always applies)")
    p.add_argument("--allow-readonly", action="store_true",
                   help="answer allow for commands the policy allows (no prompt); otherwise "
                        "give no opinion (not for Codex CLI, which takes no plain allow)")
    p.add_argument("--rewrite", action="store_true",
                   help="run a denied command's safe rewrite instead, where the client can change "
                        "a call's input (Claude Code, Gemini CLI), and tell the model what changed")
    p.add_argument("--no-confine", dest="confine", action="store_false",
                   help="do not rewrite allowed commands to run under `bash-policy run` "
                        "(Claude Code, Gemini CLI, Codex CLI; Copilot CLI with --allow-readonly; "
                        "OpenCode, pi; in Claude Code not in its own plan mode after 2.1.197, "
                        "nor where your settings hold deny or ask rules: docs/integrations.md): "
                        "in Claude Code and Gemini CLI they then run in the "
                        "client's own shell, judged for that shell")
    p.add_argument("--plan-file", action="append", default=[], metavar="GLOB",
                   help="a file the plan may be written to (repeatable; default: "
                        "Claude Code's plan file for the session, Gemini CLI's "
                        "$GEMINI_PLANS_DIR/*.md, Copilot CLI's session plan.md; Codex: none)")
    p.add_argument("--way-out", metavar="TEXT", help="how the user leaves plan mode, named in "
                                                     "every denial (default: the client's own way)")
    p.add_argument("--agent", action="append", default=[], metavar="NAME",
                   help="opencode: an agent whose bash calls are checked (repeatable; default: plan)")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--print-config", action="store_true",
                        help="print the settings snippet that installs this hook (opencode, pi: "
                             "the plugin file)")
    action.add_argument("--check", action="store_true",
                        help="run an allowed and a denied sample event through the hook the "
                             "client's settings install, and report what the client will do")
    action.add_argument("--install", action="store_true",
                        help="merge the snippet into the client's user settings (backed up; "
                             "Codex: also trusted)")
    p.add_argument("--settings", metavar="FILE",
                   help="the settings file to check or install into (default: the ones the "
                        "client reads; for --install its user settings)")
    p.add_argument("--client", metavar="PATH",
                   help="the client's executable, where --check or --install need it (Codex "
                        "CLI's hook trust; default: `codex` on PATH)")

    p = add("serve", cmd_serve, "check commands sent as JSON lines on stdin, one verdict a line",
            (config, cwd), description=SERVE_PROTOCOL)

    p = add("run", cmd_run, "check COMMAND, then run it in a hardened bash, confined by the kernel, "
                            "only if allowed", (config, cwd),
            "%(prog)s [-h] [--config FILE] [--cwd DIR] [--timeout SECONDS] "
            "[--max-output BYTES] [--confine MODE] [--] COMMAND")
    # Defaults filled in by cmd_run, so that other subcommands need not import the runner.
    p.add_argument("--timeout", type=_positive(float), metavar="SECONDS",
                   help="kill the command and its whole session after SECONDS (default: 60)")
    p.add_argument("--max-output", type=_positive(int), metavar="BYTES",
                   help="keep at most BYTES of each of stdout and stderr, then stop the command "
                        "(default: 1048576)")
    p.add_argument("--confine", choices=("auto", "required", "off"), metavar="MODE",
                   help="auto: confine wherever the kernel offers it; required: refuse to run "
                        "(exit 126) without full confinement; off: never (default: the config's "
                        "`confine`, else auto)")
    p.add_argument("command", **command)

    p = add("confine", cmd_confine, "run a program under the kernel sandbox alone, without the "
            "static check: not a plan-mode gate by itself (it does not judge the command; it "
            "makes every write, network use and signal outside fail)", (cwd,),
            "%(prog)s [-h] [--cwd DIR] [--timeout SECONDS] -- PROGRAM [ARG...]")
    p.add_argument("--timeout", type=_positive(float), metavar="SECONDS",
                   help="kill the program and all it started after this long (default: no limit)")
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="PROGRAM")

    p = add("doctor", cmd_doctor, "say which confinement this machine offers, and why not, and "
            "check every installed hook with an allowed and a denied sample event "
            "(exit 1 when an installed hook would not block)", (cwd,))
    p.add_argument("--json", action="store_true", help="print JSON")

    p = add("trust", cmd_trust, "let a repository's config loosen the policy, once you have reviewed it",
            usage="%(prog)s [-h] [PATH | --list | --remove PATH]",
            description="A config found in the directory being explored (bash-policy.toml, or "
                        "[tool.bash-policy] in pyproject.toml) may tighten the policy, but what it "
                        "loosens (programs, variables, write targets, confine = \"off\", ...) takes "
                        "effect only once you trust it: the check, the hooks, serve and run refuse "
                        "it until then.  Trusting records the file's path and a digest of its "
                        "settings in $XDG_CONFIG_HOME/bash-policy/trusted.toml; changing those "
                        "settings needs trusting again.  A file named with --config needs no trust.")
    p.add_argument("path", nargs="?", metavar="PATH",
                   help="the config file, or a directory whose governing config is meant (default: .)")
    p.add_argument("--list", action="store_true",
                   help="list the trusted files, and whether each still holds the settings trusted")
    p.add_argument("--remove", action="store_true", help="forget PATH's config")
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

    return load_policy(args.config, getattr(args, "cwd", None) or ".")


def cmd_check(args) -> int:
    from .judge.engine import check

    command = _command(args)
    if args.unsafe_fixes and not args.fix:
        raise UsageError("bash-policy check", "--unsafe-fixes goes with --fix")
    if args.fix and (args.output_format != "text" or args.statistics):
        raise UsageError("bash-policy check", "--fix prints a command: it takes no --output-format "
                                              "or --statistics")
    verdict = check(command, _policy(args), cwd=args.cwd)
    if args.fix:
        return _print_fix(verdict, args.unsafe_fixes)
    _emit(_verdict_output(verdict, args))
    return 0 if verdict.allowed or args.exit_zero else 1


def _verdict_output(verdict, args) -> str:
    from . import __version__
    from .formats import denial_annotations, dumps, github, sarif, statistics, statistics_text
    from .render import text

    fmt = args.output_format
    if args.statistics:
        rows = statistics([verdict])
        return dumps(rows) if fmt in ("json", "json-lines") else statistics_text(rows)
    if fmt in ("json", "json-lines"):
        return dumps(verdict.to_dict())
    if fmt == "github":
        return github(denial_annotations(verdict))
    if fmt == "sarif":
        return dumps(sarif(denial_annotations(verdict), __version__, command=verdict.command))
    return text(verdict, color=use_color(sys.stdout), pointers=True, notes=args.verbose)


def _print_fix(verdict, unsafe: bool) -> int:
    """`check --fix`: the command to run on stdout, what changed on stderr."""
    from .render import escape, text

    if verdict.allowed:
        _emit(verdict.command)
        return 0
    fix = verdict.fix
    if fix is None or fix.command is None or (fix.applicability != "safe" and not unsafe):
        print(text(verdict, pointers=True, notes=False), file=sys.stderr)
        if fix is not None and fix.command is not None:
            print(f"bash-policy check: an unsafe fix exists ({escape(fix.command)}); "
                  "--unsafe-fixes applies it", file=sys.stderr)
        return 1
    _emit(fix.command)
    for d in verdict.denials:
        print(f"bash-policy check: fixed {d.code} {d.name} ({fix.applicability}): {escape(d.message)}",
              file=sys.stderr)
    return 0


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
    from .corpus import run

    paths = args.paths or ["corpora"]
    if not args.paths and not os.path.isdir("corpora"):
        raise UsageError("bash-policy test", "there is no ./corpora here to read.  To start one, write "
                                             "corpora/commands.txt with a case a line, such as "
                                             "`allow  rg -n TODO src` and `deny BP500  rg foo > out`, "
                                             "and run bash-policy test again (the format: "
                                             "docs/integrations.md#corpus-files); or name corpus files")
    # The corpora test the repository's own config, which decides nothing that runs:
    # trusted as found.
    from .integrations.config import load_policy

    report = run(paths, load_policy(args.config, ".", trust_all=True))
    _emit(_test_output(report, args))
    if report.problems and args.output_format == "text" and not args.statistics:
        for problem in report.problems:
            print(f"bash-policy test: {problem}", file=sys.stderr)
    return 2 if report.problems else 1 if report.failed else 0


def _test_output(report, args) -> str:
    from . import __version__
    from .formats import Annotation, dumps, github, sarif, schema_document, statistics, statistics_text
    from .render import escape, text

    fmt = args.output_format
    if args.statistics:
        rows = statistics(r.verdict for r in report.results)
        return dumps(rows) if fmt in ("json", "json-lines") else statistics_text(rows)

    def failure(r) -> dict:
        return {"path": r.case.path, "line": r.case.line, "expected": r.case.expect,
                "codes": list(r.case.codes), "command": r.case.command, "verdict": r.verdict.to_dict()}

    problems = [{"path": p.path, "line": p.line, "message": p.message} for p in report.problems]
    files: dict[str, list] = {}
    for r in report.results:
        files.setdefault(r.case.path, []).append(r)
    if fmt == "json":
        failed = len(report.failed)
        return dumps(schema_document(
            "test", passed=len(report.results) - failed, failed=failed, problems=problems,
            files=[{"path": path, "passed": sum(r.ok for r in rs), "failed": sum(not r.ok for r in rs),
                    "failures": [failure(r) for r in rs if not r.ok]} for path, rs in files.items()]))
    if fmt == "json-lines":
        return "\n".join([dumps({"kind": "problem", **p}) for p in problems]
                         + [dumps({"kind": "failure", **failure(r)}) for r in report.failed])
    if fmt in ("github", "sarif"):
        notes = [Annotation("corpus-line", p.message, p.path, p.line) for p in report.problems]
        for r in report.failed:
            got = "allowed" if r.verdict.allowed else "denied: " + "; ".join(
                f"{d.code} {d.name}: {escape(d.message)}" for d in r.verdict.denials)
            want = r.case.expect + (" " + ",".join(r.case.codes) if r.case.codes else "")
            notes.append(Annotation("corpus-verdict", f"expected {want}, got {got}: {escape(r.case.command)}",
                                    r.case.path, r.case.line))
        return github(notes) if fmt == "github" else dumps(sarif(notes, __version__))
    color = use_color(sys.stdout)
    out = []
    for path, rs in files.items():
        for r in rs:
            if not r.ok:
                want = r.case.expect + (" " + ",".join(r.case.codes) if r.case.codes else "")
                out.append(f"{path}:{r.case.line}: expected {want}: {escape(repr(r.case.command))}")
                out.append("  got " + text(r.verdict, color=color, notes=args.verbose).replace("\n", "\n  "))
        bad = sum(not r.ok for r in rs)
        out.append(f"{path}: {len(rs) - bad} passed, {bad} failed")
    if report.problems:
        out.append(f"{len(report.problems)} malformed corpus line{'s' if len(report.problems) != 1 else ''} "
                   "(on stderr)")
    out.append(f"{len(report.results) - len(report.failed)} passed, {len(report.failed)} failed")
    return "\n".join(out)


def cmd_audit(args) -> int:
    from .audit import audit

    policy = _policy(args)
    progress = None if args.quiet else sys.stderr
    report = audit(args.paths, policy, fmt=args.input_format, cwd=args.cwd, progress=progress)
    _emit(_audit_output(report, args))
    for path, why in report.unreadable:
        print(f"bash-policy audit: {path}: {why}", file=sys.stderr)
    return 2 if report.unreadable else 0


def _audit_output(report, args) -> str:
    from . import __version__
    from .audit import summary, text_report
    from .formats import denial_annotations, dumps, github, sarif, statistics, statistics_text

    fmt = args.output_format
    if args.statistics:
        rows = statistics(c.verdict for c in report.denied)
        return dumps(rows) if fmt in ("json", "json-lines") else statistics_text(rows)
    if fmt == "json":
        return dumps(summary(report, args.top))
    if fmt == "json-lines":
        return "\n".join(dumps({"path": c.command.path, "line": c.command.line, "client": c.command.client,
                                "command": c.command.text, "allowed": c.verdict.allowed,
                                "codes": [d.code for d in c.verdict.denials],
                                "fix": c.verdict.fix.to_dict() if c.verdict.fix else None})
                         for c in report.checked)
    if fmt in ("github", "sarif"):
        notes = [a for c in report.denied
                 for a in denial_annotations(c.verdict, c.command.path, c.command.line or 1, level="warning")]
        return github(notes) if fmt == "github" else dumps(sarif(notes, __version__))
    return text_report(report, args.top)


def cmd_hook(args) -> int:
    from .integrations import adapters
    from .integrations.harnesses import HARNESSES
    from .integrations.plugins import PLUGINS

    if args.harness in PLUGINS:
        return _print_plugin(args, PLUGINS[args.harness])
    if args.agent:
        raise UsageError("bash-policy hook", f"--agent is for opencode, not {args.harness}")
    harness = HARNESSES[args.harness]
    opts = adapters.Options(always=args.always, allow_readonly=args.allow_readonly,
                            plan_files=args.plan_file, way_out=args.way_out, config=args.config,
                            rewrite=args.rewrite, confine=args.confine)
    if args.rewrite and harness.name not in adapters.INPUT_REWRITES:
        raise UsageError("bash-policy hook", f"--rewrite: not for {harness.client} yet (Claude Code "
                                             "and Gemini CLI only)")
    if args.allow_readonly and not harness.answers_allow:
        raise UsageError("bash-policy hook", f"--allow-readonly: {harness.client} takes no plain "
                                             "allow from a hook (it counts as a failed hook)")
    if args.print_config or args.install:  # the hook runs elsewhere: name the config absolutely
        opts.config = os.path.abspath(opts.config) if opts.config else None
    if args.print_config:
        _emit(adapters.settings_snippet(harness, opts))
        if harness.name == "codex":
            print(CODEX_TRUST, file=sys.stderr)
        return 0
    if args.check or args.install:
        from .integrations import install

        return install.main(harness, opts, "install" if args.install else "check",
                            args.settings, args.client)
    return adapters.main(harness, opts)


def _print_plugin(args, plugin) -> int:
    """The plugin file: these are settings of the file, not a hook command."""
    from .integrations.adapters import executable_argv
    from .integrations.plugins import render

    prog = f"bash-policy hook {plugin.name}"
    if not args.print_config:
        raise UsageError(prog, f"{plugin.client} runs bash-policy as a plugin, not as a command hook: "
                               f"`{prog} --print-config` prints the file to install")
    unused = [flag for flag, given in (
        ("--always", args.always), ("--allow-readonly", args.allow_readonly), ("--rewrite", args.rewrite),
        ("--plan-file", args.plan_file), ("--settings", args.settings), ("--client", args.client),
        ("--agent", args.agent and plugin.name != "opencode")) if given]
    if unused:
        raise UsageError(prog, f"{', '.join(unused)} does not apply to {plugin.client}")
    serve = [*executable_argv(), "serve"]
    if args.config:
        serve += ["--config", os.path.abspath(args.config)]
    settings: dict[str, Any] = {"command": serve, "confine": args.confine}
    if args.agent:
        settings["agents"] = args.agent
    if args.way_out is not None:
        settings["wayOut"] = args.way_out
    _emit(render(plugin, settings))
    return 0


CODEX_TRUST = """\
Put this in ~/.codex/hooks.json (or $CODEX_HOME/hooks.json), then trust it: Codex runs a
hook only once its exact definition is trusted, and skips an untrusted one without a word.
Run `codex`, open /hooks and trust the bash-policy hook, or let
`bash-policy hook codex --install` do both.  Check it with `bash-policy hook codex --check`."""


def cmd_serve(args) -> int:
    from .integrations.serve import Policies, serve

    policies = Policies(args.config, args.cwd)
    stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)
    serve(stdin, sys.stdout, policies)
    return 0


def cmd_run(args) -> int:
    _standard_streams_open()
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
                 max_output=max_output, confine=args.confine)
    if result.refused:
        print(f"bash-policy: not run: confinement is required here, but {result.refused}",
              file=sys.stderr)
        return DENIED_EXIT
    if not result.ran:
        print(f"bash-policy: not run: {text(result.verdict)}", file=sys.stderr)
        return DENIED_EXIT
    for note in result.verdict.notes:
        if note.startswith(("ran unconfined", "confined, except")):
            print(f"bash-policy: {note}", file=sys.stderr)
    from .render import TerminalOutput

    def shown(stream, data: bytes) -> bytes:  # on a terminal, escaped: it cannot set its modes
        return TerminalOutput()(data) if stream.isatty() else data

    try:
        sys.stdout.buffer.write(shown(sys.stdout, result.stdout))
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.stderr.buffer.write(shown(sys.stderr, result.stderr))
    if result.truncated:
        print(f"\nbash-policy: output cut at {max_output} bytes; the command was stopped",
              file=sys.stderr)
    if result.timed_out:
        print(f"\nbash-policy: stopped after {timeout:g}s", file=sys.stderr)
        return TIMEOUT_EXIT
    code = result.returncode or 0
    return 128 - code if code < 0 else code


def _standard_streams_open() -> None:
    """Give /dev/null to a closed standard descriptor, before anything opens
    a pipe that would take its number (and then be written to as fd 1 or 2)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def cmd_confine(args) -> int:
    from . import confine
    from .integrations.runner import DENIED_EXIT, TIMEOUT_EXIT

    _standard_streams_open()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError("bash-policy confine", "no program given (bash-policy confine -- PROGRAM ...)")
    # No descriptor of the caller's is handed to the sandbox: stdin is copied in
    # through a pipe of its own (a terminal gives /dev/null instead), output is
    # relayed through pipes, and shown escaped on a terminal (TIOCSTI, modes,
    # a pipe reopened for writing through /proc/self/fd).
    from .render import TerminalOutput

    shown = {fd: TerminalOutput() for fd in (1, 2) if os.isatty(fd)}
    try:
        outcome = confine.run(argv, cwd=args.cwd, timeout=args.timeout, relay=(1, 2),
                              feed=None if os.isatty(0) else 0,
                              shown=(lambda fd, data: shown[fd](data) if fd in shown else data))
    except confine.ConfinementError as error:
        print(f"bash-policy confine: not run: {error}", file=sys.stderr)
        return DENIED_EXIT
    except FileNotFoundError as error:
        from .render import escape

        print(f"bash-policy confine: {escape(argv[0])}: {error.strerror}", file=sys.stderr)
        return 127
    if outcome.timed_out:
        print(f"bash-policy confine: stopped after {args.timeout:g}s", file=sys.stderr)
        return TIMEOUT_EXIT
    return 128 - outcome.returncode if outcome.returncode < 0 else outcome.returncode


def cmd_trust(args) -> int:
    from pathlib import Path

    from .judge import trust
    from .judge.policy import ConfigError, _defaults, find_config, settings_of

    if args.list:
        if args.path or args.remove:
            raise UsageError("bash-policy trust", "--list takes no PATH")
        for recorded, digest in sorted(trust.records().items()):
            try:
                state = "trusted" if trust.digest(settings_of(Path(recorded))) == digest else \
                    "changed since (its loosening settings are refused until trusted again)"
            except ConfigError:
                state = "unreadable"
            print(f"{recorded}: {state}")
        return 0
    target = args.path or "."
    found = Path(target) if os.path.isfile(target) else find_config(target)
    if found is None:
        print(f"bash-policy trust: no config governs {os.path.abspath(target)}", file=sys.stderr)
        return 2
    path = Path(os.path.abspath(found))
    if args.remove:
        if not trust.untrust(path):
            print(f"bash-policy trust: {path} was not trusted", file=sys.stderr)
            return 1
        print(f"no longer trusted: {path}")
        return 0
    settings = settings_of(path)
    loosened = trust.widenings(settings, _defaults())
    written = trust.trust(path, settings)
    print(f"trusted: {path} (recorded in {written})")
    if loosened:
        print("it loosens the built-in policy:")
        for line in loosened:
            print(f"  {line}")
    else:
        print("it only tightens the built-in policy, which needs no trust")
    return 0


def cmd_doctor(args) -> int:
    from .confine import probe
    from .integrations import install
    from .integrations.harnesses import HARNESSES

    found = probe()
    reports = [install.check(h, cwd=args.cwd) for h in HARNESSES.values()
               if h.settings_files is not None and install.installed(h, dict(os.environ), args.cwd)]
    if args.json:
        _emit(json.dumps({"confinement": found.to_dict(), "hooks": [
            {"client": r.client, "ok": r.ok, "lines": r.lines} for r in reports]}, indent=2))
        return 0 if all(r.ok for r in reports) else 1
    state = "complete" if found.complete else "partial" if found.available else "unavailable"
    lines = [f"confinement: {state} ({found.describe()})"]
    lines += [f"  not enforced: {gap}" for gap in found.gaps()]
    if found.available:
        lines.append("  `bash-policy run` confines every allowed command (config `confine`: "
                     "auto, required, off)")
    lines += [report.text() for report in reports] or [
        "hooks: none installed in the settings this directory's clients read "
        "(`bash-policy hook NAME --install`)"]
    _emit("\n".join(lines))
    return 0 if all(r.ok for r in reports) else 1


def _show_config(args) -> int:
    from .formats import dumps
    from .integrations.config import describe, describe_text

    report = describe(args.config, getattr(args, "cwd", None) or ".")
    _emit(dumps(report) if getattr(args, "output_format", "text") in ("json", "json-lines")
          else describe_text(report))
    return 0


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
        if getattr(args, "show_config", False):
            return _show_config(args)
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
