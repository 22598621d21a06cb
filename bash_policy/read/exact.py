"""The exact reader: bash's own lexer and grammar, for the subset the checker may allow.

This reader decides what a command means; tree-sitter (and bashlex, when
installed) must read it the same way before anything is allowed
(bash_policy/read/crosscheck.py).  It follows bash 5.2's parse.y, checked
against /bin/bash 5.2.15 (tests/test_grammar_oracle.py and tests/fuzz/):

- Tokens (read_token): blanks are space and tab; a backslash-newline pair
  is removed wherever bash's shell_getc removes it (outside single quotes,
  comments and quoted here-document bodies), also between the characters of
  an operator (`&\\<newline>&` is `&&`); `#` starts a comment only where a
  token starts, and a comment ends at the newline (a trailing backslash does
  not continue it); a word made only of digits, right before `<` or `>` or
  right after `<&`/`>&`, is a descriptor number if it fits in an int; after
  `<&`/`>&` a `-` is a token of its own (`2>&-y` closes 2, then `y` is a
  word).
- Words (read_token_word): quotes, `$'…'`, `$"…"`, `$(…)` (parsed as
  commands), `${NAME}`, `$((…))`, backquotes and `<(…)`/`>(…)` are read as
  parts of one word; reserved words count only unquoted, without `$`, where a
  command may start; `time` only at the start of a pipeline (not after `|`),
  with at most one `-p` and one `--` after it.
- Here-documents: the delimiter is the word with its quotes removed (`<<$'A'`
  is `A`, `<<A'B'` is `AB`); the body starts after the newline that ends the
  line and ends at the first line that is exactly the delimiter (`<<-`
  strips leading tabs only).

What this reader does not model exactly is a problem (BP100/BP101/BP2xx) and
the command is denied: backquotes, `${…}` with operators, arithmetic with
names, array assignments, functions, `select`, `coproc`, extended globs,
here-documents inside substitutions, regular expressions after `=~` other
than the plain forms (`Reader.regex_operand`).
"""

from __future__ import annotations

import re

from ..records import fields, replace
from .model import (
    ANSI_C,
    ARITHMETIC,
    BRACE,
    COMMAND_SUB,
    GLOB,
    LOCALE,
    OUTPUT_SUB,
    PARAMETER,
    PROCESS_SUB,
    TILDE,
    Arith,
    ArithFor,
    Assignment,
    Case,
    CaseArm,
    Command,
    Cond,
    Expansion,
    For,
    Group,
    If,
    List,
    Pipeline,
    Redirect,
    Script,
    Span,
    Subshell,
    While,
    Word,
    own_words,
    walk,
)

# The grammar this reader ports, as `bash-policy --version` names it.
GRAMMAR = "bash 5.2 (parse.y)"
_BLANKS = " \t"
# A word made only of characters no expansion looks at, and quotes that hold
# no expansion: its value is its text without the quotes (the common case,
# read without the character loop below).
_PLAIN_WORD = re.compile(r"""(?:[A-Za-z0-9_./@%+^,=:!#-]|'[^']*'|"[^"$`\\!]*")+""")
_QUOTES = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _unquote(match: re.Match) -> str:
    return match.group(1) if match.group(1) is not None else match.group(2)
_BREAK = frozenset(" \t\n;&|()<>")
# Runs the character loops take at once: characters a word holds as they are
# (no quote, escape, expansion, blank or operator), characters of a double-quoted
# string that need no look (up to a quote, escape, `$` or backquote), and blanks
# with the backslash-newline pairs among them.
_ORDINARY_RUN = re.compile(r"[^\\'\"`$ \t\n;&|()<>]+")
_DOUBLE_QUOTED_RUN = re.compile(r'[^"\\$`]+')
_BLANK_RUN = re.compile(r"(?:[ \t]|\\\n)+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_SPECIAL_PARAMS = frozenset("@*#?-$!0123456789")
# The `${…}` forms read besides `${NAME}` (after the `${`): the length `#NAME`,
# an array's elements or count (`NAME[@]`, `NAME[*]`, `NAME[3]`, `#NAME[@]`),
# and the tests `-`, `:-`, `+`, `:+` with a plain word that nothing expands
# (judge/expand.py computes their values).
_PARAMETER_FORM = re.compile(
    r"(?:#?[A-Za-z_][A-Za-z0-9_]*(?:\[[@*]\])?|[A-Za-z_][A-Za-z0-9_]*\[[0-9]+\]"
    r"|[A-Za-z_][A-Za-z0-9_]*:?[-+][A-Za-z0-9_./,:=@%^ #+-]*)\}")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "for", "select",
                       "while", "until", "do", "done", "function", "time", "{", "}", "!", "[[",
                       "]]", "coproc", "in"})
# Words that end a compound list when they stand where a command could start.
_LIST_ENDS = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}"})
_ARITH_CHARS = frozenset("0123456789 \t+-*/%()<>=!&|^~?:,")
_ARITH_FOR_CHARS = frozenset("0123456789 \tabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_;<>=!+-")
_FD_MAX = 2**31 - 1  # bash takes a digit word as a descriptor only if it fits in an int
_REDIRECT_OPS = frozenset({"<", ">", ">>", "<<", "<<-", "<<<", "<&", ">&", "<>", ">|", "&>", "&>>"})
_UNSUPPORTED_WORDS = {
    "function": "a function definition",
    "select": "a `select` loop",
    "coproc": "a coprocess",
}


class ReadError(Exception):
    """Text the reader rejects: a syntax error, or a construct it does not model."""

    def __init__(self, code: str, start: int, end: int, message: str, hint: str = ""):
        super().__init__(message)
        self.code, self.span, self.message, self.hint = code, Span(start, max(end, start)), message, hint


class _Token:
    __slots__ = ("kind", "text", "start", "end", "word", "reservable", "digits")

    def __init__(self, kind, text, start, end, word=None, reservable=False, digits=False):
        self.kind = kind          # word | number | op | newline | eof
        self.text = text          # raw text (operators: the operator)
        self.start, self.end = start, end
        self.word = word
        self.reservable = reservable  # unquoted and without `$`: may be a reserved word
        self.digits = digits


class _WordBuilder:
    """Accumulates one word's value, its expansions, and the units that brace,
    tilde and glob expansion look at: each value character if unquoted, None
    if quoted, and the marker "$" for an expansion, with the length of the
    value before each unit (`offsets`)."""

    __slots__ = ("chars", "length", "units", "offsets", "expansions", "quoted", "dollar")

    def __init__(self):
        self.chars: list[str] = []
        self.length = 0
        self.units: list[str | None] = []
        self.offsets: list[int] = []
        self.expansions: list[Expansion] = []
        self.quoted = False
        self.dollar = False

    def literal(self, text: str, quoted: bool) -> None:
        length = len(text)
        self.units.extend([None] * length if quoted else text)
        self.offsets.extend(range(self.length, self.length + length))
        self.length += length
        self.chars.append(text)
        if quoted:
            self.quoted = True

    def expansion(self, kind: str, start: int, end: int, body=None, quoted: bool = False) -> None:
        self.expansions.append(Expansion(kind, Span(start, end), body, quoted))
        self.units.append("$")
        self.offsets.append(self.length)


