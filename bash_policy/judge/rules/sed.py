"""sed: read the script and deny the commands that run programs or write files.

The reader follows GNU sed 4.9's grammar (info sed, "sed scripts"): commands
separated by newlines or `;`, addresses, `!`, blocks, labels, a/i/c text, and
the s and y commands with any delimiter.  `w`/`W` and `s///w` write a file,
`e` and `s///e` run a shell command; `r`/`R` only read a file into the output,
like cat, and are allowed.  Anything the reader does not understand is denied.
"""

from __future__ import annotations

from ..codes import Code
from . import rule
from .script import STREAM_FILES, Finding, ReadsFile, Unreadable, already_denied, judge_pieces, script_operand

_SIMPLE = set("=dDgGhHnNpPxzF")
_LABEL_END = " \t\n;}"


class SedReader:
    def __init__(self, text: str, write_targets: frozenset[str]):
        self.s = text
        self.i = 0
        self.write_targets = write_targets | STREAM_FILES
        self.findings: list[Finding | ReadsFile] = []

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1

    def read(self) -> list[Finding | ReadsFile]:
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
        if "0" <= ch <= "9":
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
        while "0" <= self.peek() <= "9":
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
            name = self.filename()
            self.findings.append(ReadsFile(start, self.i, name))
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
            if ch in (" ", "\t") or ch in "gpiImM" and ch or "0" <= ch <= "9":
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
        it runs to the first newline not escaped by a backslash.  The character
        right after `a\\` is taken as it is (GNU sed's read_text): a newline
        starts the classic form, anything else, a backslash too, is the text's
        first character, so `a\\\\` newline `w out` ends the text (sed 4.9, tried)."""
        self.skip(" \t")
        if self.peek() == "\\":
            self.i += 2
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


@rule("sed_script", codes=[Code.BP407],
      deny=["sed 'w out' f", "sed -e 's/a/b/e' f", "sed -n '1e id' f"],
      allow=["sed -n '1,5p' f", "sed 's/a/b/g' f", "sed -e p -e 'r other' f"])
def check(inv, ctx) -> None:
    """sed scripts with commands that write files or run programs.
    `w`, `W` and `s///w` write a file and `e`, `s///e` run a shell command; the
    script is read from -e/--expression, else the first operand."""
    if already_denied(inv, ctx):
        return
    pieces = [(use.value_word, use.value) for use in inv.uses("-e") if use.value_word is not None]
    if not pieces:
        first = script_operand(inv, ctx, "script", "sed -n 'p' FILE")
        if first is None:
            return
        pieces.append(first)
    judge_pieces("sed", pieces, ctx, lambda text: SedReader(text, ctx.policy.write_targets).read())


