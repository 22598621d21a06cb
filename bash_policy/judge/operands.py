"""What the argv reader read, judged: operands, the files they and flag values name.

A program's operands have a role in its spec (read, none, a command it runs,
judged by its rules) and a maximum; a word computed at run time may become
several operands or a flag; a wrapper's command gets operands it appends; a
file the program opens may be a device or kernel file (by its name) or a FIFO
or device on disk (rules/files.py), and what it opens around it counts too
(read shapes).  Called by the ArgvReader (judge/options.py) once it has read
a program's words.
"""

from __future__ import annotations

from ..read.model import Span, Word
from ..records import dataclass
from . import fixes, rules, shapes
from .argv import PROGRAM
from .codes import Code, Effect
from .context import Appended, Invocation
from .problems import FromReason, Problem
from .rules import engine_rule
from .rules.files import DeviceValue, check_around, check_own_wildcards, check_special_operands
from .special import special_in, special_operand_in, stdin_in
from .verdict import SAFE, Edit, Fix

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .options import ArgvReader

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


def glob_hint(text: str) -> str:
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
        return glob_hint(self.word.text)


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
        return glob_hint(self.word.text)


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
class AppendedOperandsUnseen(Problem):
    code = Code.BP404
    rule = OPERANDS
    message_format = ("`{program}` has a rule that reads its operands, and {wrapper} appends operands from its "
                      "input that the checker cannot see")
    hint_format = "name the files in the command, or hand over find's paths: find … -print0 | {wrapper} -0 {program} …"
    program: str
    wrapper: str


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


def opened(reader: ArgvReader) -> list[Word]:
    """The operands the program may open as files (not a pattern or program
    given first, not names it never opens)."""
    p, inv, ctx = reader.spec.positionals, reader.inv, reader.ctx
    if p.role != "read" or not p.files:
        return []
    operands = inv.positionals
    if p.pattern is not None and not inv.has(*p.pattern):
        operands = operands[1:]
    return [one for word in operands for one in shapes.instances(word, ctx.source, ctx.variables)]


def looked_up(reader: ArgvReader) -> list[Word]:
    """The operands the program may open that are looked up on disk: not
    those under /dev, /proc or /sys, which `check_special_files` denies
    by their name (one denial for one cause: `cat /dev/zero` is BP406,
    never BP603 as well)."""
    return [word for word in opened(reader) if not special_operand_in(word, reader.ctx.directories())]


def stdin_use(reader: ArgvReader) -> str | None:
    """How the program may read standard input: its spec's `stdin`, a flag
    that reads it, or a file it opens that is or may be `-` or /dev/stdin
    (`diff f -`, `jq --rawfile a /dev/stdin`).  "named" when a flag or an
    operand names it (or may: a glob or a word the checker cannot know),
    "default" when it reads it for want of files (a program may then look at what
    standard input is first: rg searches the directory instead of a
    terminal), None when it does not."""
    spec, inv, dirs = reader.spec, reader.inv, reader.ctx.directories()
    if any(use.flag.reads_stdin
           or (use.value is None and use.flag.reads and use.flag.value != "none")
           or (use.value is not None and any(p == "-" or stdin_in(p, dirs)
                                             for p in use.flag.paths(use.value)))
           for use in inv.flags):
        return "named"  # `--stdin`, or a flag's value given `-` (`grep -f -`)
    if any(_may_name_stdin(w, dirs) for w in opened(reader)):
        return "named"
    if inv.option_like and spec.stdin == "no-files":
        return "named"  # operands that become options may leave no file to read
    if spec.stdin != "no-files":
        return "default" if spec.stdin == "always" else None
    if spec.positionals.pattern is not None:  # grep -e x f: no pattern operand to skip
        return None if opened(reader) else "default"
    return None if inv.positionals[spec.stdin_skip:] else "default"


def _may_name_stdin(word: Word, directories: set[str | None]) -> bool:
    """Whether an operand is or may be `-` or a name of standard input.  A
    glob may be when it can match `-` itself (`*`, not `./*`), or, in a directory
    the checker knows, when a name it matches links to standard input; any
    other word the checker cannot know may be."""
    import fnmatch

    from ..read.model import GLOB
    from .rules.files import glob_matches, glob_pattern
    from .special import on_disk

    if word.value is not None:
        return word.value == "-" or stdin_in(word.value, directories)
    parts = glob_pattern(word.text)
    if not word.pathname_only or GLOB not in {e.kind for e in word.expansions} \
            or (len(parts) == 1 and fnmatch.fnmatchcase("-", parts[0])):
        return True  # only a match without a directory can be a bare `-`
    for directory in directories:
        if directory is None:
            continue
        matched = glob_matches(directory, word.text)
        if matched is None or any(on_disk(m) == "stdin" for m in matched):
            return True
    return False