class Reader:
    """One pass over `source[start:]`; `stop` is the operator that ends a
    substitution (`)`), or None at the top level."""

    def __init__(self, source: str, start: int = 0, depth: int = 0):
        self.s = source
        self.n = len(source)
        self.joins = "\\\n" in source  # any backslash-newline pair for skip_joins to skip
        self.i = start
        self.depth = depth
        # Here-documents whose bodies are still to come: (redirect start, delimiter,
        # operator, quoted, delimiter position); bodies read, by redirect start.
        self.heredocs: list[tuple[int, str, str, bool, int]] = []
        self.bodies: dict[int, str] = {}
        self._peeked: tuple[int, bool, _Token] | None = None
        # What finish_word marks (read_word turns them off for words that
        # another expansion made, or that bash does not expand this way).
        self.marks_braces = self.marks_globs = self.assignment_tildes = True
        self.last_word: _WordBuilder | None = None  # the units of the last word read the slow way

    # -- characters -------------------------------------------------------------
    def skip_joins(self, i: int) -> int:
        """Skip backslash-newline pairs at i (bash's shell_getc removes them)."""
        if not self.joins:
            return i
        s = self.s
        while s.startswith("\\\n", i):
            i += 2
        return i

    def char(self, i: int) -> tuple[str, int]:
        """The character at i after removed continuations, and the index after it."""
        i = self.skip_joins(i)
        return (self.s[i], i + 1) if i < self.n else ("", i)

    def fail(self, start: int, message: str, hint: str = "", end: int | None = None, code: str = "BP100"):
        raise ReadError(code, start, start + 1 if end is None else end, message, hint)

    # -- tokens -----------------------------------------------------------------
    def peek(self, command: bool = False, dash: bool = False) -> _Token:
        """The next token.  `command` documents that a command may start here
        (reserved words are recognised by the grammar, not the lexer)."""
        peeked = self._peeked
        if peeked is not None and peeked[0] == self.i and peeked[1] == dash:
            return peeked[2]
        token = self.lex(self.i, dash)
        self._peeked = (self.i, dash, token)
        return token

    def take(self, command: bool = False, dash: bool = False) -> _Token:
        token = self.peek(command, dash)
        self.i = token.end
        self._peeked = None
        if token.kind == "newline" and self.heredocs:
            self.read_heredocs()
        return token

    def lex(self, i: int, dash: bool) -> _Token:
        s, n = self.s, self.n
        blanks = _BLANK_RUN.match(s, i) if self.joins else None
        if blanks is not None:
            i = blanks.end()
        else:
            while i < n and s[i] in _BLANKS:
                i += 1
        if i >= n:
            return _Token("eof", "", n, n)
        c = s[i]
        if c == "#":
            j = s.find("\n", i)
            j = n if j < 0 else j
            if j >= n:
                return _Token("eof", "", n, n)
            return _Token("newline", "\n", j, j + 1)
        if c == "\n":
            return _Token("newline", "\n", i, i + 1)
        if dash and c == "-":
            return _Token("op", "-", i, i + 1)
        if c in "|&;()<>":
            nxt, j = self.char(i + 1)
            if c in "<>" and nxt == "(":
                return self.lex_word(i)
            op = c
            end = i + 1
            if c == "<":
                if nxt == "<":
                    third, k = self.char(j)
                    op, end = ("<<-", k) if third == "-" else ("<<<", k) if third == "<" else ("<<", j)
                elif nxt in "&>":
                    op, end = c + nxt, j
            elif c == ">":
                if nxt in ">&|":
                    op, end = c + nxt, j
            elif c == "&":
                if nxt == "&":
                    op, end = "&&", j
                elif nxt == ">":
                    third, k = self.char(j)
                    op, end = ("&>>", k) if third == ">" else ("&>", j)
            elif c == "|":
                if nxt in "|&":
                    op, end = c + nxt, j
            elif c == ";":
                if nxt == ";":
                    third, k = self.char(j)
                    op, end = (";;&", k) if third == "&" else (";;", j)
                elif nxt == "&":
                    op, end = ";&", j
            elif c == "(" and nxt == "(":
                op, end = "((", j
            return _Token("op", op, i, end)
        return self.lex_word(i)

    # -- words ------------------------------------------------------------------
    def lex_word(self, start: int, assignment_value: bool = False) -> _Token:
        """Read one word from `start` (read_token_word)."""
        s, n = self.s, self.n
        fast = _PLAIN_WORD.match(s, start)
        if fast is not None and (fast.end() == n or s[fast.end()] in _BREAK):
            text = fast.group()
            if "'" not in text and '"' not in text:
                word = Word(text, Span(start, fast.end()), text)
                return _Token("word", text, start, fast.end(), word, reservable=True,
                              digits=text.isascii() and text.isdigit())
            if not assignment_value and not _ASSIGNMENT.match(text):
                value = _QUOTES.sub(_unquote, text)
                return _Token("word", text, start, fast.end(), Word(text, Span(start, fast.end()), value))
        b = _WordBuilder()
        i = end = start  # `end`: after the last character read (continuations after it are not the word's)
        while True:
            end = i
            i = self.skip_joins(i)
            if i >= n:
                break
            c = s[i]
            if c == "\\":
                if i + 1 >= n:  # bash -c keeps it (it appends another); bash reading a script drops it
                    self.fail(i, "a backslash at the very end of the command: `bash -c` passes it, bash "
                              "reading the script from a file or stdin drops it",
                              "drop the backslash, or quote it: '\\'")
                else:
                    b.literal(s[i + 1], True)
                    i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                if j < 0:
                    self.fail(i, "syntax error: unterminated single quote", "close the quote")
                b.literal(s[i + 1:j], True)
                b.quoted = True
                i = j + 1
            elif c == '"':
                i = self.double_quoted(i, b)
            elif c == "`":
                self.fail(i, "backquote command substitution is not supported",
                          "use $(…) instead of backquotes", code="BP200")
            elif c == "$":
                i = self.dollar(i, b, quoted=False)
            elif c in "<>" and self.char(i + 1)[0] == "(":
                i = self.substitution(i, self.char(i + 1)[1], b, PROCESS_SUB if c == "<" else OUTPUT_SUB)
            elif c in _BREAK:
                break
            else:
                run = _ORDINARY_RUN.match(s, i)
                assert run is not None  # c itself is ordinary
                b.literal(run.group(), False)
                i = run.end()
        self.last_word = b
        return self.finish_word(b, s[start:end], start, end, assignment_value)

    def double_quoted(self, i: int, b: _WordBuilder) -> int:
        """Read `"…"` from the quote at i; return the index after the closing quote."""
        s, n = self.s, self.n
        b.quoted = True
        j = i + 1
        while True:
            if j >= n:
                self.fail(i, "syntax error: unterminated double quote", "close the quote")
            c = s[j]
            if c == '"':
                return j + 1
            if c == "\\":
                nxt = s[j + 1] if j + 1 < n else ""
                if nxt == "\n":
                    j += 2
                elif nxt in '$`"\\':
                    b.literal(nxt, True)
                    j += 2
                else:
                    b.literal("\\", True)
                    j += 1
            elif c == "$":
                j = self.dollar(j, b, quoted=True)
            elif c == "`":
                self.fail(j, "backquote command substitution is not supported",
                          "use $(…) instead of backquotes", code="BP200")
            else:
                run = _DOUBLE_QUOTED_RUN.match(s, j)
                assert run is not None  # c itself needs no look
                b.literal(run.group(), True)
                j = run.end()

    def dollar(self, i: int, b: _WordBuilder, quoted: bool) -> int:
        """Read what follows the `$` at i; return the index after it."""
        s = self.s
        b.dollar = True
        nxt, j = self.char(i + 1)
        if nxt == "(":
            third, k = self.char(j)
            if third == "(":
                return self.arithmetic(i, k, b, quoted)
            return self.substitution(i, j, b, COMMAND_SUB, quoted)
        if nxt == "{":
            m = _NAME.match(s, j)
            end = m.end() if m else (j + 1 if j < self.n and s[j] in _SPECIAL_PARAMS else j)
            if end == j or not s.startswith("}", end):
                form = _PARAMETER_FORM.match(s, j)
                if form is None:
                    self.fail(i, "`${…}` with operators is not supported: its value and extent are "
                                 "unknown to the checker", "write the value literally", code="BP201")
                    raise AssertionError  # unreachable: fail raises
                end = form.end() - 1
            b.expansion(PARAMETER, i, end + 1, quoted=quoted)
            return end + 1
        if nxt == "[":
            self.fail(i, "`$[…]` arithmetic is not supported", "write the number literally",
                      code="BP202")
        if not quoted and nxt == "'":
            k = j
            while k < self.n and s[k] != "'":
                k += 2 if s[k] == "\\" else 1
            if k >= self.n:
                self.fail(i, "syntax error: unterminated $'…' quote", "close the quote")
            b.expansion(ANSI_C, i, k + 1)
            b.quoted = True
            return k + 1
        if not quoted and nxt == '"':
            sink = _WordBuilder()
            k = self.double_quoted(j - 1, sink)
            if sink.expansions:
                self.fail(i, "expansions inside `$\"…\"` are not supported", "use plain quotes",
                          code="BP206")
            b.expansion(LOCALE, i, k)
            b.quoted = True
            return k
        if nxt and (nxt in _SPECIAL_PARAMS):
            b.expansion(PARAMETER, i, j, quoted=quoted)
            return j
        if nxt and (nxt.isascii() and (nxt.isalpha() or nxt == "_")):
            end = j  # a name goes on across removed continuations: `$A\<newline>B` is $AB
            while True:
                ch, k = self.char(end)
                if not (ch.isascii() and (ch.isalnum() or ch == "_")):
                    break
                end = k
            b.expansion(PARAMETER, i, end, quoted=quoted)
            return end
        b.literal("$", quoted)
        return i + 1

    def substitution(self, start: int, open_paren_end: int, b: _WordBuilder, kind: str,
                     quoted: bool = False) -> int:
        """`$(…)`, `<(…)` or `>(…)`: the inner commands, read by a nested reader."""
        if self.depth >= 50:
            self.fail(start, "substitutions nested too deeply", code="BP103")
        inner = Reader(self.s, open_paren_end, self.depth + 1)
        body = inner.compound_list(stop=")")
        close = inner.take()
        if close.kind != "op" or close.text != ")":
            self.fail(close.start, "syntax error: expected `)` to close the substitution",
                      "close the parenthesis")
        if inner.heredocs or inner.bodies:
            self.fail(start, "here-documents inside a substitution are not supported",
                      "put the here-document in a command of its own")
        _reprinted_alike(self, body)
        b.expansion(kind, start, close.end, body, quoted)
        return close.end

    def arithmetic(self, start: int, i: int, b: _WordBuilder, quoted: bool) -> int:
        """`$((…))` with numbers and operators only (names would be evaluated)."""
        end = self.arith_end(start, i)
        b.expansion(ARITHMETIC, start, end, quoted=quoted)
        return end

    def arith_end(self, start: int, i: int, code: str = "BP202") -> int:
        """Index after the `))` that closes arithmetic starting at i (after `((`)."""
        s, depth = self.s, 0
        while i < self.n:
            c = s[i]
            if c == ")":
                if depth == 0:
                    if s.startswith("))", i):
                        return i + 2
                    break
                depth -= 1
            elif c == "(":
                depth += 1
            elif c not in _ARITH_CHARS:
                self.fail(start, "arithmetic with names, quotes or expansions is not supported: "
                                 "names are evaluated as expressions", "write the number literally",
                          code=code)
            i += 1
        self.fail(start, "syntax error: unterminated arithmetic", "close it with `))`")
        raise AssertionError  # unreachable: fail raises

    def finish_word(self, b: _WordBuilder, text: str, start: int, end: int,
                    assignment_value: bool) -> _Token:
        units = b.units
        # Each unit where a pathname-style expansion starts: (unit index, kind).
        marks = []
        # Tilde: an unquoted `~` first, or after `=`/`:` in an assignment-like word
        # (bash expands those in arguments too: `rg x=~/y` passes x=/root/y).
        if units and units[0] == "~":
            marks.append((0, TILDE))
        if assignment_value or (self.assignment_tildes and _ASSIGNMENT.match(text)):
            seen_eq = assignment_value
            for k in range(len(units) - 1):
                if units[k] == "=" and not seen_eq:
                    seen_eq = True
                elif units[k] != ":" or not seen_eq:
                    continue
                if units[k + 1] == "~":
                    marks.append((k + 1, TILDE))
                    break
        # Globs: unquoted `*`, `?`, or `[` with an unquoted `]` after it.
        for k, u in enumerate(units):
            if not self.marks_globs:
                break
            if u in ("*", "?") or (u == "[" and "]" in units[k + 1:]):
                marks.append((k, GLOB))
                break
        brace = _brace_at(units) if self.marks_braces else None
        if brace is not None:
            marks.append((brace, BRACE))
        first = [b.offsets[k] for k, u in enumerate(units) if u == "$"][:1]
        for k, kind in sorted(marks):
            first.append(b.offsets[k])
            b.expansions.append(Expansion(kind, Span(start, end)))
        literal = "".join(b.chars)
        value = None if b.expansions else literal
        word = Word(text, Span(start, end), value, tuple(b.expansions),
                    literal[:min(first)] if first else "")
        digits = not b.quoted and not b.expansions and literal.isascii() and literal.isdigit()  # `1\⏎2` is 12
        return _Token("word", text, start, end, word, reservable=not b.quoted and not b.dollar,
                      digits=digits)

    # -- here-documents -----------------------------------------------------------
    def read_heredocs(self) -> None:
        """Read the pending here-document bodies, which start at self.i (after the newline)."""
        for key, delimiter, op, quoted, at in self.heredocs:
            s, i = self.s, self.i
            lines = []
            while True:
                if i >= self.n:
                    self.fail(at, f"the here-document has no end line `{delimiter}`",
                              f"end it with a line that is exactly {delimiter}")
                j = s.find("\n", i)
                line_end = self.n if j < 0 else j
                line = s[i:line_end]
                compared = line.lstrip("\t") if op == "<<-" else line
                if not quoted and any(ch in line for ch in "$`\\"):
                    self.fail(at, "the here-document's delimiter is unquoted, so `$`, backquotes "
                                  "and `\\` in its body are expanded", "quote the delimiter: <<'EOF'",
                              end=line_end, code="BP105")
                i = line_end + 1
                if compared == delimiter:
                    break
                lines.append(line + "\n")
            self.bodies[key] = "".join(lines)
            self.i = min(i, self.n)
        self.heredocs = []

    # -- grammar ------------------------------------------------------------------
    def script(self) -> List | None:
        self.skip_newlines()
        if self.peek(True).kind == "eof":
            return None
        body = self.compound_list(stop=None)
        token = self.peek(True)
        if token.kind != "eof":
            self.unexpected(token)
        if self.heredocs:
            self.fail(self.heredocs[0][4], "the here-document has no body: the command ends first",
                      "put the body on the lines after the command")
        return body

    def skip_newlines(self) -> None:
        while self.peek(True).kind == "newline":
            self.take(True)

    def unexpected(self, token: _Token):
        what = "the end of the command" if token.kind == "eof" else f"`{token.text}`"
        self.fail(token.start, f"syntax error near {what}",
                  "check for an unpaired quote, bracket or operator", end=token.end)

    def at_list_end(self, token: _Token, stop: str | None) -> bool:
        if token.kind == "eof":
            return True
        if token.kind == "op" and token.text in (")", ";;", ";&", ";;&") and stop is not None:
            return True
        return token.kind == "word" and token.reservable and token.text in _LIST_ENDS

    def compound_list(self, stop: str | None) -> List:
        """Pipelines joined by && || ; & and newlines, up to a closing word or `stop`."""
        items: list[Pipeline] = []
        ops: list[str] = []
        self.skip_newlines()
        start = self.peek(True).start
        while True:
            token = self.peek(True)
            if self.at_list_end(token, stop):
                if not items or (ops and ops[-1] in ("&&", "||")):
                    self.unexpected(token)
                break
            items.append(self.pipeline())
            token = self.peek()
            if token.kind == "op" and token.text in ("&&", "||"):
                self.take()
                ops.append(token.text)
                self.skip_newlines()
                continue
            if token.kind == "op" and token.text in (";", "&"):
                self.take()
                ops.append(token.text)
                self.skip_newlines()
                continue
            if token.kind == "newline":
                self.take()
                ops.append("\n")
                self.skip_newlines()
                continue
            if self.at_list_end(token, stop) or token.kind == "eof":
                break
            self.unexpected(token)
        end = items[-1].span.end
        return List(tuple(items), tuple(ops), Span(start, end))

    def pipeline(self) -> Pipeline:
        negated = timed = False
        start = self.peek(True).start
        while True:
            token = self.peek(True)
            if token.kind == "word" and token.reservable and token.text == "!":
                self.take(True)
                negated = not negated
            elif token.kind == "word" and token.reservable and token.text == "time":
                self.take(True)
                timed = True
                if self.peek().kind == "word" and self.peek().text == "-p":
                    self.take()
                if self.peek().kind == "word" and self.peek().text == "--":
                    self.take()
            else:
                break
        token = self.peek(True)
        if (negated or timed) and (token.kind in ("eof", "newline")
                                   or (token.kind == "op" and token.text in (";", "&", ")"))):
            self.fail(token.start, "`time` or `!` with no command after it is not supported",
                      "drop it", code="BP101")
        commands = [self.command(first=True)]
        stderr: list[bool] = []
        while True:
            token = self.peek()
            if token.kind == "op" and token.text in ("|", "|&"):
                self.take()
                stderr.append(token.text == "|&")
                self.skip_newlines()
                commands.append(self.command(first=False))
                continue
            break
        return Pipeline(tuple(commands), Span(start, commands[-1].span.end), negated, timed,
                        tuple(stderr))

    def command(self, first: bool):
        token = self.peek(True)
        if token.kind == "word" and token.reservable:
            word = token.text
            if word == "time" and not first:
                return self.simple()  # after `|`, `time` is a program name (bash: time: not found)
            if word in ("if", "for", "while", "until", "case", "{", "[["):
                return self.compound(word)
            if word == "!":
                self.fail(token.start, "syntax error: `!` must start a pipeline",
                          "put `!` before the first command", end=token.end)
            if word in _UNSUPPORTED_WORDS:
                self.fail(token.start, f"{_UNSUPPORTED_WORDS[word]} is outside what plan mode can "
                                       "check", "write simple commands", end=token.end, code="BP101")
            if word in _RESERVED:
                self.unexpected(token)
        if token.kind == "op" and token.text == "(":
            return self.subshell()
        if token.kind == "op" and token.text == "((":
            return self.arith_command()
        return self.simple()

    # -- simple commands --------------------------------------------------------
    def descriptor(self, token: _Token) -> int | None:
        """The descriptor number a digit word names when a redirection follows it."""
        if not token.digits or int(token.word.value) > _FD_MAX:
            return None
        after = self.skip_joins(token.end)
        return int(token.word.value) if after < self.n and self.s[after] in "<>" else None

    def simple(self) -> Command:
        words: list[Word] = []
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        start = self.peek(True).start
        end = start
        while True:
            token = self.peek()
            if token.kind == "word":
                fd = self.descriptor(token)
                if fd is not None:
                    self.take()
                    redirects.append(self.redirect(fd, token.start))
                    end = redirects[-1].span.end
                    continue
                after = self.skip_joins(token.end)
                if (token.text.startswith("{") and token.text.endswith("}") and after < self.n
                        and self.s[after] in "<>" and _NAME.fullmatch(token.text[1:-1])):
                    self.fail(token.start, f"`{token.text}` before a redirection assigns a descriptor "
                                           "number to a shell variable",
                              "drop it and redirect a plain descriptor", end=token.end, code="BP101")
                self.take()
                if not words and self.assignment(token, assignments):
                    end = token.end
                    continue
                if not words and self.peek().kind == "op" and self.peek().text == "(":
                    self.fail(token.start, "a function definition is outside what plan mode can "
                                           "check", "write simple commands", code="BP101")
                words.append(token.word)
                end = token.end
                continue
            if token.kind == "op" and token.text in _REDIRECT_OPS:
                redirects.append(self.redirect(None, token.start))
                end = redirects[-1].span.end
                continue
            break
        if not words and not assignments and not redirects:
            self.unexpected(self.peek())
        return Command(tuple(words), tuple(assignments), tuple(redirects), Span(start, end))

    def assignment(self, token: _Token, assignments: list[Assignment]) -> bool:
        """Read `NAME=VALUE` at the start of a simple command; False if it is a word."""
        m = _ASSIGNMENT.match(token.text)
        if m is None:
            if re.match(r"[A-Za-z_][A-Za-z0-9_]*\[", token.text) and "=" in token.text:
                self.fail(token.start, "array assignments change shell variables the checker "
                                       "cannot follow", "drop the assignment", end=token.end,
                          code="BP600")
            return False
        if m.group(2):
            self.fail(token.start, "`+=` appends to a value the checker cannot see",
                      "drop the assignment", end=token.end, code="BP600")
        value_start = token.start + m.end()
        if self.s.startswith("(", value_start) and token.end == value_start:
            assignments.append(self.array(m.group(1), token.start, value_start))
            return True
        # Read again from after `=`, as a value (tildes after `:`): the name
        # before it holds no quote, expansion or continuation, so this ends
        # where the token ended.
        value = self.lex_word(value_start, assignment_value=True).word
        assignments.append(Assignment(m.group(1), value, Span(token.start, token.end)))
        return True

    def array(self, name: str, start: int, open_at: int) -> Assignment:
        """`NAME=(WORDS)`, an indexed array's elements, after the `NAME=` token
        (parse_compound_assignment: words separated by blanks, newlines and
        comments); `[KEY]=VALUE` elements are not read."""
        self.take()  # the `(` the caller found right after `=`
        elements: list[Word] = []
        while True:
            token = self.peek()
            if token.kind == "newline":
                if self.heredocs:
                    self.fail(token.start, "a here-document inside an array assignment is not supported")
                self.take()
            elif token.kind == "word":
                if token.text.startswith("[") and "]=" in token.text:
                    self.fail(token.start, "`[KEY]=VALUE` in an array assignment sets elements the "
                              "checker does not follow", "list the values: a=(x y)", end=token.end,
                              code="BP600")
                elements.append(self.take().word)
            elif token.kind == "op" and token.text == ")":
                close = self.take()
                break
            else:
                self.unexpected(token)
        after = self.skip_joins(close.end)
        if after < self.n and self.s[after] not in _BREAK:
            self.fail(start, "bash reads `NAME=(…)` with text right after the `)` as a plain "
                      "value, not an array", "put a blank after the `)`", end=after + 1)
        text = self.s[open_at:close.end]
        value = Word(text, Span(open_at, close.end), None)
        return Assignment(name, value, Span(start, close.end), tuple(elements))

    def redirect(self, fd: int | None, start: int) -> Redirect:
        op = self.take()
        if op.kind != "op" or op.text not in _REDIRECT_OPS:
            self.unexpected(op)
        dup = op.text in ("<&", ">&")
        target = self.peek(dash=dup)
        if dup and target.kind == "op" and target.text == "-":
            self.take(dash=True)
            return Redirect(op.text + "-", fd, None, Span(start, target.end))
        if target.kind != "word":
            self.unexpected(target)
        after = self.skip_joins(target.end)
        if target.digits and not dup and self.s[after:after + 1] in ("<", ">"):  # bash's grammar
            # takes a NUMBER after `>&` and `<&`, but only a WORD after the other operators
            self.fail(target.start, f"bash reads `{target.text}` right before `{self.s[after]}` as a "
                      "descriptor number, so this redirection has no target (a syntax error)",
                      "put a blank between the target and the next redirection", end=target.end)
        self.take(dash=dup)
        word = target.word
        if op.text in ("<<", "<<-"):
            return self.heredoc(fd, start, op.text, target)
        return Redirect(op.text, fd, word, Span(start, target.end))

    def heredoc(self, fd: int | None, start: int, op: str, target: _Token) -> Redirect:
        """A here-document; its body is read at the end of the line (read_heredocs)
        and filled in after the whole script is read (`_with_bodies`)."""
        word = target.word
        if word.value is None:
            self.fail(target.start, "here-document delimiters with `$`, globs or braces are not "
                                    "supported", "use a plain delimiter: <<'EOF'", end=target.end)
        quoted = any(ch in target.text for ch in "'\"\\")
        self.heredocs.append((start, word.value, op, quoted, target.start))
        return Redirect(op, fd, word, Span(start, target.end), None, quoted)

    # -- compound commands --------------------------------------------------------
    def expect_word(self, word: str) -> _Token:
        token = self.take(True)
        if not (token.kind == "word" and token.reservable and token.text == word):
            self.fail(token.start, f"syntax error: expected `{word}`",
                      "check the command's keywords", end=token.end)
        return token

    def redirections(self) -> tuple[Redirect, ...]:
        redirects = []
        while True:
            token = self.peek()
            if token.kind == "op" and token.text in _REDIRECT_OPS:
                redirects.append(self.redirect(None, token.start))
            elif token.kind == "word" and self.descriptor(token) is not None:
                self.take()
                redirects.append(self.redirect(self.descriptor(token), token.start))
            else:
                return tuple(redirects)

    def compound(self, word: str):
        start = self.take(True).start
        if word == "{":
            body = self.compound_list(stop=None)
            end = self.expect_word("}").end
            return Group(body, self.redirections(), Span(start, end))
        if word == "if":
            branches = []
            test = self.compound_list(stop=None)
            self.expect_word("then")
            branches.append((test, self.compound_list(stop=None)))
            orelse = None
            while True:
                token = self.take(True)
                if token.kind == "word" and token.reservable and token.text == "elif":
                    test = self.compound_list(stop=None)
                    self.expect_word("then")
                    branches.append((test, self.compound_list(stop=None)))
                    continue
                if token.kind == "word" and token.reservable and token.text == "else":
                    orelse = self.compound_list(stop=None)
                    token = self.take(True)
                if not (token.kind == "word" and token.reservable and token.text == "fi"):
                    self.fail(token.start, "syntax error: expected `fi`", end=token.end)
                return If(tuple(branches), orelse, self.redirections(), Span(start, token.end))
        if word in ("while", "until"):
            test = self.compound_list(stop=None)
            self.expect_word("do")
            body = self.compound_list(stop=None)
            end = self.expect_word("done").end
            return While(test, body, word == "until", self.redirections(), Span(start, end))
        if word == "for":
            return self.for_loop(start)
        if word == "case":
            return self.case(start)
        return self.cond(start)

    def for_loop(self, start: int) -> For | ArithFor:
        name = self.take()
        if name.kind == "op" and name.text == "((":
            return self.arith_for(start, name)
        if name.kind != "word" or not _NAME.fullmatch(name.text):
            self.fail(name.start, "syntax error: `for` needs a variable name", end=name.end)
        words: tuple[Word, ...] | None = None
        self.skip_newlines()
        token = self.peek()
        if token.kind == "word" and token.text == "in":
            self.take()
            collected = []
            while True:
                token = self.peek()
                if token.kind == "word":
                    self.take()
                    collected.append(token.word)
                elif token.kind == "newline" or (token.kind == "op" and token.text == ";"):
                    self.take()
                    break
                else:
                    self.unexpected(token)
            words = tuple(collected)
        elif token.kind == "op" and token.text == ";":
            self.take()
        self.skip_newlines()
        if self.peek(True).kind == "word" and self.peek(True).text == "{":
            self.fail(self.peek(True).start, "`for … { …; }` is not supported",
                      "write for …; do …; done", code="BP101")
        self.expect_word("do")
        body = self.compound_list(stop=None)
        end = self.expect_word("done").end
        return For(name.text, words, body, self.redirections(), Span(start, end))

    def arith_for(self, start: int, opener: _Token) -> ArithFor:
        """`for (( INIT; TEST; UPDATE ))` then `do … done` (parse.y
        arith_for_command: parse_dparen reads to the matching `))`,
        make_arith_for_command cuts the text at each `;`).  Only names,
        numbers, blanks and `= < > ! + -` are read in the expressions; the
        engine then allows only counting loops with literal bounds."""
        s = self.s
        close = s.find("))", opener.end)
        header = s[opener.end:close] if close >= 0 else ""
        if close < 0 or not _ARITH_FOR_CHARS.issuperset(header):
            self.fail(opener.start, "a `for (( … ))` loop whose expressions hold more than names, "
                      "numbers and `= < > ! + -` is outside what plan mode can check",
                      "count with literal bounds: for ((i = 0; i < 3; i++)); do …; done", code="BP101")
        parts = header.split(";")
        if len(parts) != 3:
            self.fail(opener.start, "syntax error: `for (( … ))` needs three expressions separated "
                      "by `;`", "write for ((i = 0; i < 3; i++))", end=close + 2)
        self.i, self._peeked = close + 2, None
        token = self.peek()
        if token.kind == "newline" or (token.kind == "op" and token.text == ";"):
            self.take()
        self.skip_newlines()
        if self.peek(True).kind == "word" and self.peek(True).text == "{":
            self.fail(self.peek(True).start, "`for (( … )) { …; }` is not supported",
                      "write for (( … )); do …; done", code="BP101")
        self.expect_word("do")
        body = self.compound_list(stop=None)
        end = self.expect_word("done").end
        init, test, update = (part.strip(" \t") for part in parts)
        return ArithFor(init, test, update, body, self.redirections(), Span(start, end))

    def case(self, start: int) -> Case:
        token = self.take()
        if token.kind != "word":
            self.unexpected(token)
        subject = token.word
        self.skip_newlines()
        token = self.take()
        if not (token.kind == "word" and token.text == "in"):
            self.fail(token.start, "syntax error: expected `in`", end=token.end)
        arms: list[CaseArm] = []
        while True:
            self.skip_newlines()
            token = self.peek()
            if token.kind == "word" and token.reservable and token.text == "esac":
                end = self.take().end
                return Case(subject, tuple(arms), self.redirections(), Span(start, end))
            arm_start = token.start
            if token.kind == "op" and token.text == "(":
                self.take()
            patterns = []
            while True:
                token = self.take()
                if token.kind != "word":
                    self.unexpected(token)
                patterns.append(token.word)
                token = self.take()
                if token.kind == "op" and token.text == "|":
                    continue
                if token.kind == "op" and token.text == ")":
                    break
                self.unexpected(token)
            self.skip_newlines()
            token = self.peek(True)
            body = None
            if not ((token.kind == "op" and token.text in (";;", ";&", ";;&"))
                    or (token.kind == "word" and token.reservable and token.text == "esac")):
                body = self.compound_list(stop=";;")
            token = self.peek(True)
            terminator = ""
            if token.kind == "op" and token.text in (";;", ";&", ";;&"):
                terminator = self.take().text
            elif not (token.kind == "word" and token.reservable and token.text == "esac"):
                self.unexpected(token)
            arms.append(CaseArm(tuple(patterns), body, terminator,
                                Span(arm_start, body.span.end if body else token.start)))

    def subshell(self) -> Subshell:
        start = self.take().start
        body = self.compound_list(stop=")")
        close = self.take()
        if close.kind != "op" or close.text != ")":
            self.unexpected(close)
        return Subshell(body, self.redirections(), Span(start, close.end))

    def arith_command(self) -> Arith:
        token = self.take()
        end = self.arith_end(token.start, token.end, code="BP101")
        self.i, self._peeked = end, None
        return Arith(self.s[token.end:end - 2], self.redirections(), Span(token.start, end))

    def cond(self, start: int) -> Cond:
        words: list[Word] = []
        groups = 0  # `(` not yet closed
        while True:
            token = self.take()
            if token.kind == "newline":
                continue
            if token.kind == "eof":
                self.fail(start, "syntax error: `[[` without `]]`", "close it with ]]")
            if token.kind == "word" and not token.word.expansions and token.text == "]]":
                wrong = _cond_syntax(words)
                if wrong is not None:
                    at = words[wrong].span if wrong < len(words) else Span(token.start, token.end)
                    self.fail(at.start, "syntax error in the conditional expression: bash refuses it "
                              "and runs nothing", "check the operators and operands of [[ ]]",
                              end=at.end)
                return Cond(tuple(words), self.redirections(), Span(start, token.end))
            if token.kind == "word":
                words.append(token.word)
                if token.text == "=~" and _binary_operator_at(words):
                    words.append(self.regex_operand(groups > 0))
            elif token.kind == "op" and token.text in ("&&", "||", "(", ")", "<", ">"):
                groups += {"(": 1, ")": -1}.get(token.text, 0)
                words.append(Word(token.text, Span(token.start, token.end), token.text))
            else:
                self.unexpected(token)


    def regex_operand(self, in_group: bool) -> Word:
        """The word after `=~`, which bash reads with rules of its own (parse.y,
        read_token_word under PST_REGEXP): `(` starts a group read to its
        matching `)` blanks and all, `|` is part of the word, and blanks or
        `;&<>)` end it elsewhere.  Only the forms whose reading is plain are
        read (each checked with bash 5.2.15, tests/test_cond_regex.py): ASCII
        letters, digits and `.*+?^[]-_/,:=@%!#~` (no `~` or `#` first), `\\X`
        (not a backreference), `|`, groups of those and blanks, quotes
        outside groups (no `$`, backquote or `\\` in double quotes), `$`
        before the end (of the word, a group or an alternative), and intervals `{M}`, `{M,}`, `{M,N}` whose bounds
        multiply to at most 1000 (glibc builds `((a{255}){255}){255}` for
        seconds).  The value is the regular expression as written: bash
        matches its quoted parts literally and gives it to regcomp, no program."""
        s, n = self.s, self.n
        i = self.skip_joins(self.i)
        while i < n and s[i] in _BLANKS:
            i = self.skip_joins(i + 1)
        start, depth = i, 0
        if i >= n or s[i] in "\n#~":
            self.fail(i, "`=~` needs a regular expression after it on the same line (a `#` or "
                         "`~` first is read as a comment or a home directory)",
                      "write the regular expression after =~", code="BP101")
        while i < n:
            c = s[i]
            if depth == 0 and c in " \t\n;&<>)":
                break
            if c == "\\":
                nxt = s[i + 1] if i + 1 < n else ""
                if nxt in ("", "\n") or nxt.isdigit():
                    self._regex_fail(i, "a line continuation or a backreference")
                i += 2
            elif c == "(":
                depth += 1
                i += 1
            elif c == ")":
                depth -= 1
                i += 1
            elif c == "|" or c in _REGEX_CHARS:
                i += 1
            elif depth and (c in " \t" or (c == "$" and i + 1 < n and s[i + 1] in ")| \t")):
                i += 1  # parse_matched_pair keeps a `$` that starts no expansion
            elif depth:
                self._regex_fail(i, f"`{c}` inside a group")
            elif c == "'":
                close = s.find("'", i + 1)
                if close < 0:
                    self.fail(i, "syntax error: unterminated single quote", "close the quote")
                i = close + 1
            elif c == '"':
                close = s.find('"', i + 1)
                if close < 0 or any(ch in s[i + 1:close] for ch in "$`\\"):
                    self._regex_fail(i, "a double-quoted part with `$`, a backquote or `\\`")
                i = close + 1
            elif c == "$" and (i + 1 >= n or s[i + 1] in " \t\n;&<>|)"):
                i += 1  # a `$` at the end is the regular expression's own
            else:
                self._regex_fail(i, f"`{c}`")
        text = s[start:i]
        if depth or text in ("", "]]"):
            self._regex_fail(start, "an unclosed group" if depth else f"`{text or s[i:i + 1]}` first")
        _check_intervals(self, text, start)
        self.i, self._peeked = i, None
        after = self.peek()
        if not ((after.kind == "op" and after.text in ("&&", "||")) or after.kind == "newline"
                or (after.kind == "op" and after.text == ")" and in_group)
                or (after.kind == "word" and after.text == "]]")):
            self.unexpected(after)
        return Word(text, Span(start, i), text)

    def _regex_fail(self, at: int, what: str) -> None:
        self.fail(at, f"the regular expression after `=~` holds {what}, which bash reads with "
                      "rules of its own", "use plain characters, groups, `|` and `\\` escapes, or "
                      "match a pattern with ==", code="BP101")


