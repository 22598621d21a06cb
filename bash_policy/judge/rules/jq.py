"""jq and yq: tokenize the filter and deny what leaks the environment or loads code.

jq cannot run programs or write files.  Its filter can read the environment
(`$ENV`, `env`), which puts secrets such as API tokens into the transcript,
and `import`/`include` load module code from files the checker cannot see.
Reading data files (--rawfile, --slurpfile, input_filename) is what every
read-only tool does and is allowed.  The tokenizer knows strings with `\\(…)`
interpolation (read recursively), comments, `.field`, `$var` and object keys,
so `.env` and `{env: 1}` stay allowed.

yq is two programs: the Python jq wrapper Debian installs (the filter is jq)
and mikefarah's Go yq (an expression language of its own, whose first operand
may be the `eval`/`eval-all` command).  The yq check applies the jq check plus
the Go yq operators that read the environment or evaluate strings.
"""

from __future__ import annotations

import re

from ...read.model import Word
from ...records import dataclass
from ..codes import Code, Effect
from ..problems import Problem
from ..special import special_operand_in, stdin_in
from . import rule
from .files import check_special_operands
from .script import Finding, Unreadable, already_denied, judge_pieces, only_info

_NUMBER = re.compile(r"\d*\.?\d*(?:[eE][+-]?\d+)?")  # always matches: digits come first
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:::[A-Za-z_][A-Za-z_0-9]*)*")
_LEAK = "reads the environment, which can hold secrets such as API tokens"
_JQ_DENIED = {
    "env": ("leak", _LEAK, "drop it; pass the values you need with --arg NAME VALUE"),
    "$ENV": ("leak", _LEAK, "drop it; pass the values you need with --arg NAME VALUE"),
    "import": ("exec", "loads jq code from a module file the checker cannot see",
               "write the code in the filter; read JSON data with --slurpfile NAME FILE"),
    "include": ("exec", "loads jq code from a module file the checker cannot see",
                "write the code in the filter; read JSON data with --slurpfile NAME FILE"),
}
# mikefarah yq operators (https://mikefarah.gitbook.io/yq/operators).
_YQ_DENIED = {
    "strenv": ("leak", _LEAK, "drop it; write the value literally"),
    "envsubst": ("leak", "substitutes environment variables, which can hold secrets",
                 "drop it; write the value literally"),
    "eval": ("exec", "evaluates a string as an expression the checker cannot see",
             "write the expression itself"),
    "system": ("exec", "runs a command", "drop it; running programs needs leaving plan mode"),
}
# jq's flags that take two words: a variable name, then its value or file.
_TWO_VALUED = {"--arg", "--argjson", "--slurpfile", "--rawfile", "--argfile"}
_YQ_COMMANDS = {"eval", "e", "eval-all", "ea"}


class Token:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind: str, text: str, start: int, end: int):
        self.kind, self.text, self.start, self.end = kind, text, start, end


def tokenize(src: str, comments: bool = True) -> list[Token]:
    """Tokens of a jq filter: ident, var, field, format, string, number, op.
    The parts of an interpolated string are tokenized in place."""
    tokens: list[Token] = []
    _scan(src, 0, tokens, comments, closing=None)
    return tokens


def _scan(src: str, i: int, tokens: list[Token], comments: bool, closing: str | None) -> int:
    depth = 0
    n = len(src)
    while i < n:
        ch = src[i]
        if ch in " \t\r\n":
            i += 1
        elif ch == "#":
            if not comments:
                raise Unreadable(i, "comments are read differently by the two yq programs; drop the comment")
            while i < n and src[i] != "\n":
                i += 1
        elif ch == '"':
            i = _string(src, i, tokens, comments)
        elif ch == "." and (match := _IDENT.match(src, i + 1)):
            tokens.append(Token("field", src[i:match.end()], i, match.end()))
            i = match.end()
        elif ch in "$@":
            j = i + 1
            while j < n and src[j] in " \t\r\n":  # jq 1.6 reads `$ name` as `$name`
                j += 1
            match = _IDENT.match(src, j)
            if not match:
                raise Unreadable(i, f"`{ch}` must be followed by a name")
            kind = "var" if ch == "$" else "format"
            tokens.append(Token(kind, ch + match.group(), i, match.end()))
            i = match.end()
        elif match := _IDENT.match(src, i):
            tokens.append(Token("ident", match.group(), i, match.end()))
            i = match.end()
        elif ch.isascii() and ch.isdigit() and (match := _NUMBER.match(src, i)):
            tokens.append(Token("number", match.group(), i, match.end()))
            i = match.end()
        else:
            if ch == "(":
                depth += 1
            elif ch == ")":
                if closing and depth == 0:
                    return i + 1
                depth -= 1
            tokens.append(Token("op", ch, i, i + 1))
            i += 1
    if closing:
        raise Unreadable(i, "unterminated `\\(…)` in a string")
    return i


