"""sed: read the script and deny the commands that run programs or write files.

The reader follows GNU sed 4.9's grammar (info sed, "sed scripts"): commands
separated by newlines or `;`, addresses, `!`, blocks, labels, a/i/c text, and
the s and y commands with any delimiter.  `w`/`W` and `s///w` write a file,
`e` and `s///e` run a shell command; `r`/`R` only read a file into the output,
like cat, and are allowed.  Anything the reader does not understand is denied.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...read.model import Span, Word

# Files a script may name for writing: the output streams, which GNU sed,
# gawk and mawk treat as their own standard output and error.
STREAM_FILES = frozenset({"/dev/stdout", "/dev/stderr"})

_SIMPLE = set("=dDgGhHnNpPxzF")
_LABEL_END = " \t\n;}"


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


def value_word(inv, flag, flag_word: Word, value: str) -> Word:
    """The word holding a flag's value: the flag word itself when the value was
    attached (`-ep`, `--expression=p`), else the next word."""
    text = flag_word.value or ""
    if value and text.endswith(value):
        prefix = text[:-len(value)]
        if prefix.endswith("=") or (not prefix.startswith("--") and prefix[-1:] in
                                    {n[1] for n in flag.names if len(n) == 2}):
            return flag_word
    index = inv.words.index(flag_word)
    return inv.words[index + 1] if index + 1 < len(inv.words) else flag_word


def already_denied(inv, ctx) -> bool:
    """True when the engine already denied a word of this invocation: the
    operands may then be misaligned, and reading them would only add noise."""
    start, end = inv.words[0].span.start, inv.words[-1].span.end
    return any(d.span is not None and start <= d.span.start < end for d in ctx.denials)


def only_info(inv) -> bool:
    """True when a --help/--version style flag makes the program print and exit."""
    names = {n for flag, _, _ in inv.flags for n in flag.names}
    return bool(names & {"--help", "--version", "-W", "--copyright", "--build-configuration"})


class SedReader:
    def __init__(self, text: str, write_targets: frozenset[str]):
        self.s = text
        self.i = 0
        self.write_targets = write_targets | STREAM_FILES
        self.findings: list[Finding] = []

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1

    def read(self) -> list[Finding]:
        depth = 0
        while True:
            self.skip(" \t\n;")
            if self.i >= len(self.s):
                break
            ch = self.peek()
            if ch == "#":
                self.rest_of_line()
                continue
            if ch == ":":
                self.i += 1
                if not self.label():
                    raise Unreadable(self.i - 1, "`:` needs a label")
                continue
            if ch == "}":
                depth -= 1
                if depth < 0:
                    raise Unreadable(self.i, "unexpected `}`")
                self.i += 1
                self.end_of_command()
                continue
            self.addresses()
            self.skip(" \t")
            if self.peek() == "!":
                self.i += 1
                self.skip(" \t")
            depth += self.command()
        if depth:
            raise Unreadable(len(self.s), "unmatched `{`")
        return self.findings

    # -- addresses ---------------------------------------------------------
    def addresses(self) -> None:
        if not self.address():
            return
        self.skip(" \t")
        if self.peek() != ",":
            return
        self.i += 1
        self.skip(" \t")
        if self.peek() in ("+", "~"):
            self.i += 1
            if not self.digits():
                raise Unreadable(self.i, "expected a number after `+` or `~`")
        elif not self.address():
            raise Unreadable(self.i, "expected an address after `,`")

    def address(self) -> bool:
        ch = self.peek()
        if ch.isdigit():
            self.digits()
            if self.peek() == "~":
                self.i += 1
                self.digits()
            return True
        if ch == "$":
            self.i += 1
            return True
        if ch in ("/", "\\"):
            if ch == "\\":
                self.i += 1
            delim = self.delimiter()
            self.delimited(delim, regex=True)
            while self.peek() in ("I", "M") and self.peek():
                self.i += 1
            return True
        return False

    def digits(self) -> bool:
        start = self.i
        while self.peek().isdigit():
            self.i += 1
        return self.i > start

    # -- commands ----------------------------------------------------------
    def command(self) -> int:
        """Read one command; return 1 when it opens a block."""
        start = self.i
        ch = self.peek()
        if not ch:
            raise Unreadable(start, "missing command")
        self.i += 1
        if ch == "{":
            return 1
        if ch in _SIMPLE:
            self.end_of_command()
        elif ch in "lqQ":
            self.skip(" \t")
            self.digits()
            self.end_of_command()
        elif ch in "aic":
            self.text()
        elif ch in "btTv":
            self.skip(" \t")
            self.label()
            self.end_of_command()
        elif ch in "rR":
            self.filename()
        elif ch in "wW":
            name = self.filename()
            if name not in self.write_targets:
                self.findings.append(Finding(start, self.i, "write", f"`{ch} {name}` writes to the file `{name}`",
                                             "print with `p` instead and read the output"))
        elif ch == "e":
            command = self.rest_of_line().strip()
            what = f"`e {command}` runs `{command}` in a shell" if command else \
                "`e` runs the pattern space as a shell command"
            self.findings.append(Finding(start, self.i, "exec", what,
                                         "drop the `e` command; running programs needs leaving plan mode"))
        elif ch == "s":
            self.substitute(start)
        elif ch == "y":
            delim = self.delimiter()
            self.delimited(delim, regex=False)
            self.delimited(delim, regex=False)
            self.end_of_command()
        else:
            raise Unreadable(start, f"unknown command `{ch}`")
        return 0

    def substitute(self, start: int) -> None:
        delim = self.delimiter()
        self.delimited(delim, regex=True)
        self.delimited(delim, regex=False)
        while True:
            ch = self.peek()
            if ch in (" ", "\t") or ch in "gpiImM" and ch or ch.isdigit():
                self.i += 1
            elif ch == "e":
                self.i += 1
                self.findings.append(Finding(start, self.i, "exec",
                                             "the `e` flag of `s` runs the result as a shell command",
                                             "drop the `e` flag; running programs needs leaving plan mode"))
            elif ch == "w":
                self.i += 1
                name = self.filename()
                if name not in self.write_targets:
                    self.findings.append(Finding(start, self.i, "write",
                                                 f"the `w {name}` flag of `s` writes to the file `{name}`",
                                                 "drop the `w` flag (add `p` to print the lines instead)"))
                return
            elif ch in ("", ";", "\n"):
                self.i += 1
                return
            elif ch in ("}", "#"):
                return
            else:
                raise Unreadable(self.i, f"unknown flag `{ch}` of `s`")

    def delimiter(self) -> str:
        ch = self.peek()
        if not ch or ch in "\\\n":
            raise Unreadable(self.i, "missing or invalid delimiter")
        self.i += 1
        return ch

    def delimited(self, delim: str, regex: bool) -> None:
        """Skip one delimited part; in a regex, `[...]` may hold the delimiter in
        GNU sed but not in others, so a delimiter there is denied as ambiguous."""
        while True:
            ch = self.peek()
            if not ch or ch == "\n":
                raise Unreadable(self.i, f"unterminated `{delim}…{delim}`")
            if ch == delim:
                self.i += 1
                return
            if ch == "\\":
                if self.i + 1 >= len(self.s):
                    raise Unreadable(self.i, "trailing backslash")
                self.i += 2
            elif ch == "[" and regex:
                self.bracket(delim)
            else:
                self.i += 1

    def bracket(self, delim: str) -> None:
        j = self.i + 1
        if j < len(self.s) and self.s[j] == "^":
            j += 1
        if j < len(self.s) and self.s[j] == "]":
            j += 1
        while j < len(self.s):
            ch = self.s[j]
            if self.s.startswith(("[:", "[.", "[="), j):
                close = self.s.find(self.s[j + 1] + "]", j + 2)
                if close < 0:
                    break
                if delim in self.s[j:close + 2]:
                    break
                j = close + 2
                continue
            if ch == "]":
                self.i = j + 1
                return
            if ch == delim or ch == "\n":
                break
            j += 1
        raise Unreadable(self.i, f"the delimiter `{delim}` inside `[…]` is read differently by GNU and "
                                 "other seds; pick another delimiter")

    def text(self) -> None:
        """a/i/c text: GNU one-liner (`a text`) or classic (`a\\` newline text);
        it runs to the first newline not escaped by a backslash."""
        self.skip(" \t")
        if self.peek() == "\\":
            self.i += 1
            if self.peek() == "\n":
                self.i += 1
        elif self.peek() in ("", "\n"):
            raise Unreadable(self.i, "expected text after `a`, `i` or `c`")
        while self.i < len(self.s):
            ch = self.s[self.i]
            self.i += 2 if ch == "\\" else 1
            if ch == "\n":
                return

    def label(self) -> str:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in _LABEL_END:
            self.i += 1
        return self.s[start:self.i]

    def filename(self) -> str:
        self.skip(" \t")
        name = self.rest_of_line()
        if not name:
            raise Unreadable(self.i, "missing file name")
        return name

    def rest_of_line(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i:end], end
        return text

    def end_of_command(self) -> None:
        self.skip(" \t")
        ch = self.peek()
        if ch in ("", ";", "\n"):
            self.i += 1 if ch else 0
        elif ch not in ("}", "#"):
            raise Unreadable(self.i, f"unexpected `{ch}` after the command")


def check(inv, ctx) -> None:
    """Hook `sed`: read the script from -e/--expression, else the first operand."""
    if already_denied(inv, ctx):
        return
    pieces: list[tuple[Word, str]] = []
    for flag, value, word in inv.flags:
        if "-e" in flag.names:
            pieces.append((value_word(inv, flag, word, value), value))
    if not pieces:
        first = script_operand(inv, ctx, "script", "sed -n 'p' FILE")
        if first is None:
            return
        pieces.append(first)
    judge_pieces("sed", pieces, ctx, lambda text: SedReader(text, ctx.policy.write_targets).read())


def script_operand(inv, ctx, what: str, example: str):
    """The (word, text) of a script given as the first operand, or None after
    denying (missing or not literal) or when only an info flag was given."""
    program = inv.spec.display
    if not inv.positionals:
        if not only_info(inv):
            ctx.deny("BP407", inv.words[0].span, f"`{program}` needs a {what}",
                     f"give the {what}: {example}")
        return None
    first = inv.positionals[0]
    if first.value is None:
        ctx.deny("BP407", first.span, f"the {program} {what} `{first.text}` is not literal",
                 f"write the {what} literally, in single quotes")
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
        ctx.deny("BP407", span,
                 f"the {program} script is not understood at offset {local}"
                 + (f" (`{snippet}`)" if snippet else "") + f": {error.reason}",
                 "rewrite it with plain commands; the checker denies what it cannot read")
        return
    for finding in findings:
        span, _ = locate(finding.start, finding.end)
        ctx.deny("BP407", span, f"the {program} script: {finding.what}", finding.fix, finding.effect)