# Characters a regular expression after `=~` may hold anywhere (blanks only
# inside groups; `#` and `~` not first; `{`/`}` only as intervals).
_REGEX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                         ".*+?^[]-_/,:=@%!#~{}")
_TEST_UNARY = frozenset("-a -b -c -d -e -f -g -h -k -n -o -p -r -s -t -u -v -w -x -z -G -L -N -O "
                        "-R -S".split())
_INTERVAL = re.compile(r"\{([0-9]{1,4})(,([0-9]{0,4}))?\}")
_BRACKET = re.compile(r"\[\^?\]?(?:\[:[a-z]+:\]|[^]])*\]")
_MAX_REPEATS = 1000


def _binary_operator_at(words: list[Word]) -> bool:
    """Whether the `=~` just read (the last of `words`) is the binary operator,
    which bash reads only right after a left operand (cond_term): a word
    that is not a unary test, at the start or after `&&`, `||`, `(` or `!`."""
    if len(words) < 2:
        return False
    left = words[-2]
    before = words[-3].value if len(words) > 2 else None
    return (left.value is None or left.value not in _TEST_UNARY | {"&&", "||", "(", ")", "!", "<", ">"}) \
        and before in (None, "&&", "||", "(", "!")


_COND_OPS = frozenset({"&&", "||", "(", ")", "<", ">"})  # tokens, not words
_TEST_BINARY = frozenset("= == != < > =~ -nt -ot -ef -eq -ne -lt -le -gt -ge".split())