def _string(src: str, i: int, tokens: list[Token], comments: bool) -> int:
    start, j = i, i + 1
    while j < len(src):
        ch = src[j]
        if ch == '"':
            tokens.append(Token("string", src[start:j + 1], start, j + 1))
            return j + 1
        if ch == "\\":
            if src.startswith("(", j + 1):
                j = _scan(src, j + 2, tokens, comments, closing=")")
                continue
            j += 2
            continue
        j += 1
    raise Unreadable(start, "unterminated string")


def _is_object_key(tokens: list[Token], k: int, stack: list[str]) -> bool:
    """`{env: 1}` and `{env}` name a key, not the env builtin."""
    if not stack or stack[-1] != "{" or k == 0 or tokens[k - 1].text not in ("{", ","):
        return False
    after = tokens[k + 1].text if k + 1 < len(tokens) else ""
    return after in (":", ",", "}")


def filter_findings(text: str, yq: bool = False) -> list[Finding]:
    """What a jq (or yq) filter does beyond transforming its input."""
    tokens = tokenize(text, comments=not yq)
    denied = {**_JQ_DENIED, **(_YQ_DENIED if yq else {})}
    findings: list[Finding] = []
    stack: list[str] = []
    for k, tok in enumerate(tokens):
        if tok.kind == "op" and tok.text in "([{":
            stack.append(tok.text)
        elif tok.kind == "op" and tok.text in ")]}" and stack:
            stack.pop()
        name = tok.text if tok.kind in ("ident", "var") else None
        if name in denied and not (tok.kind == "ident" and _is_object_key(tokens, k, stack)):
            effect, why, fix = denied[name]
            findings.append(Finding(tok.start, tok.end, effect, f"`{name}` {why}", fix))
    return findings


_FILE_VALUED = {"--slurpfile", "--rawfile", "--argfile"}