def check_positionals(reader: ArgvReader) -> None:
    spec, inv, ctx, appended = reader.spec, reader.inv, reader.ctx, reader.appended
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
    if (appended and role == "read" and not appended.dash_safe
            and any(not rules.get(h).unknown_operands for h in spec.hooks)):
        # As for a word bash computes: a rule that reads the operands must see them
        # (`echo /inet/tcp/0/HOST/80 | xargs gawk -- '{print}'` connected).
        ctx.deny(AppendedOperandsUnseen(spec.display, appended.wrapper), inv.words[0].span)
        return
    if appended and not (role == "read" and spec.positionals.max is None
                         and (inv.after_double_dash or spec.harmless
                              or (appended.dash_safe and not spec.plus_options))):
        ctx.deny(AppendedMayBeFlags(spec.display, appended.wrapper, with_double_dash(inv),
                                    fix=appended_fix(reader)), inv.words[0].span)
    if role == "none" and pos:
        ctx.deny(NoOperands(spec.display, pos[0]), pos[0].span)
        return
    if role == "read" and pos:
        check_special_operands(looked_up(reader), ctx)  # FIFOs and devices (rules/files.py)
    limit = spec.positionals.max
    if limit is None:
        return
    # A glob or an unquoted expansion may become any number of operands.
    expanding = [w for w in pos if not shapes.single(w, ctx.source, ctx.variables)]
    if len(pos) <= limit and not expanding:
        return
    culprit = expanding[0] if expanding else pos[limit]
    over = spec.positionals.over_max
    if (over is not None and over.effect is Effect.WRITE and not expanding
            and all(w.value == "/dev/null" for w in pos[limit:])):
        return  # `uniq f.txt /dev/null`: written where `> /dev/null` writes
    if over is not None:
        ctx.deny(OverMax(over, spec.display), culprit.span)
    elif expanding:
        ctx.deny(MayExceedMax(culprit, spec.display, limit), culprit.span)
    else:
        ctx.deny(TooManyOperands(spec.display, limit, culprit), culprit.span)


def check_special_files(reader: ArgvReader) -> None:
    """Operands that may be files, and values of flags that name a file to
    read, must not be devices or kernel files (see `special_file`)."""
    spec, inv, ctx = reader.spec, reader.inv, reader.ctx
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
    check_around(looked_up(reader), spec.positionals.shape, ctx, spec.display)
    if spec.positionals.wildcards:
        check_own_wildcards(looked_up(reader), ctx)
    for word in opened(reader):
        if special_operand_in(word, ctx.directories()):
            ctx.deny(DeviceOperand(spec.display, word), word.span)


def appended_fix(reader: ArgvReader) -> Fix | None:
    """`--` before the operands a wrapper's command is given (`xargs rg
    foo` -> `xargs rg -- foo`), or after its last word when it has none:
    what the wrapper appends then stays operands."""
    if not reader.spec.double_dash:
        return None
    words, pos = reader.inv.words, reader.inv.positionals
    if pos:
        at = next(k for k, w in enumerate(words) if w is pos[0])
        return fixes.double_dash(words, at, ("-", "+") if reader.spec.plus_options else ("-",))
    end = words[-1].span.end
    return Fix((Edit(Span(end, end), " --"),), SAFE)


def quote_hint(word: Word, rewritten) -> str:
    """Quote `./$f` as `"./$f"`; a word already quoted in parts is not rewritten."""
    if any(c in word.text for c in "\"'\\"):
        return "put every expansion in it inside double quotes so it stays one word"
    quoted = '"' + word.text + '"'
    return f"quote it so it stays one word: `{rewritten(word, quoted)}`"


def with_double_dash(inv: Invocation) -> str:
    """The inner command's text with `--` before its first operand (or at its end)."""
    texts = [w.text for w in inv.words]
    at = next((k for k, w in enumerate(inv.words) if w is inv.positionals[0]), len(texts)) \
        if inv.positionals else len(texts)
    return " ".join(texts[:at] + ["--"] + texts[at:])