def _cond_syntax(words: list[Word]) -> int | None:
    """Where bash's grammar for `[[ … ]]` (parse.y: cond_or, cond_and,
    cond_term, operators recognised by their text as written) fails on
    `words`, or None: `(` EXPR `)`, `!` TERM, a unary test and its operand,
    a word with a binary operator and operand, or a word alone, joined by
    `&&` and `||`.  bash 5.2.15 refuses the rest, some silently
    (`[[ a && ]]` exits 0 having run nothing)."""
    texts = [w.text for w in words]
    pos = 0

    def peek() -> str | None:
        return texts[pos] if pos < len(texts) else None

    def operand() -> None:
        nonlocal pos
        if peek() is None or peek() in _COND_OPS:
            raise IndexError
        pos += 1

    def term() -> None:
        nonlocal pos
        current = peek()
        if current == "(":
            pos += 1
            either()
            if peek() != ")":
                raise IndexError
            pos += 1
        elif current == "!":
            pos += 1
            term()
        elif current in _TEST_UNARY:
            pos += 1
            operand()
        else:
            operand()
            following = peek()
            if following in _TEST_BINARY:
                pos += 1
                operand()
            elif following not in (None, "&&", "||", ")"):
                raise IndexError

    def both() -> None:
        nonlocal pos
        term()
        while peek() == "&&":
            pos += 1
            term()

    def either() -> None:
        nonlocal pos
        both()
        while peek() == "||":
            pos += 1
            both()

    try:
        either()
    except IndexError:
        return pos
    return pos if pos < len(texts) or not texts else None


