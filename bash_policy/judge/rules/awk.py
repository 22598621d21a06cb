"""awk: tokenize the program and deny what runs programs, writes or leaks.

One tokenizer serves gawk, mawk and the one-true-awk: strings, regex
literals (told apart from division by the token before them, as awk's own
lexers do), comments and line continuations.  On the tokens it denies
`system`, every `|` and `|&` (pipes to and from commands), output
redirection after `print`/`printf` (a `>` at the statement's own paren
depth; `$1 > 5` in a pattern stays a comparison), `getline < FILE` unless
FILE is a plain string literal, `ENVIRON`/`SYMTAB` (the environment), and
every `@` (gawk's @load, @include and indirect calls, which reach system).
"""

from __future__ import annotations

import re

from ...read.model import Word
from ...records import dataclass
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .script import STREAM_FILES, Finding, ReadsFile, Unreadable, already_denied, judge_pieces, script_operand


@dataclass(frozen=True)
class NetworkInputFile(Problem):
    code = Code.BP407
    effect = Effect.NETWORK
    message_format = ("`{word.text}` names a gawk network special file (/inet/...): read as input it "
                      "opens a network connection")
    hint_format = "drop it; network access needs leaving plan mode"
    word: Word


_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_OPERATORS = ("**=", "|&", "&&", "||", ">>", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=",
              "==", "<=", ">=", "!=", "!~", "**",
              "+", "-", "*", "/", "%", "^", "!", ">", "<", "|", "?", ":", "~", "=", ",", ";",
              "(", ")", "[", "]", "{", "}", "$")
# After these a `/` divides; elsewhere it starts a regex literal.
_OPERAND_END = {")", "]"}
# After these the awks disagree: `x++ / 1 # /` and `length / 1 # /` hold a
# regex for mawk and a division for gawk; gawk's own keywords are plain
# variables to mawk and to gawk -c/-P (`default / 2; system("x") ; y /`).
# A `/` there is denied (red team RT2 F5, F13).
_AMBIGUOUS_BEFORE_SLASH = {"++", "--", "length", "getline", "BEGINFILE", "ENDFILE", "switch", "case",
                           "default", "func", "nextfile"}
_KEYWORDS = {"BEGIN", "END", "BEGINFILE", "ENDFILE", "function", "func", "if", "else", "while",
             "for", "do", "break", "continue", "next", "nextfile", "exit", "return", "delete",
             "in", "print", "printf", "getline", "switch", "case", "default"}
_STATEMENT_HEADS = {"if", "while", "for"}
_ENDS_STATEMENT = {";", "\n", "}", ""}
_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "%=", "^=", "**=", "++", "--"}
# gawk opens input files with these names as network connections.
INET = ("/inet/", "/inet4/", "/inet6/")
_ESCAPE = re.compile(r"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)", re.DOTALL)
_LEAKS = {"ENVIRON": "reads the environment, which can hold secrets",
          "SYMTAB": "reaches every variable, ENVIRON included"}


class Token:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind: str, text: str, start: int, end: int):
        self.kind, self.text, self.start, self.end = kind, text, start, end


