"""One program's argv: who the program is, and what its spec's option grammar reads.

`check_argv` judges the program word (whitelisted, trusted path, literal),
the variables it requires, its response files and project files, then hands
the words to the argv reader (judge/options.py), which reads them as the
program does and has what it read judged (judge/operands.py).
"""

from __future__ import annotations

import os

from ..read.model import Word
from ..records import dataclass
from . import client_shell
from .codes import Code, Effect
from .context import Appended, Context
from .problems import FromReason, Problem
from .rules import engine_rule
from .spec import CommandSpec, installed_in
from .special import on_disk_each

PROGRAM = engine_rule("program", """Programs outside the whitelist, denied whole, named by a path or not literally.
    Only programs whose every allowed use was checked against their manual
    may run, and only the trusted copy of each.""",
    codes=[Code.BP300, Code.BP301, Code.BP302, Code.BP304],
    deny=["vim x", "./rg x", "$EDITOR x", "go version"], allow=["/usr/bin/rg x"])


PROJECT_FILES = engine_rule("project_files", """Project files a program reads by itself that are FIFOs or devices.
    cargo reads Cargo.toml, npm package.json, go go.mod in the directory it
    runs in or above it; a committed `Cargo.toml -> /dev/zero` or a FIFO
    from an archive never ends (red team RT3: cargo metadata hung).""",
    codes=[Code.BP603], deny=[], allow=["cargo --version"],
    untestable="needs a directory holding a special project file: tests/test_special_files.py")


RESPONSE_FILE = engine_rule("response_file", """Words that are or may be `@FILE` where arguments are read from FILE.
    binutils (strings, readelf), ruff, mypy and 7-Zip read further
    options and file names from FILE, even after `--`: a FIFO or a listed
    /dev/zero never ends, a listed /dev/stdin reads the script, and the
    options are ones the checker never saw.""",
    codes=[Code.BP406], deny=["strings @args", "ruff rule @args", "7z l x.zip @list", "readelf -h *"],
    allow=["strings -n 8 data.bin", "readelf -h src/*.o", "strings ~/x", "7z l x.zip"])


@dataclass(frozen=True)
class ProgramNotLiteral(Problem):
    code = Code.BP302
    rule = PROGRAM
    message_format = "the program name `{word.text}` holds {what}"
    hint_format = "name the program literally"
    word: Word
    what: str  # the kind of expansion, in words


@dataclass(frozen=True)
class ProgramPath(Problem):
    code = Code.BP301
    rule = PROGRAM
    hint_format = "call it by its bare name: `{base}`"
    name: str
    base: str

    def message(self) -> str:
        relative = "" if self.name.startswith("/") else " (relative paths run whatever file is there)"
        return f"`{self.name}` is a path, not a trusted program{relative}"


@dataclass(frozen=True)
class UnknownProgram(Problem):
    code = Code.BP300
    rule = PROGRAM
    message_format = "`{name}` is not in the read-only whitelist"
    hint_format = ("use a whitelisted program (`bash-policy programs`), add a spec in bash-policy.toml, "
                   "or leave plan mode")
    name: str


@dataclass(frozen=True)
class DeniedProgram(FromReason):
    code = Code.BP300
    rule = PROGRAM
    message_format = "`{name}` {reason.why}"
    name: str


@dataclass(frozen=True)
class NeedsEnvironment(FromReason):
    code = Code.BP304
    rule = PROGRAM
    message_format = "`{program}` {reason.why}"
    program: str
    variable: str
    value: str  # the first value that keeps it read-only

    def hint(self) -> str:
        return self.reason.fix or f"prefix the command with {self.variable}={self.value}"


@dataclass(frozen=True)
class SpecialProjectFile(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = PROJECT_FILES
    hint_format = "make it a regular file, or leave plan mode"
    program: str
    path: str
    what: str  # special.on_disk's answer

    def message(self) -> str:
        what = "a link to standard input" if self.what == "stdin" else self.what
        return f"`{self.program}` reads {self.path}, which is {what}: reading it blocks or never ends"


@dataclass(frozen=True)
class ResponseFileWord(Problem):
    code = Code.BP406
    effect = Effect.HANG
    rule = RESPONSE_FILE
    message_format = ("`{program}` reads options and file names from a word starting with `@`, and "
                      "`{word.text}` is or may become one")
    hint_format = "name the files literally, or with a glob that starts with a directory (`./*.o`)"
    program: str
    word: Word


@dataclass(frozen=True)
class ResponseFileAppended(Problem):
    code = Code.BP406
    effect = Effect.HANG
    rule = RESPONSE_FILE
    message_format = ("`{program}` reads options and file names from an operand starting with `@`, and "
                      "{wrapper} appends operands it cannot see")
    hint_format = "run {program} on named files"
    program: str
    wrapper: str


def check_argv(words: tuple[Word, ...], ctx: Context, appended: Appended | None = None) -> None:
    """Check one program's argv (the program word first).  `appended` names
    the wrapper that appends operands from standard input, if any."""
    program = words[0]
    if program.value is None:
        ctx.deny(ProgramNotLiteral(program, program.expansions[0].kind.replace("-", " ")), program.span)
        return
    name = program.value
    if "/" in name:
        directory, _, base = name.rpartition("/")
        own = ctx.policy.spec(base) if base and name.startswith("/") else None
        if not name.startswith("/") or not base or (
                directory not in ctx.policy.trusted_dirs and not (own and installed_in(own, directory))):
            ctx.deny(ProgramPath(name, base or name), program.span)
            return
        name = base
    spec = ctx.policy.spec(name) if name else None
    if spec is None:
        ctx.deny(UnknownProgram(name), program.span)
        return
    if spec.denied is not None:
        ctx.deny(DeniedProgram(spec.denied, name), program.span)
        return
    if spec.response_files and _response_file(spec, words, appended, ctx):
        return
    if spec.project_files and _special_project_file(spec, program, ctx):
        return
    from .options import ArgvReader  # which reads through check_argv in turn (check_inner)

    reader = ArgvReader(spec, words, 1, ctx, appended)
    reader.read()
    if ctx.policy.shell is not None and not ctx.denials:  # what it walks by itself, in the client's shell
        reader.inv.reads = None
        client_shell.check_walks(name, words, reader.opened(), reader.inv.positionals, ctx, appended)


def _special_project_file(spec: CommandSpec, program: Word, ctx: Context) -> bool:
    """Deny (True) when a project file in a directory the command may run in,
    or above it, is not a regular file (a link to /dev/stdin reads the script)."""
    for directory in sorted(d for d in ctx.directories() if d is not None):
        while True:
            for name, what in on_disk_each(directory, spec.project_files):
                if what is None:
                    continue
                ctx.deny(SpecialProjectFile(spec.display, os.path.join(directory, name), what), program.span)
                return True
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return False


def _response_file(spec: CommandSpec, words: tuple[Word, ...], appended: Appended | None,
                   ctx: Context) -> bool:
    """Deny (True) a word that is or may become `@FILE`: a literal one, or one
    whose start is not a fixed literal or a tilde; operands xargs appends may
    be anything."""
    for word in words[1:]:
        if word.value is not None:
            risky = word.value.startswith("@")
        else:
            risky = not (word.text.startswith("~") or (word.prefix and not word.prefix.startswith("@")))
        if risky:
            ctx.deny(ResponseFileWord(spec.display, word), word.span)
            return True
    if appended is not None:
        ctx.deny(ResponseFileAppended(spec.display, appended.wrapper), words[0].span)
        return True
    return False