def _check_intervals(reader: Reader, text: str, start: int) -> None:
    """Braces in a regular expression must be intervals whose bounds multiply
    to at most _MAX_REPEATS; brackets and quoted or escaped characters are
    left out of the count (braces there are literal)."""
    plain = re.sub(r"\\.|'[^']*'|\"[^\"]*\"", "_", text)
    plain = _BRACKET.sub("_", plain)
    product = 1
    for match in _INTERVAL.finditer(plain):
        product *= max(int(match[1]), int(match[3] or 0))
    if "{" in _INTERVAL.sub("", plain) or "}" in _INTERVAL.sub("", plain):
        reader._regex_fail(start, "a brace that is not an interval `{M,N}`")
    if product > _MAX_REPEATS:
        reader._regex_fail(start, f"intervals repeating {product} times (at most {_MAX_REPEATS})")


def _brace_at(units: list) -> int | None:
    """Where bash's brace expansion may apply: the first unquoted `{` whose
    matching unquoted `}` encloses an unquoted `,` or `..` (braces.c; a quoted
    `$` before it does not stop it: `\\${a,b}` expands).  A `}` met before any
    separator is an ordinary character to bash (`a{},b}` is `a}` and `a`).
    Over-approximates: a word it marks is expanded exactly by the judge
    (read/braces.py) or denied, never misread."""
    for k, u in enumerate(units):
        if u != "{":
            continue
        depth = 0
        found = False
        for m in range(k + 1, len(units)):
            v = units[m]
            if v == "{":
                depth += 1
            elif v == "}":
                if depth == 0:
                    if found:
                        return k
                else:
                    depth -= 1
            elif v == "," or (v == "." and m + 1 < len(units) and units[m + 1] == "."):
                found = True
    return None


