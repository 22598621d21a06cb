"""One program's argv: who the program is, and what its spec's option grammar reads.

`check_argv` judges the program word (whitelisted, trusted path, literal),
its response files and project files; `ArgvReader` then reads the words as
the program does (getopt_long or git's parse-options: clusters, attached
and separate values, `--`, permutation or the POSIX stop at the first
operand, subcommands) and judges what it read: flags, modes, operands, the
files they name; then the spec's rules run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..read.model import (
    GLOB,
    Span,
    Word,
)
from . import client_shell, fixes, rules, shapes
from .codes import Code, Effect
from .context import Appended, Context, FlagUse, Invocation
from .expansions import EXPANSION
from .problems import Problem
from .rules import engine_rule
from .rules.files import DeviceValue, check_around, check_special_operands
from .spec import CommandSpec, Flag, Reason, abbreviated, installed_in
from .special import on_disk, special_in, special_operand_in, stdin_in
from .verdict import SAFE, Edit, Fix

PROGRAM = engine_rule("program", """Programs outside the whitelist, denied whole, named by a path or not literally.
    Only programs whose every allowed use was checked against their manual
    may run, and only the trusted copy of each.""",
    codes=[Code.BP300, Code.BP301, Code.BP302, Code.BP304],
    deny=["vim x", "./rg x", "$EDITOR x", "go version"], allow=["/usr/bin/rg x"])
SUBCOMMAND = engine_rule("subcommand", """Subcommands that are not read-only, or missing and unknown ones.
    `git push`, `gh pr merge` and the like change state.""",
    codes=[Code.BP405], deny=["git push"], allow=["git status"])
FLAGS = engine_rule("flags", """Flags that are denied, unknown, abbreviated, or given a wrong value.
    Read-only programs have flags that run programs or write files, and accept
    them in other spellings; only flags checked against the manual pass.""",
    codes=[Code.BP400, Code.BP401, Code.BP402, Code.BP403],
    deny=["rg --pre cat x", "rg --frob x", "sort --out=f x", "rg --color=sometimes x",
          'git log --format="$F"'],
    allow=["rg -n x", 'git log --author="$USER"'])
MODES = engine_rule("modes", """Options that select different modes where the program refuses them together.
    A spec's `modes` say which options select what the program does and how it
    combines several (program rules judge the mode that results: `xz -t -z f`
    compresses f, since xz obeys the last); where the program refuses two, a
    version that took one instead would do what was not judged.""",
    codes=[Code.BP400], deny=["git cat-file -t -p HEAD", "git branch --list --show-current"],
    allow=["git cat-file -t HEAD", "git branch --show-current"])
OPERANDS = engine_rule("operands", """Operands a program writes to or acts on, too many, or words that may be flags.
    Some programs take an output file or a new name as a plain operand; a
    file named `--pre=sh` turns an unanchored glob into a flag.""",
    codes=[Code.BP406, Code.BP203, Code.BP404],
    deny=["rg foo *.py", "pwd x", "ls | xargs rg x"], allow=["rg foo ./*.py"])
SPECIAL = engine_rule("special_files", """Files to read under /dev, /proc and /sys, other than a few harmless ones.
    Reading a device or kernel file may never end (`cat /dev/zero`, `/proc/kmsg`)
    or reach another file (`/proc/self/root/dev/zero`); only /dev/null, the
    standard streams and a short list of /proc files may be read.  This applies
    to operands that may be files and to flags whose value names a file to read.""",
    codes=[Code.BP406, Code.BP403],
    deny=["cat /dev/zero", "wc -c /proc/self/root/dev/zero", "grep -f /dev/zero x"],
    allow=["cat /dev/null", "cat /proc/cpuinfo", "ls /dev", "grep -e /dev/zero x"])

_NUMBER = re.compile(r"[0-9]+")
_DEFAULT_FIX = {
    Effect.EXEC: "drop it; running other programs needs leaving plan mode",
    Effect.WRITE: "drop it and read the output directly; writing files needs leaving plan mode",
    Effect.NETWORK: "drop it; network calls that change things need leaving plan mode",
    Effect.HANG: "drop it; plan-mode commands must finish on their own",
    Effect.STATE: "drop it; changing state needs leaving plan mode",
    Effect.LEAK: "drop it",
    Effect.INTERACTIVE: "drop it; interactive programs cannot run in plan mode",
}

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
class FromReason(Problem, abstract=True):
    """A denial whose reason a spec gives (`denied`, `deny`, `over_max`,
    `requires_env`): its effect, its why, and its fix or the effect's default."""

    reason: Reason

    def consequence(self) -> Effect:
        return self.reason.effect

    def hint(self) -> str:
        return self.reason.fix or _DEFAULT_FIX[self.reason.effect]


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
    reader = ArgvReader(spec, words, 1, ctx, appended)
    reader.read()
    if ctx.policy.shell is not None and not ctx.denials:  # what it walks by itself, in the client's shell
        reader.inv.reads = None
        client_shell.check_walks(name, words, reader.opened(), ctx, appended)




