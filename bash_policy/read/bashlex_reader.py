"""bashlex front end: source text -> `Script`, a second reading for the cross-check.

bashlex (GPLv3+, an optional extra) ports bash's own yacc grammar and
tokenizer, so it splits commands and words by a different route than
tree-sitter.  As in `parse_ts`, the parser decides only the structure and
where each word and redirection lies; `words.scan_word` computes every value
from the raw source slice.  bashlex's own word values (it removes quotes,
reads `$'…'` as a parameter, keeps `\\r`) are never used, so the cross-check
compares the two parsers' *structure and word boundaries*, nothing else.

Quirks of bashlex 0.18 found while writing this, and how each is handled:

* Quoted here-document delimiters (`<<'EOF'`, `<<"EOF"`, `<<\\EOF`): bashlex
  compares the terminator line with the delimiter *as written*, quotes
  included, so it never finds the end and fails.  bash compares with the
  delimiter after quote removal.  Normalised: `_install_delimiter_fix` wraps
  bashlex's here-document reader so it looks for the quote-removed delimiter
  (computed by `scan_word`), which is what bash does.
* A line continuation right after a word (`rg x\\<newline>| head`): bashlex
  extends the word's span over the `\\<newline>`; tree-sitter does not.  bash
  deletes the pair before splitting, so it belongs to no word.  Normalised:
  trailing `\\<newline>` pairs are cut from word spans.
* Here-document bodies: bashlex's body includes the terminator line;
  tree-sitter's starts after the leading tabs of a `<<-` body and ends with
  the tabs before the terminator.  The cross-check compares bodies line by
  line with those tabs removed (`crosscheck.heredoc_lines`).
* `>&2`, `2>&1`, `<&-`: bashlex gives the target as a number or `-` without a
  position; the target word is read from the source after the operator, and
  `-` is folded into the operator (`>&-`), as tree-sitter does.
* Newline-separated commands: `bashlex.parse` parses one line at a time and
  restarts one character after each tree's end, which swallows the `#` of
  `rg foo;#c` and reads `c` as a command.  Normalised: this module runs
  bashlex's line parser itself (`bashlex.parser._parser`) and restarts
  exactly at the tree's end (or its last here-document's end).  Each tree
  after the first follows a `\\n` operator, as in the other readers.
* `time`, `coproc`, `select`, arrays (`a=(…)`), `;;` outside `case`, and the
  compound commands: this reader does not map them; the cross-check notes
  that bashlex could not read the command and relies on the two required
  readers (bash_policy/read/crosscheck.py).
* `{fd}>file` (bash assigns a new descriptor number to `fd`): both parsers
  read `{fd}` as an argument; this front end reports it, so bash's reading
  wins and the cross-check denies.
* `\\r` is part of a word for bashlex and skipped text for tree-sitter; the
  engine denies it before either parser runs (BP104).
* Comments and `a#b`: both agree (`#` starts a comment only at a word start).
"""

from __future__ import annotations

import re

from .bashlex_tables import import_bashlex
from .model import Assignment, Command, List, Pipeline, Redirect, Script, Span, Word
from .words import WordSyntaxError, scan_word

# With its parse tables cached: 8 ms instead of ~85 ms.  Importing the
# package imports its parser, heredoc and ast modules.
bashlex = import_bashlex()

_COMPOUND_KINDS = {
    "compound": "a subshell `( … )` or `{ …; }` group",
    "if": "an `if` statement",
    "for": "a `for` loop",
    "while": "a `while` loop",
    "until": "an `until` loop",
    "function": "a function definition",
    "case": "a `case` statement",
}
_TRAILING_CONTINUATIONS = re.compile(r"(?:\\\n)+\Z")
_FD_VARIABLE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_BLANKS = re.compile(r"(?:[ \t]|\\\n)*")