def _reprinted_alike(reader: Reader, body: List) -> None:
    """Deny what bash 5.2 runs differently inside `$(…)` and `<(…)`.  Bash 5.2
    does not keep a substitution's text: it parses it, prints the commands back
    (print_cmd.c) and later runs the printed text, and the printer loses two
    things (bash 5.2.15, `declare -f` shows the printed text): the `(` before a
    case arm's patterns, so an arm whose first pattern is `esac` ends the case
    (`$(case x in (esac|{touch,p}) ;; esac)` ran touch: red team RT5); and the
    `;` before `}`, `then`, `do`, `else`, `fi` or `done` when the text before
    it ends in `&`, taking a word ending in `\\&` for a background `&`.  Later
    bash versions print both correctly.  And when it first reads the
    substitution, bash takes `time` at its start for a plain word, so
    `$(time [[ a > f ]])` is stored as `time [[ a ]] > f`, which writes f
    (red team RT7)."""
    if body.items and body.items[0].timed:
        reader.fail(body.items[0].span.start, "at the start of a substitution bash 5.2 first reads `time` "
                    "as a plain word, so what follows is read differently (`$(time [[ a > f ]])` writes f)",
                    "drop `time`", code="BP101")
    for node in walk(body):
        if isinstance(node, Case):
            for arm in node.arms:
                if arm.patterns and arm.patterns[0].value == "esac":
                    word = arm.patterns[0]
                    reader.fail(word.span.start, "inside a substitution, bash 5.2 reruns a case arm whose "
                                "first pattern is `esac` as the end of the case", "drop that pattern",
                                end=word.span.end, code="BP101")
        for word in own_words(node):
            if word.text.replace("\\\n", "").endswith("&"):
                reader.fail(word.span.start, "inside a substitution, bash 5.2 reruns a word ending in `&` "
                            "as if it put the command in the background", "quote the `&`: '&'",
                            end=word.span.end, code="BP101")