def tokenize(src: str) -> list[Token]:
    """Split an awk program into tokens: name, number, string, regex, newline, op."""
    tokens: list[Token] = []
    heads: list[bool] = []  # for each open paren: does it follow if/while/for?
    i, n = 0, len(src)
    while i < n:
        ch = src[i]
        if ch in " \t\r":
            i += 1
        elif ch == "\\" and src.startswith("\n", i + 1):
            i += 2
        elif ch == "#":
            while i < n and src[i] != "\n":
                i += 1
        elif ch == "\n":
            tokens.append(Token("newline", "\n", i, i + 1))
            i += 1
        elif ch == '"':
            end = _skip_quoted(src, i, '"')
            tokens.append(Token("string", src[i:end], i, end))
            i = end
        elif ch == "/" and tokens and tokens[-1].text in _AMBIGUOUS_BEFORE_SLASH:
            raise Unreadable(i, f"a `/` after `{tokens[-1].text}` divides in some awks and starts a "
                                "regex in others; put the operand in parentheses")
        elif ch == "/" and not _divides(tokens, heads):
            end = _skip_regex(src, i)
            tokens.append(Token("regex", src[i:end], i, end))
            i = end
        elif ("0" <= ch <= "9" or ch == "." and "0" <= src[i + 1:i + 2] <= "9") \
                and (match := _NUMBER.match(src, i)):
            tokens.append(Token("number", match.group(), i, match.end()))
            i = match.end()
        elif match := _NAME.match(src, i):
            tokens.append(Token("name", match.group(), i, match.end()))
            i = match.end()
        elif ch == "@":
            raise Unreadable(i, "`@` (gawk's @load, @include, @namespace and indirect calls such as "
                                "@f() that can reach system()) is not allowed")
        else:
            op = next((o for o in _OPERATORS if src.startswith(o, i)), None)
            if op is None:
                raise Unreadable(i, f"unexpected character `{ch}`")
            if op == ":" and src.startswith("::", i):
                raise Unreadable(i, "gawk namespaces (`::`) are not allowed")
            if op == "(":
                heads.append(bool(tokens) and tokens[-1].text in _STATEMENT_HEADS)
            kind = "op"
            if op == ")" and heads and heads.pop():
                kind = "head-end"  # `if (...)`: a statement, maybe a regex, follows
            tokens.append(Token(kind, op, i, i + len(op)))
            i += len(op)
    return tokens


def _divides(tokens: list[Token], heads: list[bool]) -> bool:
    if not tokens:
        return False
    last = tokens[-1]
    if last.kind in ("number", "string", "regex"):
        return True
    if last.kind == "name":
        return last.text not in _KEYWORDS
    return last.kind == "op" and last.text in _OPERAND_END