def _install_delimiter_fix() -> None:
    """Make bashlex end a here-document at the quote-removed delimiter, as bash does."""
    original = bashlex.heredoc.makeheredoc
    if getattr(original, "bash_policy_fix", False):
        return

    def makeheredoc(tokenizer, redirnode, lineno, killleading):
        written = redirnode.output.word
        try:
            unquoted = scan_word(written).value
        except WordSyntaxError:
            unquoted = None
        redirnode.output.word = written if unquoted is None else unquoted
        try:
            return original(tokenizer, redirnode, lineno, killleading)
        finally:
            redirnode.output.word = written

    makeheredoc.bash_policy_fix = True  # type: ignore[attr-defined]
    bashlex.heredoc.makeheredoc = makeheredoc


_install_delimiter_fix()


class _Problem(Exception):
    def __init__(self, code: str, span: Span, message: str):
        super().__init__(message)
        self.problem = (code, span, message, "")


class _Builder:
    def __init__(self, source: str):
        self.source = source
        self.items: list[Pipeline] = []
        self.ops: list[str] = []
        self.covered: list[tuple[int, int]] = []

    # -- structure ---------------------------------------------------------
    def tree(self, node) -> None:
        """Add one top-level tree: lists of pipelines of simple commands."""
        kind = node.kind
        if kind == "list":
            for part in node.parts:
                if part.kind == "operator":
                    self.cover(part)
                    self.ops.append(part.op)
                    continue
                self.tree(part)
        elif kind == "pipeline":
            negated = False
            commands: list[Command] = []
            stderr: list[bool] = []
            for part in node.parts:
                if part.kind == "reservedword" and part.word == "!" and not commands:
                    self.cover(part)
                    negated = not negated
                elif part.kind == "pipe":
                    self.cover(part)
                    stderr.append(part.pipe == "|&")
                elif part.kind == "command":
                    commands.append(self.command(part))
                else:
                    self.unsupported(part)
            self.items.append(Pipeline(tuple(commands), Span(*node.pos), negated, False,
                                       tuple(stderr)))
        elif kind == "command":
            command = self.command(node)
            self.items.append(Pipeline((command,), command.span))
        else:
            self.unsupported(node)

    def unsupported(self, node) -> None:
        what = _COMPOUND_KINDS.get(node.kind, f"this construct ({node.kind})")
        raise _Problem("BP101", Span(*node.pos), f"{what} is outside what plan mode can check")

    def command(self, node) -> Command:
        words: list[Word] = []
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        for part in node.parts:
            if part.kind == "word":
                words.append(self.word(part.pos))
            elif part.kind == "assignment":
                assignments.append(self.assignment(part.pos))
            elif part.kind == "redirect":
                redirects.append(self.redirect(part))
            else:
                self.unsupported(part)
        for word in words:
            if _FD_VARIABLE.fullmatch(word.text) and any(r.span.start == word.span.end
                                                         for r in redirects):
                raise _Problem("BP101", word.span,
                               f"`{word.text}` before a redirection makes bash store a new "
                               "descriptor number in a variable")
        return Command(tuple(words), tuple(assignments), tuple(redirects), Span(*node.pos))

    # -- words -------------------------------------------------------------
    def word(self, pos) -> Word:
        start, end = pos
        text = _TRAILING_CONTINUATIONS.sub("", self.source[start:end])
        self.covered.append((start, end))
        try:
            return scan_word(text, start)
        except WordSyntaxError as error:
            raise _Problem("BP100", Span(error.offset, error.offset + 1),
                           f"syntax error: {error}") from None

    def assignment(self, pos) -> Assignment:
        whole = self.word(pos)
        name = whole.text.partition("=")[0]
        at = len(name) + 1
        span = Span(whole.span.start + at, whole.span.end)
        if whole.value is not None:
            value = Word(whole.text[at:], span, whole.value[at:])
        else:
            value = Word(whole.text[at:], span, None, whole.expansions, whole.prefix[at:])
        return Assignment(name, value, whole.span)

    def redirect(self, node) -> Redirect:
        start, end = node.pos
        fd = node.input if isinstance(node.input, int) else None
        if node.input is not None and fd is None:
            raise _Problem("BP101", Span(start, end), f"redirection from `{node.input}`")
        op = node.type
        output = node.output
        target: Word | None = None
        body: str | None = None
        quoted = False
        if output == "-":
            op += "-"
        elif isinstance(output, int):
            target = self.word(self.target_span(start, end, op))
        else:
            target = self.word(output.pos)
            end = output.pos[1]
        self.covered.append((start, end))
        heredoc = getattr(node, "heredoc", None)
        if op in ("<<", "<<-"):
            if heredoc is None or target is None:
                raise _Problem("BP100", Span(start, end), "here-document without a body")
            quoted = any(ch in target.text for ch in "'\"\\")
            a, b = heredoc.pos
            self.covered.append((a, b))
            text = self.source[a:b]
            body = text[:text.rfind("\n") + 1]
            target = None
        return Redirect(op, fd, target, Span(start, end), body, quoted)

    def target_span(self, start: int, end: int, op: str) -> tuple[int, int]:
        """Where a numeric target (`>&2`) lies: after the operator and blanks."""
        at = self.source.find(op, start, end)
        if at < 0:
            raise _Problem("BP101", Span(start, end), "unsupported redirection layout")
        at += len(op)
        blanks = _BLANKS.match(self.source, at, end)
        return (blanks.end() if blanks else at), end

    def cover(self, node) -> None:
        self.covered.append(tuple(node.pos))

    # -- text the parser did not account for ------------------------------
    def check_gaps(self) -> None:
        """Every character outside a token must be a blank, a newline, a
        line continuation, or a comment starting after one of those or an operator."""
        source = self.source
        at = 0
        for a, b in sorted(self.covered) + [(len(source), len(source))]:
            while at < a:
                ch = source[at]
                if ch in " \t\n":
                    at += 1
                elif source.startswith("\\\n", at):
                    at += 2
                elif ch == "#" and (at == 0 or source[at - 1] in " \t\n;&|()"):
                    newline = source.find("\n", at)
                    at = len(source) if newline < 0 else newline
                else:
                    raise _Problem("BP100", Span(at, at + 1), "bashlex skipped text here")
            at = max(at, b)