def parse(source: str) -> Script:
    """Read `source` exactly as bash would, into the model (never raises)."""
    reader = Reader(source)
    try:
        body = reader.script()
    except ReadError as error:
        span = Span(min(error.span.start, len(source)), min(error.span.end, len(source)))
        return Script(source, None, ((error.code, span, error.message, error.hint),))
    except RecursionError:
        return Script(source, None, (("BP103", Span(0, len(source)),
                                      "the command is nested too deeply to read", "simplify it"),))
    return Script(source, _with_bodies(body, reader.bodies) if reader.bodies else body, ())


def read_word(text: str, *, braces: bool = True, globs: bool = True, assignment: bool = True,
              assignment_value: bool = False) -> Word | None:
    """`text` read as one word on its own, or None when it is not exactly one
    word the reader accepts.  `braces`/`globs` off: brace expansion or
    pathname expansion does not apply to it (a word brace expansion made; an
    assignment's value); `assignment` off: a `~` after `=` is not expanded
    (bash expands it only in words the parser saw as assignments);
    `assignment_value`: it is the value of an assignment (a `~` after `=`
    or `:` expands)."""
    reader = Reader(text)
    reader.marks_braces, reader.marks_globs, reader.assignment_tildes = braces, globs, assignment
    try:
        token = reader.lex_word(0, assignment_value=assignment_value)
    except (ReadError, RecursionError):
        return None
    return token.word if token.end == len(text) and token.word is not None else None