@dataclass(frozen=True)
class DeviceInput(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`{program}` would read `{word.text}`, a device or kernel file whose reading may never end"
    hint_format = "read a regular file"
    program: str
    word: Word


@dataclass(frozen=True)
class PairInOneWord(Problem):
    code = Code.BP403
    message_format = "`{word.value}`: jq takes the name and value as two words"
    hint_format = "write {flag} NAME VALUE"
    word: Word
    flag: str


@dataclass(frozen=True)
class PairMissing(Problem):
    code = Code.BP403
    message_format = "`{word.value}` needs a NAME and a VALUE"
    hint_format = "write {flag} NAME VALUE"
    word: Word
    flag: str


@dataclass(frozen=True)
class ValueShiftsFilter(Problem):
    code = Code.BP203
    message_format = "`{word.text}` may expand to several words, shifting the filter"
    hint_format = "write the value literally"
    word: Word


@dataclass(frozen=True)
class FilterMissing(Problem):
    code = Code.BP407
    message_format = "`{program}` needs a filter"
    hint_format = "give the filter: {program} '.' FILE"
    program: str


@dataclass(frozen=True)
class FilterNotLiteral(Problem):
    code = Code.BP407
    message_format = "the filter `{word.text}` is not literal"
    hint_format = "write the filter literally, in single quotes"
    word: Word


def _special_inputs(inv, ctx, second_values, operands, command_apart: bool = False) -> None:
    """Input files, and the files --slurpfile/--rawfile read, that are devices,
    FIFOs or kernel files (`jq . /dev/zero` never ends), or standard input, which
    jq also reads without input files.  Operands after --args or --jsonargs are
    strings, not files; the second word of --arg NAME VALUE is not the filter."""
    strings_from = min((use.index for use in inv.uses("--args", "--jsonargs")), default=len(inv.words))
    position = {id(w): k for k, w in enumerate(inv.words)}
    inputs = [w for w in operands[1:] if position[id(w)] < strings_from]
    if not inputs and not (inv.has("-n", "--null-input") and "input" not in (operands[0].value or "input")):
        ctx.reads_stdin = True  # no input file: jq reads stdin, with -n still for `input`
    files = inputs + [word for use, word in second_values if _FILE_VALUED.intersection(use.flag.names)]
    if command_apart or any(use.value_word is not use.word for use in inv.uses("-o")):
        # Go yq's `-o FORMAT` or `eval`: Python yq leaves -o to jq and takes FORMAT,
        # or `eval`, as its filter, so the word Go yq reads as the expression is a
        # file it opens (`yq e fifo` waited: red team RT-G).
        files.insert(0, operands[0])
    # A FIFO or a link to /dev/stdin in the directory; a device named by its path is denied below, once.
    check_special_operands([w for w in files if not special_operand_in(w, ctx.directories())], ctx)
    for word in files:
        if word.value in (None, "-") or stdin_in(word.value, ctx.directories()):
            ctx.reads_stdin = True  # `--rawfile a /dev/stdin`: the script, when piped to bash
        if special_operand_in(word, ctx.directories()):
            ctx.deny(DeviceInput(inv.spec.display, word), word.span)


def _filter_and_files(inv, ctx, yq: bool):
    """The filter word, or None after denying; two-valued flags (--arg NAME
    VALUE) leave their second value among the operands, so it is skipped."""
    second_values = []
    for use in inv.uses(*_TWO_VALUED):
        word, names = use.word, use.flag.names
        if use.value_word is word:
            ctx.deny(PairInOneWord(word, names[-1]), word.span)
            return None
        index = use.index + 1
        if index + 1 >= len(inv.words):
            ctx.deny(PairMissing(word, names[-1]), word.span)
            return None
        second_values.append((use, inv.words[index + 1]))
    operands = [w for w in inv.positionals if not any(w is s for _, s in second_values)]
    for _, word in second_values:
        if word.value is None:
            ctx.deny(ValueShiftsFilter(word), word.span)
            return None
    command_apart = yq and bool(operands) and operands[0].value in _YQ_COMMANDS
    if command_apart:
        operands = operands[1:]
    if not operands and only_info(inv):
        return None
    if not operands:
        ctx.deny(FilterMissing(inv.spec.display), inv.words[0].span)
        return None
    if operands[0].value is None:
        ctx.deny(FilterNotLiteral(operands[0]), operands[0].span)
        return None
    _special_inputs(inv, ctx, second_values, operands, command_apart)
    return operands[0]


@rule("jq_filter", codes=[Code.BP407, Code.BP403, Code.BP406],
      deny=["jq env f", "jq '$ENV.HOME' f", "jq 'import \"m\" as m; .' f", "jq . /dev/zero",
            "jq --slurpfile v /dev/zero . f"],
      allow=["jq '.a[] | .b' f", "jq -r --arg k v '.[$k]' f", "jq '{env: 1}' f"])
def check(inv, ctx, yq: bool = False) -> None:
    """jq filters that read the environment or load module code, and device input files.
    `env` and `$ENV` print secrets such as API tokens; `import` and `include`
    load code the checker cannot see; `jq . /dev/zero` never ends.  The filter is the first operand (-f is
    denied by the spec); --arg NAME VALUE pairs are told apart from it."""
    if already_denied(inv, ctx):
        return
    word = _filter_and_files(inv, ctx, yq)
    if word is not None:
        judge_pieces(inv.spec.display, [(word, word.value)], ctx, lambda text: filter_findings(text, yq))


@rule("yq_filter", codes=[Code.BP407, Code.BP403, Code.BP406],
      deny=["yq env f", "yq 'strenv(HOME)' f", "yq -o json /dev/zero f.yaml", "yq e /dev/zero f.yaml"],
      allow=["yq '.a.b' f.yaml", "yq -o json . f.yaml"])
def check_yq(inv, ctx) -> None:
    """yq filters that read the environment, load files or run commands, and device input files.
    The jq check plus the Go yq operators, for either yq implementation; with
    Go yq's `-o FORMAT` apart, Python yq reads FORMAT as the filter and the
    first operand as a file."""
    check(inv, ctx, yq=True)