def _skip_quoted(src: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(src):
        ch = src[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "\n":
            break
        if ch == quote:
            return j + 1
        j += 1
    raise Unreadable(i, "unterminated string")


def _skip_regex(src: str, i: int) -> int:
    """A regex literal; a `/` inside `[...]` ends it in some awks but not in
    gawk, so it is denied as ambiguous.  Inside brackets `[:alpha:]`, `[.a.]`
    and `[=a=]` are one item: their `]` does not close the bracket (red team
    RT2: `/[[:alpha:]/]!/` is one regex to gawk and mawk)."""
    j = i + 1
    bracket = False
    while j < len(src):
        ch = src[j]
        if ch == "\n":
            break
        if ch == "\\":
            j += 2
            continue
        if bracket:
            if ch == "/":
                raise Unreadable(j, "a `/` inside `[…]` of a regex is read differently by gawk and "
                                    "other awks; write it as `\\/`")
            if ch == "[" and src[j + 1:j + 2] in (":", ".", "="):
                close = src.find(src[j + 1] + "]", j + 2)
                if close >= 0 and "\n" not in src[j:close]:
                    j = close + 2
                    continue
            if ch == "]":
                bracket = False
        elif ch == "[":
            bracket = True
            if src[j + 1:j + 2] == "^":
                j += 1
            if src[j + 1:j + 2] == "]":
                j += 1
        elif ch == "/":
            return j + 1
        j += 1
    raise Unreadable(i, "unterminated regular expression")


class AwkChecker:
    def __init__(self, tokens: list[Token], write_targets: frozenset[str], network_paths: tuple[str, ...]):
        self.t = tokens
        self.write_targets = write_targets | STREAM_FILES
        self.network_paths = network_paths + ("/inet",)
        self.findings: list[Finding | ReadsFile] = []
        self.print_word = "print"
        # Brackets matched once, so that looking around a token is not a rescan
        # (a 14 KB program once took 24 s): where each `(`/`[` closes, and the
        # innermost one each token is inside.
        self.closes: dict[int, int] = {}
        self.inside: list[int | None] = []
        stack: list[int] = []
        for k, tok in enumerate(tokens):
            self.inside.append(stack[-1] if stack else None)
            if tok.text in ("(", "["):
                stack.append(k)
            elif tok.text in (")", "]") and stack:
                self.closes[stack.pop()] = k + 1

    def add(self, token: Token, effect: str, what: str, fix: str, end: Token | None = None) -> None:
        self.findings.append(Finding(token.start, (end or token).end, effect, what, fix))

    def text(self, k: int) -> str:
        return self.t[k].text if k < len(self.t) else ""

    def run(self) -> list[Finding | ReadsFile]:
        depth = 0
        print_depth: int | None = None
        for k, tok in enumerate(self.t):
            text = tok.text
            if tok.kind == "name":
                if text == "system":
                    self.add(tok, "exec", "`system()` runs a shell command",
                             "drop system(); running programs needs leaving plan mode")
                elif text in _LEAKS:
                    self.add(tok, "leak", f"`{text}` {_LEAKS[text]}",
                             "drop it; pass the values you need with -v NAME=VALUE")
                elif text in ("print", "printf"):
                    print_depth, self.print_word = depth, text
                elif text == "getline":
                    self.getline(k)
            elif tok.kind == "string":
                self.check_string(tok)
            if text == "ARGV" and tok.kind == "name":
                self.argv(k)
            elif text in ("|", "|&"):
                self.add(tok, "exec", f"`{text}` pipes into or out of a shell command",
                         "drop the pipe; run the other command separately")
            elif text in ("(", "["):
                depth += 1
            elif text in (")", "]"):
                depth -= 1
            elif text in (">", ">>") and print_depth == depth:
                self.redirection(k)
            if text in _ENDS_STATEMENT and tok.kind != "string" and depth <= (print_depth or 0):
                print_depth = None
        return self.findings

    def argv(self, k: int) -> None:
        """A change to ARGV makes awk read the files it names next, gawk's /inet
        sockets included, from values the checker cannot follow: ARGV may only
        be read (`ARGV[1]`, `k in ARGV`)."""
        before, after = self.text(k - 1) if k else "", self.text(k + 1)
        if after != "[":
            changes = before != "in"  # passed whole: split(s, ARGV), f(ARGV)
        else:
            changes = (self.text(self.group_end(k + 1)) in _ASSIGNMENTS
                       or before in ("++", "--", "getline") or self.in_call(k, ("sub", "gsub")))
        if changes:
            self.add(self.t[k], "network", "the program changes ARGV, the list of files awk reads "
                     "next (gawk opens /inet/... names as network connections)",
                     "name the input files as operands; read ARGV only")

    def in_call(self, k: int, names: tuple[str, ...]) -> bool:
        """Whether token k is inside the arguments of a call to one of `names`."""
        opening = self.inside[k]
        while opening is not None:
            if self.t[opening].text == "(" and opening > 0 and self.t[opening - 1].text in names:
                return True
            opening = self.inside[opening]
        return False

    def check_string(self, tok: Token) -> None:
        body = tok.text[1:-1]
        if any(body.startswith(p) for p in self.network_paths):
            self.add(tok, "network", f"{tok.text} names a network connection (gawk's /inet special files)",
                     "drop it; network access needs leaving plan mode")

    def redirection(self, k: int) -> None:
        tok, target = self.t[k], self.t[k + 1] if k + 1 < len(self.t) else None
        if (target is not None and target.kind == "string" and target.text[1:-1] in self.write_targets
                and self.text(k + 2) in _ENDS_STATEMENT | {")"}):
            return
        shown = target.text if target is not None else ""
        self.add(tok, "write", f"`{self.print_word} … {tok.text} {shown}` writes to a file (after {self.print_word}, "
                 f"`{tok.text}` redirects)",
                 "drop the redirection and read the output directly; to compare, put the "
                 "comparison in parentheses: print ($1 > 5)", target)

    def getline(self, k: int) -> None:
        """`getline [lvalue] < FILE` reads FILE: allowed only for a literal name,
        because an expression could name anything, gawk's /inet sockets included."""
        j = self.lvalue_end(k + 1)
        if self.text(j) != "<":
            return
        target = self.t[j + 1] if j + 1 < len(self.t) else None
        if (target is not None and target.kind == "string"
                and self.text(j + 2) in _ENDS_STATEMENT | {")"}):
            self.findings.append(ReadsFile(target.start, target.end, _unescaped(target.text[1:-1])))
            return
        self.add(self.t[k], "network", "`getline < FILE` with a file name that is not a plain string "
                 "reads a file chosen at run time (gawk's /inet files open sockets)",
                 'write the file name as a string literal: (getline line < "file")', target)

    def lvalue_end(self, j: int) -> int:
        if self.text(j) == "$":
            while self.text(j) in ("$", "!", "-", "+", "++", "--"):
                j += 1
            j = self.primary_end(j)
            while self.text(j) in ("++", "--"):
                j += 1
            return j
        if j < len(self.t) and self.t[j].kind == "name" and self.t[j].text not in _KEYWORDS:
            j += 1
            if self.text(j) == "[":
                j = self.group_end(j)
        return j

    def primary_end(self, j: int) -> int:
        if j >= len(self.t):
            return j
        if self.t[j].text == "(":
            return self.group_end(j)
        j += 1
        if self.text(j) in ("(", "["):
            return self.group_end(j)
        return j

    def group_end(self, j: int) -> int:
        """The index after the bracket that closes the one at j (the end when unclosed)."""
        return self.closes.get(j, len(self.t))


def read_program(text: str, write_targets: frozenset[str],
                 network_paths: tuple[str, ...]) -> list[Finding | ReadsFile]:
    return AwkChecker(tokenize(text), write_targets, network_paths).run()


def _unescaped(text: str) -> str:
    """An assignment's value as awk stores it: escape sequences processed."""
    def one(match: re.Match) -> str:
        code = match[1]
        if code[0] in "01234567":
            return chr(int(code, 8))
        if code[0] == "x" and len(code) > 1:
            return chr(int(code[1:], 16))
        return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v",
                "a": "\a"}.get(code, code)
    return _ESCAPE.sub(one, text)


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*=")


def _inet_inputs(inv, ctx, files) -> None:
    """gawk's /inet special files given as input files or assigned to variables
    (-v NAME=VALUE, NAME=VALUE operands), from where they could reach input."""
    values = [(use.value_word, use.value.partition("=")[2])
              for use in inv.uses("--assign") if use.value is not None]
    for word in files:
        name, eq, value = (word.value or "").partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", name):
            values.append((word, value))  # an assignment operand
        elif word.value is not None:
            values.append((word, word.value))
    for word, value in values:
        if _unescaped(value).startswith(INET):
            ctx.deny(NetworkInputFile(word), word.span)


def _reads_stdin(inv, ctx, sources, files) -> None:
    """awk reads standard input unless an operand is a file: `NAME=VALUE`
    operands only assign (so may a glob's or a variable's), and a program
    or assignment that touches ARGC can drop the files (`BEGIN { ARGC = 1 }`;
    red team RT3: the script piped into bash lost a block to awk)."""
    named = [w for w in files if w.value and not _ASSIGNMENT.match(w.value)]  # awk skips '' too
    argc = (any("ARGC" in text for _, text in sources)
            or any("ARGC" in (use.value or "") for use in inv.uses("--assign"))
            or any(w.value is None or w.value.startswith("ARGC=") for w in files))
    if not named or argc:
        ctx.reads_stdin = True


@rule("awk_program", codes=[Code.BP407],
      deny=["awk '{ system(\"id\") }' f", "awk '{ print > \"out\" }' f", "awk '{ print | \"sh\" }' f",
            "awk 1 /inet/tcp/8765/0/0", "awk -v x=/inet/tcp/1/h/80 'BEGIN { ARGV[1] = x } 1' f"],
      allow=["awk '{ print $1 }' f", "awk -F: '$3 > 0 { print }' f", "awk '{ print ARGV[1] }' f"])
def check(inv, ctx) -> None:
    """awk programs that run commands, write files or open network connections.
    `system`, pipes to and from commands, output redirection, changes to ARGV
    and gawk's /inet special files (in the program, the input files or the
    assigned values) all escape a read; the program is every -e/--source
    text, else the first operand."""
    if already_denied(inv, ctx):
        return
    sources = [(use.value_word, use.value) for use in inv.uses("--source")
               if use.value_word is not None]
    files = inv.positionals
    if not sources:
        first = script_operand(inv, ctx, "program", "awk '{ print $1 }' FILE")
        if first is None:
            return
        sources, files = [first], files[1:]
    _inet_inputs(inv, ctx, files)
    _reads_stdin(inv, ctx, sources, files)

    def read(text: str) -> list[Finding | ReadsFile]:
        return read_program(text, ctx.policy.write_targets, ctx.policy.network_paths)

    before = len(ctx.denials)
    if len(sources) > 1:  # gawk keeps each -e apart; others may join them: check both ways
        for source in sources:
            judge_pieces("awk", [source], ctx, read)
    if len(ctx.denials) == before:
        judge_pieces("awk", sources, ctx, read)