def _special_project_file(spec: CommandSpec, program: Word, ctx: Context) -> bool:
    """Deny (True) when a project file in a directory the command may run in,
    or above it, is not a regular file (a link to /dev/stdin reads the script)."""
    for directory in sorted(d for d in ctx.directories() if d is not None):
        while True:
            for name in spec.project_files:
                what = on_disk(os.path.join(directory, name))
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


# -- what the argv reader denies ---------------------------------------------

@dataclass(frozen=True)
class SubcommandNotLiteral(Problem):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{program}` needs a literal subcommand"
    hint_format = "write the subcommand literally"
    program: str


@dataclass(frozen=True)
class UnknownSubcommand(Problem):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{program} {name}` is not a read-only subcommand"
    hint_format = "use one of: {allowed}; other subcommands need leaving plan mode"
    program: str
    name: str
    allowed: str


@dataclass(frozen=True)
class DeniedSubcommand(FromReason):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{subcommand}` {reason.why}"
    subcommand: str


@dataclass(frozen=True)
class SubcommandMissing(Problem):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{program}` needs a subcommand"
    hint_format = "use one of: {allowed}"
    program: str
    allowed: str


def _glob_hint(text: str) -> str:
    """How to keep a glob from becoming flags: quote a flag's pattern, anchor an operand's."""
    name, eq, pattern = text.partition("=")
    if text.startswith("-") and eq and "'" not in pattern:
        return f"quote the pattern so the program matches it: `{name}='{pattern}'`"
    return f"quote it for the program to match, write it as ./{text}, or put it after `--`"


@dataclass(frozen=True)
class GlobMayBeFlag(Problem):
    code = Code.BP203
    rule = OPERANDS
    message_format = ("`{word.text}` expands to file names, and one starting with {sign} would be read "
                      "by {program} as a flag")
    word: Word
    sign: str  # "`-`", or "`-` or `+`"
    program: str

    def hint(self) -> str:
        return _glob_hint(self.word.text)


@dataclass(frozen=True)
class SplitMayBeFlag(Problem):
    code = Code.BP404
    rule = OPERANDS
    message_format = ("unquoted, `{word.text}` is split at blanks into words, and one may start with "
                      "{sign}, which {program} would read as a flag")
    hint_format = "{suggestion}"
    word: Word
    sign: str
    program: str
    suggestion: str  # the command with the word quoted, which depends on its other words


@dataclass(frozen=True)
class WordMayBeFlag(Problem):
    code = Code.BP404
    rule = OPERANDS
    hint_format = "{suggestion}"
    word: Word
    single: bool  # one word, or one that is split into several
    sign: str
    program: str
    suggestion: str  # the command with `--` before the word, where no flag follows it

    def message(self) -> str:
        kind = "is a word that" if self.single else "is split into words; one"
        return f"`{self.word.text}` {kind} may start with {self.sign}, which {self.program} would read as a flag"


@dataclass(frozen=True)
class ObsoleteFormGlob(Problem):
    code = Code.BP203
    rule = OPERANDS
    message_format = "`{word.text}` may expand to a file name that {program} reads as its obsolete option syntax"
    word: Word
    program: str

    def hint(self) -> str:
        return _glob_hint(self.word.text)


@dataclass(frozen=True)
class GlobAsValue(Problem):
    code = Code.BP203
    rule = EXPANSION
    message_format = "`{word.text}` expands to file names, which become the value of {name} and further words"
    word: Word
    name: str

    def hint(self) -> str:
        return _glob_hint(self.word.text)


@dataclass(frozen=True)
class GlobAsNextValue(Problem):
    code = Code.BP203
    rule = EXPANSION
    message_format = ("`{word.text}` as the value of {name} expands to file names; the first becomes the "
                      "value and the rest become operands")
    hint_format = "quote it: {name} '{word.text}'"
    word: Word
    name: str


@dataclass(frozen=True)
class ComputedValueChecked(Problem):
    code = Code.BP403
    rule = FLAGS
    hint_format = "write the value of {name} literally"
    program: str
    name: str
    choices: bool  # the flag allows some values only; else a rule reads its value

    def message(self) -> str:
        which = "only some values are allowed" if self.choices else "its value is checked"
        return f"the value of `{self.program} {self.name}` is computed at run time, and {which}"


