"""Helpers shared by the rules that read a second language inside an argument
(sed scripts, awk programs, jq filters): locating findings in the words they
came from, and the common ways a script operand is given or missing.
"""

from __future__ import annotations

import os

from ...read.model import Span, Word
from ...records import dataclass
from ..codes import Code, Effect
from ..problems import Problem
from ..special import on_disk, special_in, stdin_in

# Files a script may name for writing: the output streams, which GNU sed,
# gawk and mawk treat as their own standard output and error.
STREAM_FILES = frozenset({"/dev/stdout", "/dev/stderr"})


class Unreadable(Exception):
    """The reader met text it does not understand, at `offset`."""

    def __init__(self, offset: int, reason: str):
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


@dataclass(frozen=True)
class Finding:
    """A script construct with an effect: where it is, what it does, the way around."""

    start: int
    end: int
    effect: str
    what: str
    fix: str


@dataclass(frozen=True)
class ReadsFile:
    """A file the script reads by a literal name (sed `r FILE`, awk `getline <
    "FILE"`): judged like a file operand, for devices and standard input."""

    start: int
    end: int
    name: str


@dataclass(frozen=True)
class ScriptMissing(Problem):
    code = Code.BP407
    message_format = "`{program}` needs a {what}"
    hint_format = "give the {what}: {example}"
    program: str
    what: str  # "script", "program", ...
    example: str


@dataclass(frozen=True)
class ScriptNotLiteral(Problem):
    code = Code.BP407
    message_format = "the {program} {what} `{word.text}` is not literal"
    hint_format = "write the {what} literally, in single quotes"
    program: str
    what: str
    word: Word


@dataclass(frozen=True)
class ScriptUnreadable(Problem):
    code = Code.BP407
    hint_format = "rewrite it with plain commands; the checker denies what it cannot read"
    program: str
    offset: int
    snippet: str
    reason: str

    def message(self) -> str:
        shown = f" (`{self.snippet}`)" if self.snippet else ""
        return f"the {self.program} script is not understood at offset {self.offset}{shown}: {self.reason}"


@dataclass(frozen=True)
class ScriptReadsDevice(Problem):
    code = Code.BP407
    effect = Effect.HANG
    message_format = "the {program} script reads `{name}`, a device or kernel file whose reading may never end"
    hint_format = "read a regular file"
    program: str
    name: str


@dataclass(frozen=True)
class ScriptCommand(Problem):
    """What a script reader found the script doing (Finding: its effect, what and fix)."""

    code = Code.BP407
    message_format = "the {program} script: {finding.what}"
    hint_format = "{finding.fix}"
    program: str
    finding: Finding

    def consequence(self) -> Effect:
        return Effect(self.finding.effect)


def script_span(word: Word, start: int, end: int) -> Span:
    """The source span of characters [start, end) of `word`'s value, when the
    word is written plainly or in one pair of quotes; else the whole word."""
    value, text = word.value or "", word.text
    if text == value:
        offset = 0
    elif len(text) == len(value) + 2 and text[0] in "'\"" and text[-1] == text[0] and text[1:-1] == value:
        offset = 1
    else:
        return word.span
    return Span(word.span.start + offset + start, word.span.start + offset + max(end, start + 1))


def already_denied(inv, ctx) -> bool:
    """True when the engine already denied a word of this invocation: the
    operands may then be misaligned, and reading them would only add noise."""
    start, end = inv.words[0].span.start, inv.words[-1].span.end
    return any(d.span is not None and start <= d.span.start < end for d in ctx.denials)


def only_info(inv) -> bool:
    """True when a --help/--version style flag makes the program print and exit."""
    names = {n for use in inv.flags for n in use.flag.names}
    return bool(names & {"--help", "--version", "-W", "--copyright", "--build-configuration"})


def script_operand(inv, ctx, what: str, example: str):
    """The (word, text) of a script given as the first operand, or None after
    denying (missing or not literal) or when only an info flag was given."""
    program = inv.spec.display
    if not inv.positionals:
        if not only_info(inv):
            ctx.deny(ScriptMissing(program, what, example), inv.words[0].span)
        return None
    first = inv.positionals[0]
    if first.value is None:
        ctx.deny(ScriptNotLiteral(program, what, first), first.span)
        return None
    return first, first.value


def judge_pieces(program: str, pieces, ctx, read) -> None:
    """Read the script joined from `pieces` (word, text) and deny its findings,
    pointing each at the word and offset it came from."""
    text = "\n".join(t for _, t in pieces)
    starts, at = [], 0
    for word, piece in pieces:
        starts.append((at, word, piece))
        at += len(piece) + 1

    def locate(start: int, end: int) -> tuple[Span, int]:
        for base, word, piece in reversed(starts):
            if start >= base:
                local = start - base
                return script_span(word, local, min(end - base, len(piece))), local
        return pieces[0][0].span, start

    try:
        findings = read(text)
    except Unreadable as error:
        span, local = locate(error.offset, error.offset + 1)
        snippet = text[error.offset:error.offset + 12].split("\n")[0]
        ctx.deny(ScriptUnreadable(program, local, snippet, error.reason), span)
        return
    for finding in findings:
        span, _ = locate(finding.start, finding.end)
        if isinstance(finding, ReadsFile):
            name = finding.name
            found = {on_disk(os.path.join(d, name)) for d in ctx.directories() if d is not None}
            if name == "-" or stdin_in(name, ctx.directories()) or "stdin" in found:
                ctx.reads_stdin = True  # the script's later lines, when piped into bash
            elif special_in(name, ctx.directories()) or found - {None}:
                ctx.deny(ScriptReadsDevice(program, name), span)
            continue
        ctx.deny(ScriptCommand(program, finding), span)