# One piece of a word as bash expands it: a literal character with whether it
# is quoted, or an expansion (`Expansion.quoted`: inside double quotes).
Part = tuple[str, bool] | Expansion


def word_parts(source: str, word: Word, assignment_value: bool = False) -> list[Part] | None:
    """The pieces of `word` (read from `source` at its span) in order, for a
    word whose expansions are all read where they stand (`$…`, `${…}`,
    `$(…)`, `$((…))`, process substitutions); None for any other word (globs,
    tildes, braces: the pieces do not say where those apply).  For an
    assignment's value (`assignment_value`) braces and globs are plain
    characters, as bash does not expand them there."""
    reader = Reader(source)
    reader.marks_braces = reader.marks_globs = not assignment_value
    try:
        token = reader.lex_word(word.span.start, assignment_value=assignment_value)
    except (ReadError, RecursionError):
        return None
    b = reader.last_word
    if b is None or token.end != word.span.end or token.word is None \
            or any(e.kind in (GLOB, TILDE, BRACE) for e in token.word.expansions):
        return None
    chars = iter("".join(b.chars))
    expansions = iter(b.expansions)
    return [next(expansions) if unit == "$" else (next(chars), unit is None) for unit in b.units]


def _with_bodies(node, bodies: dict[int, str]):
    """`node` with every here-document's body filled in (they are read after
    the command that holds them)."""
    if isinstance(node, Redirect):
        if node.op in ("<<", "<<-"):
            return replace(node, body=bodies[node.span.start])
        return node
    if isinstance(node, tuple):
        return tuple(_with_bodies(item, bodies) for item in node)
    if hasattr(node, "__record_fields__") and not isinstance(node, (Word, Span, type)):
        return replace(node, **{f.name: _with_bodies(getattr(node, f.name), bodies)
                                for f in fields(node)
                                if not isinstance(getattr(node, f.name), (str, int, bool))})
    return node