@dataclass(frozen=True)
class TakesNoValue(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = "`{program} {name}` takes no value"
    hint_format = "write `{name}` alone"
    program: str
    name: str


@dataclass(frozen=True)
class InnerCommandMissing(Problem):
    code = Code.BP403
    rule = FLAGS
    hint_format = "write {name} COMMAND {{}} \\;"
    program: str
    name: str
    ends: tuple[str, ...]

    def message(self) -> str:
        ends = ", ".join(f"`{end}`" for end in self.ends)
        return f"`{self.program} {self.name}` needs a command and one of {ends} after it"


@dataclass(frozen=True)
class StartsFromFile(Problem):
    code = Code.BP404
    rule = OPERANDS
    message_format = ("`{program} {name}` fills in paths under starting points that `{supplied}` reads "
                      "from a file, where a name may start with `-`")
    hint_format = "name the starting points on the command line"
    program: str
    name: str
    supplied: str | None


def _attached(name: str, metavar: str) -> str:
    """`--name=VALUE` or `-nVALUE`: a value written attached to its flag."""
    return f"{name}{'=' if name.startswith('--') else ''}{metavar or 'VALUE'}"


@dataclass(frozen=True)
class ComputedOptionalValue(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = ("`{word.text}` is computed, so it may be the value of `{program} {name}` or, "
                      "starting with `-`, an option of its own")
    word: Word
    program: str
    name: str
    metavar: str

    def hint(self) -> str:
        return f"write {_attached(self.name, self.metavar)} attached"


@dataclass(frozen=True)
class OnlyAttached(Problem):
    code = Code.BP403
    rule = FLAGS
    program: str
    name: str
    metavar: str

    def message(self) -> str:
        return (f"`{self.program} {self.name}` takes its value only attached "
                f"(`{_attached(self.name, self.metavar)}`); the next word is not its value")

    def hint(self) -> str:
        return f"write {_attached(self.name, self.metavar)}"


@dataclass(frozen=True)
class ValueNotAChoice(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = "`{program} {name}` does not allow the value `{value}`"
    hint_format = "use one of: {choices}"
    program: str
    name: str
    value: str | None
    choices: str


@dataclass(frozen=True)
class ValueMissing(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = "`{program} {name}` needs a value"
    hint_format = "give it one: {name} {metavar}"
    program: str
    name: str
    metavar: str


@dataclass(frozen=True)
class DeniedFlag(FromReason):
    code = Code.BP400
    rule = FLAGS
    message_format = "`{program} {shown}` {reason.why}"
    program: str
    shown: str  # the flag as written, with its cluster: `-i (in -ni)`


@dataclass(frozen=True)
class AbbreviatedFlag(Problem):
    code = Code.BP402
    rule = FLAGS
    name: str
    matches: tuple[str, ...]
    denied: str | None  # the first denied flag it abbreviates
    reason: Reason | None

    def message(self) -> str:
        extra = f"; `{self.denied}` is denied: {self.reason.why}" if self.reason else ""
        return f"`{self.name}` abbreviates {', '.join(f'`{m}`' for m in self.matches)}{extra}"

    def hint(self) -> str:
        one = len(self.matches) == 1 and not self.denied
        return "write the option in full" + (f": {self.matches[0]}" if one else "")

    def consequence(self) -> Effect | None:
        return self.reason.effect if self.reason else None


@dataclass(frozen=True)
class UnknownFlag(Problem):
    code = Code.BP401
    rule = FLAGS
    hint_format = ("see `bash-policy programs {top}` for the allowed flags; if `{name}` only shapes output, "
                   "add it to the spec in bash-policy.toml")
    name: str
    cluster: str | None
    program: str
    top: str

    def message(self) -> str:
        where = f" (in `{self.cluster}`)" if self.cluster else ""
        return f"`{self.name}`{where} is not an allowed flag of `{self.program}`"


@dataclass(frozen=True)
class ModesRefused(Problem):
    code = Code.BP400
    rule = MODES
    message_format = "`{program}` {first} and {other} select different modes, which {top} refuses together"
    hint_format = "give one of them: `{program} {first}` or `{program} {other}`"
    program: str
    first: str
    other: str
    top: str


@dataclass(frozen=True)
class InnerSpreads(Problem):
    code = Code.BP302
    rule = PROGRAM
    message_format = "`{word.text}` may become several words, one of them the program {program} runs"
    hint_format = "write the operands and the program literally"
    word: Word
    program: str


@dataclass(frozen=True)
class InnerNotLiteral(Problem):
    code = Code.BP302
    rule = PROGRAM
    message_format = "the inner program name is not literal"
    hint_format = "name the program literally"


@dataclass(frozen=True)
class CommandFromInput(Problem):
    code = Code.BP404
    rule = OPERANDS
    message_format = "`{program}` would run a command named by standard input"
    hint_format = "name the command after {program}, with its operands after `--`"
    program: str


@dataclass(frozen=True)
class AppendedMayBeFlags(Problem):
    code = Code.BP404
    rule = OPERANDS
    message_format = "`{program}` gets extra operands from standard input, which could be read as flags"
    hint_format = "put `--` before the operands of {program}: `{wrapper} {command}`"
    program: str
    wrapper: str
    command: str  # the wrapped command with `--` before its operands


@dataclass(frozen=True)
class NoOperands(Problem):
    code = Code.BP406
    rule = OPERANDS
    message_format = "`{program}` takes no operands here"
    hint_format = "drop `{word.text}`"
    program: str
    word: Word


@dataclass(frozen=True)
class OverMax(FromReason):
    code = Code.BP406
    rule = OPERANDS
    message_format = "`{program}` {reason.why}"
    program: str


@dataclass(frozen=True)
class MayExceedMax(Problem):
    code = Code.BP203
    rule = OPERANDS
    message_format = "`{word.text}` may expand to more operands than `{program}` takes ({limit})"
    hint_format = "quote it so it stays one word: `'{word.text}'`"
    word: Word
    program: str
    limit: int


@dataclass(frozen=True)
class TooManyOperands(Problem):
    code = Code.BP406
    rule = OPERANDS
    hint_format = "drop `{word.text}`"
    program: str
    limit: int
    word: Word

    def message(self) -> str:
        return f"`{self.program}` takes at most {self.limit} operand{'s' if self.limit != 1 else ''}"


@dataclass(frozen=True)
class DeviceFlagValue(DeviceValue):
    """A flag's value under /dev, /proc or /sys, as the engine judges every `reads` flag."""

    rule = SPECIAL


@dataclass(frozen=True)
class DeviceOperand(Problem):
    code = Code.BP406
    effect = Effect.HANG
    rule = SPECIAL
    message_format = ("`{program}` would read `{word.text}`, which is or may be a device or kernel file "
                      "whose reading may never end (only /dev/null, /dev/stdin and a few /proc files may "
                      "be read)")
    hint_format = "read a regular file"
    program: str
    word: Word


class ArgvReader:
    """Reads `words[start:]` with one spec's option grammar, as the program does
    (getopt_long or git's parse-options: clusters, attached and separate values,
    `--`, permutation or the POSIX stop at the first operand), then judges it.
    A subcommand hands the rest of the words to a reader of its own."""

    def __init__(self, spec: CommandSpec, words: tuple[Word, ...], start: int, ctx: Context,
                 appended: Appended | None):
        self.spec = spec
        self.words = words
        self.named_by = words[start - 1]  # the program or subcommand word
        self.i = start
        self.ctx = ctx
        self.appended = appended
        self.inv = Invocation(spec, words)
        self.options_done = False
        self.double_dash: Fix | None = None  # the `--` that fixes this command's operands, once found

    def read(self) -> None:
        spec, ctx = self.spec, self.ctx
        for name, (required, reason) in spec.requires_env.items():
            if ctx.assignments.get(name) not in required:
                ctx.deny(NeedsEnvironment(reason, spec.display, name, required[0]), self.words[self.i - 1].span)
        if spec.obsolete is not None and self.i < len(self.words):
            self.obsolete_form()
        while self.i < len(self.words):
            word = self.words[self.i]
            self.i += 1
            if word.value is None:
                self.expanding_word(word)
            elif self.is_operand(word.value):
                if spec.subcommands and not self.inv.positionals and not self.options_done:
                    self.subcommand(word, word.value)
                    return
                self.inv.positionals.append(word)
                if not spec.permute:
                    self.options_done = True
            elif word.value == "--" and spec.double_dash and not (spec.subcommands
                                                                 and not self.inv.positionals):
                # Before a subcommand `--` means something else to each program
                # (git rejects it); it falls through to be denied as a flag.
                self.options_done = True
                self.inv.after_double_dash = True
            elif spec.style == "single" or word.value.startswith("--"):
                self.long_option(word, word.value)
            else:
                self.short_cluster(word, word.value)
        self.finish(has_sub=False)

    def is_operand(self, value: str) -> bool:
        spec = self.spec
        if spec.style == "text" and value not in spec.flags:
            self.options_done = True  # echo-like: the first word that is not a flag starts the text
        starts = ("-", "+") if spec.plus_options else ("-",)
        return self.options_done or value in ("-", "+") or not value.startswith(starts)

    def expanding_word(self, word: Word) -> None:
        """A word whose value bash computes: allowed where no value it can take
        does harm (judge/shapes.py) — after `--`, or one word that cannot start
        with `-`, or any word for a program whose every flag is harmless."""
        spec, inv, ctx = self.spec, self.inv, self.ctx
        if spec.subcommands and not inv.positionals and not self.options_done:
            if word.pathname_only:
                ctx.deny(SubcommandNotLiteral(spec.display), word.span)
            else:
                ctx.deny_word(word)
            return
        if not self.options_done and self.flag_with_unknown_value(word):
            return
        if not shapes.unknown_kinds_allowed(word):
            ctx.deny_word(word)
            return
        single = shapes.single(word, ctx.source, ctx.variables)
        safe = shapes.dash_safe(word, ctx.source, ctx.variables)
        sign = "`-`"
        if spec.plus_options:
            safe, sign = safe and shapes.plus_safe(word, ctx.source), "`-` or `+`"
        if not word.pathname_only and any(not rules.get(h).unknown_operands for h in spec.hooks):
            ctx.deny_word(word)  # a rule of the program reads its operands: they must be known
        elif (self.options_done or safe or (spec.harmless and spec.positionals.role == "read")
              or (spec.style == "text" and not spec.flags)):  # test: every word is its expression
            inv.positionals.append(word)
        elif GLOB in {e.kind for e in word.expansions}:
            ctx.deny(GlobMayBeFlag(word, sign, spec.display, fix=self.operand_fix(word) or fixes.dot_slash(word)),
                     word.span)
        elif not single and shapes.dash_safe(shapes.quoted(word), ctx.source, ctx.variables):
            ctx.deny(SplitMayBeFlag(word, sign, spec.display, _quote_hint(word, self.rewritten),
                                    fix=self.operand_fix(word)), word.span)
        else:
            ctx.deny(WordMayBeFlag(word, single, sign, spec.display, self.double_dash_hint(word),
                                   fix=self.operand_fix(word)), word.span)
        if not spec.permute and inv.positionals:
            self.options_done = True

    def operand_fix(self, word: Word) -> Fix | None:
        """`--` before the first operand of this command that may become a
        flag; every later one is covered by the same `--`."""
        if self.double_dash is None and self.spec.double_dash:
            at = next(k for k, w in enumerate(self.words) if w is word)
            self.double_dash = fixes.double_dash(self.words, at, ("-", "+") if self.spec.plus_options
                                                 else ("-",))
        return self.double_dash

    def appended_fix(self) -> Fix | None:
        """`--` before the operands a wrapper's command is given (`xargs rg
        foo` -> `xargs rg -- foo`), or after its last word when it has none:
        what the wrapper appends then stays operands."""
        if not self.spec.double_dash:
            return None
        words, pos = self.inv.words, self.inv.positionals
        if pos:
            at = next(k for k, w in enumerate(words) if w is pos[0])
            return fixes.double_dash(words, at, ("-", "+") if self.spec.plus_options else ("-",))
        end = words[-1].span.end
        return Fix((Edit(Span(end, end), " --"),), SAFE)

    def drop_flag(self, word: Word, flag: Flag, with_next: bool) -> Fix | None:
        """Dropping a denied flag (and its separate value), where its spec's
        fix says to (`drop -i and read the edited text on standard output`):
        unsafe, since what the flag did no longer happens.  A flag whose spec
        says something else is a mode of its own (`md5sum -c`, `tar
        --delete`), and dropping it would mean another command."""
        reason = flag.denied
        if reason is None or not any(reason.fix == f"drop {name}" or reason.fix.startswith(f"drop {name} ")
                                     or reason.fix.startswith(f"drop {name};")
                                     for name in ("it", *flag.names)):
            return None
        at = next(k for k, w in enumerate(self.words) if w is word)
        end = self.words[at + 1] if with_next and at + 1 < len(self.words) else word
        return fixes.drop(self.ctx.source, Span(word.span.start, end.span.end))

    def double_dash_hint(self, word: Word) -> str:
        """The command with `--` before `word`, when no flag follows it.  A
        variable is quoted (one value); a command substitution is not (it is
        usually a list of files)."""
        words = self.words
        at = next(k for k, w in enumerate(words) if w is word)
        if any(w.value is None or w.value.startswith("-") for w in words[at + 1:]):
            return "put it after `--`, or give it a fixed prefix such as `./`"
        listing = word.text.startswith(("$(", "`"))
        text = word.text if word.text.startswith('"') or listing else f'"{word.text}"'
        return f"put it after `--`: `{self.rewritten(word, '-- ' + text)}`"

    def rewritten(self, word: Word, replacement: str) -> str:
        """The command's words with `word` replaced."""
        return " ".join(replacement if w is word else w.text for w in self.words)

    def flag_with_unknown_value(self, word: Word) -> bool:
        """`--author="$USER"` or `-n"$N"`: a known flag whose attached value is
        computed at run time.  True when the word was judged here."""
        prefix = word.prefix
        if prefix.startswith("--"):
            name, eq, _ = prefix.partition("=")
            if not eq:
                return False
        elif prefix[:1] == "-" or (prefix[:1] == "+" and self.spec.plus_options):
            if len(prefix) != 2:
                return False
            name = prefix
        else:
            return False
        flag = self.spec.flags.get(name)
        if flag is None or flag.denied is not None or flag.value == "none":
            return False
        self.unknown_value(flag, name, word, word)
        return True

    def unknown_value(self, flag: Flag, name: str, word: Word, holder: Word) -> None:
        """A value computed at run time: fine for a flag whose values all only
        shape output (no choices, not read by the program's rule), when it
        stays one word."""
        ctx = self.ctx
        read = any(rule.reads is None or bool(rule.reads & set(flag.names))
                   for rule in map(rules.get, self.spec.hooks))
        if GLOB in {e.kind for e in holder.expansions}:
            flag_text = holder.prefix[:len(name) + (holder.prefix[len(name):len(name) + 1] == "=")]
            ctx.deny(GlobAsValue(holder, name, fix=fixes.quote_pattern(holder, flag_text if holder is word else "",
                                                                       flag.metavar)), holder.span)
        elif not shapes.unknown_kinds_allowed(holder) or not shapes.single(holder, ctx.source,
                                                                           ctx.variables):
            ctx.deny_word(holder, f"as the value of {name}")
        elif flag.choices is not None or read:
            ctx.deny(ComputedValueChecked(self.spec.display, name, bool(flag.choices)), holder.span)
        else:
            self.record(flag, name, None, word, holder, known=False)

    def obsolete_form(self) -> None:
        """The program's obsolete first-argument syntax (`tail -cf FILE` is
        `tail -c 10 -f FILE`): the letters it names are judged as their flags.
        Where the form depends on operands the checker cannot count (a glob),
        it is taken to apply."""
        form, word = self.spec.obsolete, self.words[self.i]
        if form is None:
            return
        if word.value is None:
            if word.pathname_only and (not word.prefix or word.prefix[0] in form.starts):
                self.i += 1
                self.ctx.deny(ObsoleteFormGlob(word, self.spec.display), word.span)
            return
        match = form.form.fullmatch(word.value)
        if match is None:
            return
        if form.max_operands is not None:
            rest = list(self.words[self.i + 1:])
            if rest and rest[0].value == "--":
                rest.pop(0)
            known = all(w.value is not None for w in rest)
            dashed = any(w.value is not None and w.value.startswith("-") and w.value != "-"
                         for w in rest)
            if known and (len(rest) > form.max_operands or dashed):
                return
        self.i += 1
        for group, name in form.flags.items():
            if match[group]:
                flag = self.spec.flags[name]
                if flag.denied is not None:
                    alone = len(word.value) == 2 and word.text == word.value  # `-f`, nothing else
                    self.denied_flag(flag.denied, f"{name} (in {word.value})", word, consumes_next=False,
                                     fix=self.drop_flag(word, flag, False) if alone else None)
                else:
                    self.record(flag, name, None, word, None)

    def subcommand(self, word: Word, value: str) -> None:
        spec = self.spec
        sub = spec.subcommands.get(spec.sub_aliases.get(value, value))
        if sub is None:
            allowed = sorted(name for name, s in spec.subcommands.items() if s.denied is None)
            self.ctx.deny(UnknownSubcommand(spec.display, value, ", ".join(allowed)), word.span)
            return
        if sub.denied is not None:
            self.ctx.deny(DeniedSubcommand(sub.denied, sub.display), word.span)
            return
        self.finish(has_sub=True)
        ArgvReader(sub, self.words, self.i, self.ctx, self.appended).read()

    # -- options -------------------------------------------------------------
    def long_option(self, word: Word, text: str) -> None:
        spec = self.spec
        name, eq, attached = text.partition("=")
        if spec.abbreviations:
            name = abbreviated(spec, name) or name
        flag = spec.flags.get(name)
        if flag is None and spec.style == "single" and text in spec.flags:
            flag, name, eq, attached = spec.flags[text], text, "", ""
        if flag is None:
            self.unknown_flag(name, word)
            return
        if flag.denied is not None:
            consumes = flag.value in ("required", "lastarg", "unless_flag") and not eq
            self.denied_flag(flag.denied, name, word, consumes_next=consumes,
                             fix=self.drop_flag(word, flag, consumes))
            return
        if flag.value == "none":
            if eq:
                self.ctx.deny(TakesNoValue(spec.display, name), word.span)
                return
            self.record(flag, name, None, word, None)
            if flag.runs:
                self.inner_command(flag, name, word)
            return
        self.with_value(flag, name, word, attached if eq else None)

    def inner_command(self, flag: Flag, name: str, word: Word) -> None:
        """`find -exec CMD ;`: the words up to the terminator are a command the
        program runs, checked like any other; each `{}` in it is a path the
        program fills in, which never starts with `-` (judge/shapes.py)."""
        words = self.words
        end = next((k for k in range(self.i, len(words)) if words[k].value in flag.runs), None)
        if end is None or end == self.i:
            self.ctx.deny(InnerCommandMissing(self.spec.display, name, flag.runs), word.span)
            self.i = len(words)
            return
        flags = self.spec.flags
        supplied = next((w for w in words if w.value is not None and w.value in flags
                         and flags[w.value].operands_from), None)
        if supplied is not None:  # find -files0-from LIST: starting points, so paths, may start with `-`
            self.ctx.deny(StartsFromFile(self.spec.display, name, supplied.value), word.span)
            self.i = end + 1
            return
        many = words[end].value == "+"
        inner = tuple(shapes.found_path(w, many) for w in words[self.i:end])
        self.i = end + 1
        ctx = self.ctx
        outer, ctx.elsewhere = ctx.elsewhere, ctx.elsewhere or flag.runs_elsewhere
        try:
            ctx.check_inner(inner, repeated=True)
        finally:
            ctx.elsewhere = outer

    def short_cluster(self, word: Word, text: str) -> None:
        """`-abc`, or lsof's `+abc`: each letter is a flag with the cluster's
        sign, and a value-taking one takes the rest of the word or the next."""
        spec = self.spec
        if spec.numeric_flag and text[0] == "-" and _NUMBER.fullmatch(text, 1):
            self.record(Flag(("-NUM",), "none"), text, text[1:], word, word)
            return
        for k in range(1, len(text)):
            name = text[0] + text[k]
            flag = spec.flags.get(name)
            if flag is None:
                self.unknown_flag(name, word, cluster=text if len(text) > 2 else None)
                return
            if flag.denied is not None:
                shown = name if len(text) == 2 else f"{name} (in {text})"
                consumes = flag.value in ("required", "lastarg", "unless_flag") and k + 1 == len(text)
                fix = None
                if k == 1 and (len(text) == 2 or flag.value == "required"):  # the flag and its value
                    fix = self.drop_flag(word, flag, consumes)
                self.denied_flag(flag.denied, shown, word, consumes_next=consumes, fix=fix)
                return
            if flag.value == "none":
                self.record(flag, name, None, word, None)
                continue
            self.with_value(flag, name, word, text[k + 1:] or None)
            return

    def with_value(self, flag: Flag, name: str, word: Word, attached: str | None) -> None:
        """A value-taking flag: its attached value, none (optional), or the next word."""
        value: str | None
        holder: Word | None
        if attached is not None:
            value, holder = attached, word
        elif flag.value == "optional" or (flag.value in ("lastarg", "unless_flag") and self.i >= len(self.words)) \
                or (flag.value == "unless_flag" and (self.words[self.i].value or "").startswith("-")):
            self.record(flag, name, None, word, None)
            return
        elif flag.value == "unless_flag" and self.words[self.i].value is None:
            self.ctx.deny(ComputedOptionalValue(self.words[self.i], self.spec.display, name, flag.metavar),
                          self.words[self.i].span)
            return
        elif flag.value == "attached":
            self.ctx.deny(OnlyAttached(self.spec.display, name, flag.metavar), word.span)
            return
        else:
            holder = self.take_value(flag, name, word)
            if holder is None:
                return
            value = holder.value
        if flag.choices is not None and value not in flag.choices:
            self.ctx.deny(ValueNotAChoice(self.spec.display, name, value, ", ".join(sorted(flag.choices))),
                          word.span)
            return
        self.record(flag, name, value, word, holder)

    def take_value(self, flag: Flag, name: str, word: Word) -> Word | None:
        """Consume the separate value word of `flag`, or deny and return None."""
        if self.i >= len(self.words):
            self.ctx.deny(ValueMissing(self.spec.display, name, flag.metavar or "VALUE"), word.span)
            return None
        holder = self.words[self.i]
        self.i += 1
        if holder.value is None:
            if GLOB in {e.kind for e in holder.expansions}:
                self.ctx.deny(GlobAsNextValue(holder, name, fix=fixes.quote_pattern(holder, "", flag.metavar)),
                              holder.span)
            else:
                self.unknown_value(flag, name, word, holder)
            return None
        return holder

    def record(self, flag: Flag, name: str, value: str | None, word: Word,
               holder: Word | None, known: bool = True) -> None:
        index = next(k for k, w in enumerate(self.words) if w is word)
        self.inv.flags.append(FlagUse(flag, name, value, word, holder, index, known))

    def denied_flag(self, reason: Reason, shown: str, word: Word, consumes_next: bool,
                    fix: Fix | None = None) -> None:
        self.ctx.deny(DeniedFlag(reason, self.spec.display, shown, fix=fix), word.span)
        if consumes_next and self.i < len(self.words):
            self.i += 1

    def unknown_flag(self, name: str, word: Word, cluster: str | None = None) -> None:
        spec = self.spec
        if name.startswith("--") and len(name) > 2:
            matches = sorted({n for n in spec.flags if n.startswith(name) and n != name})
            if matches:
                denied = [m for m in matches if spec.flags[m].denied is not None]
                reason = spec.flags[denied[0]].denied if denied else None
                self.ctx.deny(AbbreviatedFlag(name, tuple(matches), denied[0] if denied else None, reason),
                              word.span)
                return
        self.ctx.deny(UnknownFlag(name, cluster, spec.display, spec.path[0]), word.span)

    # -- judging what was read -----------------------------------------------
    def finish(self, has_sub: bool) -> None:
        spec = self.spec
        if not has_sub and spec.subcommands and spec.subcommand_required:
            allowed = sorted(name for name, s in spec.subcommands.items() if s.denied is None)
            self.ctx.deny(SubcommandMissing(spec.display, ", ".join(allowed)), self.named_by.span)
        if not has_sub:
            self.check_modes()
            self.check_positionals()
            if self.reads_stdin():
                self.ctx.reads_stdin = True
            self.check_special_files()
        for hook in self.spec.hooks:
            self.ctx.run_rule(hook, self.inv)

    def check_modes(self) -> None:
        """Two different modes where the program refuses them (`combine = "error"`):
        the run would fail, and a version that took one of them instead would
        do what the checker did not judge."""
        modes = self.spec.modes
        if modes is None or modes.combine != "error":
            return
        given = self.inv.given_modes()
        other = next((use for use in given if use.flag is not given[0].flag), None)
        if other is not None:
            self.ctx.deny(ModesRefused(self.spec.display, given[0].name, other.name, self.spec.path[0]),
                          other.word.span)

    def reads_stdin(self) -> bool:
        """Whether the program may read standard input: its spec's `stdin`, a
        flag that reads it, or a file it opens that is or may be `-` or
        /dev/stdin (`diff f -`, `jq --rawfile a /dev/stdin`)."""
        spec, inv, dirs = self.spec, self.inv, self.ctx.directories()
        if any(use.flag.reads_stdin
               or (use.value is None and use.flag.reads and use.flag.value != "none")
               or (use.value is not None and any(p == "-" or stdin_in(p, dirs)
                                                 for p in use.flag.paths(use.value)))
               for use in inv.flags):
            return True  # `--stdin`, or a flag's value given `-` (`grep -f -`)
        if any(w.value in (None, "-") or stdin_in(w.value, dirs) for w in self.opened()):
            return True
        if spec.stdin != "no-files":
            return spec.stdin == "always"
        if spec.positionals.pattern is not None:  # grep -e x f: no pattern operand to skip
            return not self.opened()
        return not inv.positionals[spec.stdin_skip:]

    def opened(self) -> list[Word]:
        """The operands the program may open as files (not a pattern or program
        given first, not names it never opens)."""
        p, inv, ctx = self.spec.positionals, self.inv, self.ctx
        if p.role != "read" or not p.files:
            return []
        operands = inv.positionals
        if p.pattern is not None and not inv.has(*p.pattern):
            operands = operands[1:]
        return [one for word in operands for one in shapes.instances(word, ctx.source, ctx.variables)]

    def looked_up(self) -> list[Word]:
        """The operands the program may open that are looked up on disk: not
        those under /dev, /proc or /sys, which `check_special_files` denies
        by their name (one denial for one cause: `cat /dev/zero` is BP406,
        never BP603 as well)."""
        return [word for word in self.opened() if not special_operand_in(word, self.ctx.directories())]

    def check_positionals(self) -> None:
        spec, inv, ctx, appended = self.spec, self.inv, self.ctx, self.appended
        pos = inv.positionals
        role = spec.positionals.role
        if role == "command":
            skip = spec.positionals.skip
            spread = next((w for w in pos[:skip + 1]
                           if not shapes.single(w, ctx.source, ctx.variables)), None)
            if spread is not None:  # `timeout -- $(echo 5 rm x)`: one word is DURATION and a program
                ctx.deny(InnerSpreads(spread, spec.display), spread.span)
                return
            if len(pos) > skip:
                inner = pos[skip:]
                if inner[0].value is None:
                    ctx.deny(InnerNotLiteral(), inner[0].span)
                    return
                start = next(k for k, w in enumerate(inv.words) if w is inner[0])
                appender = Appended(spec.display) if spec.positionals.appends else None
                ctx.check_inner(inv.words[start:], appended or appender)
            elif appended:  # `xargs nice`: the appended operands would be the command
                ctx.deny(CommandFromInput(spec.display), inv.words[0].span)
            return
        if appended and not (role == "read" and spec.positionals.max is None
                             and (inv.after_double_dash or spec.harmless
                                  or (appended.dash_safe and not spec.plus_options))):
            ctx.deny(AppendedMayBeFlags(spec.display, appended.wrapper, _with_double_dash(inv),
                                        fix=self.appended_fix()), inv.words[0].span)
        if role == "none" and pos:
            ctx.deny(NoOperands(spec.display, pos[0]), pos[0].span)
            return
        if role == "read" and pos:
            check_special_operands(self.looked_up(), ctx)  # FIFOs and devices (rules/files.py)
        limit = spec.positionals.max
        if limit is None:
            return
        # A glob or an unquoted expansion may become any number of operands.
        expanding = [w for w in pos if not shapes.single(w, ctx.source, ctx.variables)]
        if len(pos) <= limit and not expanding:
            return
        culprit = expanding[0] if expanding else pos[limit]
        over = spec.positionals.over_max
        if over is not None:
            ctx.deny(OverMax(over, spec.display), culprit.span)
        elif expanding:
            ctx.deny(MayExceedMax(culprit, spec.display, limit), culprit.span)
        else:
            ctx.deny(TooManyOperands(spec.display, limit, culprit), culprit.span)

    def check_special_files(self) -> None:
        """Operands that may be files, and values of flags that name a file to
        read, must not be devices or kernel files (see `special_file`)."""
        spec, inv, ctx = self.spec, self.inv, self.ctx
        read_values = []
        around: dict[str, list[Word]] = {}
        for use in inv.flags:
            if use.flag.reads and use.value is None and use.value_word not in (None, use.word):
                read_values.append(use.value_word)  # `grep -f ~+/p`: `~+` and $PWD are looked up
                around.setdefault(use.flag.reads, []).append(use.value_word)
            if not use.flag.reads or use.value is None:
                continue
            shown = use.value_word if use.value_word is not None else use.word
            for path in use.flag.paths(use.value):
                if use.flag.reads == "file-if-slash" and "/" not in path:
                    continue  # a name (iconv's charset), not a file
                if special_in(path, ctx.directories()):
                    ctx.deny(DeviceFlagValue(f"{spec.display} {use.name}", path), use.word.span)
                else:
                    read_values.append(Word(path, shown.span, path))
                    around.setdefault(use.flag.reads, []).append(read_values[-1])
        if read_values:  # `grep -f p` where p is a FIFO (rules/files.py)
            check_special_operands(read_values, ctx)
        for shape, words in around.items():  # `kubectl -f DIR`: the files under DIR
            check_around(words, shape, ctx, spec.display)
        check_around(self.looked_up(), spec.positionals.shape, ctx, spec.display)
        for word in self.opened():
            if special_operand_in(word, ctx.directories()):
                ctx.deny(DeviceOperand(spec.display, word), word.span)


def _quote_hint(word: Word, rewritten) -> str:
    """Quote `./$f` as `"./$f"`; a word already quoted in parts is not rewritten."""
    if any(c in word.text for c in "\"'\\"):
        return "put every expansion in it inside double quotes so it stays one word"
    quoted = '"' + word.text + '"'
    return f"quote it so it stays one word: `{rewritten(word, quoted)}`"


def _with_double_dash(inv: Invocation) -> str:
    """The inner command's text with `--` before its first operand (or at its end)."""
    texts = [w.text for w in inv.words]
    at = next((k for k, w in enumerate(inv.words) if w is inv.positionals[0]), len(texts)) \
        if inv.positionals else len(texts)
    return " ".join(texts[:at] + ["--"] + texts[at:])