# `${` with no `}` before the word could end: bashlex 0.18's _paramexpand takes
# find('}') == -1 as a position and starts over from the word's start, for ever
# (`cat a'${'`; fuzzer finding F3).  Such a command is one bashlex cannot read.
_UNCLOSED_BRACE = re.compile(r"\$\{[^}\s;|&<>()]*(?![^}\s;|&<>()])(?!\})")


def parse(source: str) -> Script:
    """Parse `source` with bashlex into the model (never raises)."""
    unclosed = _UNCLOSED_BRACE.search(source)
    if unclosed is not None:
        return Script(source, None, (("BP100", Span(unclosed.start(), unclosed.end()),
                                      "bashlex cannot parse this: `${` without `}` in the word "
                                      "(bashlex 0.18 loops on it)", ""),))
    builder = _Builder(source)
    try:
        at = 0
        while at < len(source):
            tree = bashlex.parser._parser(source[at:]).parse()
            if not isinstance(tree, bashlex.ast.node):
                break  # only blanks or comments remain; check_gaps verifies that
            bashlex.ast.posshifter(at).visit(tree)
            if builder.items and len(builder.ops) < len(builder.items):
                builder.ops.append("\n")
            builder.tree(tree)
            end = max([tree.pos[1]] + [b for _, b in builder.covered])
            if end <= at:
                raise _Problem("BP100", Span(at, at + 1), "bashlex made no progress here")
            at = end
        builder.check_gaps()
    except _Problem as problem:
        return Script(source, None, (problem.problem,))
    except Exception as error:  # bashlex raises many kinds: all mean "cannot read it"
        position = at + getattr(error, "position", 0)
        span = Span(min(position, len(source)), min(position + 1, len(source)))
        reason = str(error).split(", parts = ")[0]
        return Script(source, None, (("BP100", span, f"bashlex cannot parse this: {reason}", ""),))
    if not builder.items:
        return Script(source, None)
    items = builder.items
    return Script(source, List(tuple(items), tuple(builder.ops),
                               Span(items[0].span.start, items[-1].span.end)))
