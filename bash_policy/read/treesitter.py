"""Tree-sitter front end: source text -> `Script`.

Tree-sitter decides the structure (segments, operators, where each word and
redirection lies); `words.scan_word` computes every value from the raw text.
Anything outside the simple-command subset becomes a problem, so the engine
denies it: the model is complete for what it accepts and silent on nothing.
"""

from __future__ import annotations

import re

import tree_sitter_bash
from tree_sitter import Language, Parser

from .model import Assignment, Redirect, Script, Segment, Span, Word
from .words import WordSyntaxError, scan_word

_PARSER = Parser(Language(tree_sitter_bash.language()))

# Constructs outside the model, by tree-sitter node type, as users know them.
_CONSTRUCTS = {
    "subshell": "a subshell `( … )`",
    "compound_statement": "a `{ …; }` group or `(( … ))` arithmetic",
    "function_definition": "a function definition",
    "if_statement": "an `if` statement",
    "for_statement": "a `for` loop",
    "c_style_for_statement": "a `for (( … ))` loop",
    "while_statement": "a `while`/`until` loop",
    "case_statement": "a `case` statement",
    "test_command": "a `[[ … ]]` test (use `[ … ]` or `test`)",
    "declaration_command": "`export`/`declare`/`local`/`readonly`",
    "unset_command": "`unset`",
}
_JOINERS = {"|", "|&", "&&", "||", ";", "\n"}
_WORD_TYPES = {"word", "string", "raw_string", "concatenation", "number", "simple_expansion",
               "expansion", "command_substitution", "ansi_c_string", "translated_string",
               "process_substitution", "arithmetic_expansion", "brace_expression"}
_REDIRECT_TYPES = {"file_redirect", "herestring_redirect", "heredoc_redirect"}
# Gaps between tokens may hold only blanks and backslash-newline pairs.
_BLANK_GAP = re.compile(r"(?:[ \t]|\\\n)*")
_OPERATOR_CHARS = frozenset("|&;<>()")
_FD_VARIABLE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_JOIN_GAP = re.compile(r"(?:\\\n)*")
_GAP_WITH_NEWLINES = re.compile(r"(?:[ \t\n]|\\\n)*")


class _Problem(Exception):
    def __init__(self, code: str, span: Span, message: str, hint: str = ""):
        super().__init__(message)
        self.args4 = (code, span, message, hint)


class _Builder:
    def __init__(self, source: str):
        self.source = source
        raw = source.encode("utf-8")
        self.raw = raw
        if len(raw) == len(source):
            self.char_at = None
        else:
            table = [0] * (len(raw) + 1)
            pos = 0
            for index, ch in enumerate(source):
                width = len(ch.encode("utf-8"))
                for k in range(width):
                    table[pos + k] = index
                pos += width
            table[pos] = len(source)
            self.char_at = table
        self.segments: list[Segment] = []
        self.problems: list[tuple[str, Span, str, str]] = []

    # -- offsets -----------------------------------------------------------
    def span(self, node) -> Span:
        return self.span_bytes(node.start_byte, node.end_byte)

    def span_bytes(self, a: int, b: int) -> Span:
        if self.char_at is None:
            return Span(a, b)
        return Span(self.char_at[a], self.char_at[b])

    def text(self, a: int, b: int) -> str:
        return self.raw[a:b].decode("utf-8")

    def problem(self, code: str, node_or_span, message: str, hint: str = "") -> None:
        span = node_or_span if isinstance(node_or_span, Span) else self.span(node_or_span)
        self.problems.append((code, span, message, hint))

    # -- top level ---------------------------------------------------------
    def build(self, root) -> None:
        if root.has_error:
            self._report_errors(root)
            return
        joiner = ""
        prev_end = 0
        for child in root.children:
            gap = self.text(prev_end, child.start_byte)
            if not _GAP_WITH_NEWLINES.fullmatch(gap):
                self.problem("BP100", self.span_bytes(prev_end, child.start_byte),
                             "the parser skipped text here", "")
                return
            if "\n" in gap.replace("\\\n", "") and self.segments:
                joiner = "\n"
            prev_end = child.end_byte
            kind = child.type
            if kind == "comment":
                continue
            if kind == ";":
                joiner = ";"
                continue
            if kind == "&":
                self.problem("BP102", child, "`&` runs the command before it in the background",
                             "drop the `&`; plan mode runs commands in the foreground only")
                joiner = ";"
                continue
            self.statement(child, joiner)
            joiner = ""
        tail = self.text(prev_end, len(self.raw))
        if not _GAP_WITH_NEWLINES.fullmatch(tail) and not tail.lstrip().startswith("#"):
            self.problem("BP100", self.span_bytes(prev_end, len(self.raw)),
                         "the parser skipped text here", "")

    def _report_errors(self, root) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type == "ERROR" or node.is_missing:
                what = f"expected {node.type!r}" if node.is_missing else "cannot parse this"
                self.problem("BP100", node, f"syntax error: {what}",
                             "check for an unpaired quote, bracket or operator")
                return
            if node.has_error:
                stack.extend(reversed(node.children))
        self.problem("BP100", root, "syntax error", "check for an unpaired quote or operator")

    def statement(self, node, joiner: str) -> None:
        """Flatten lists and pipelines iteratively (no recursion on depth)."""
        work = [(node, joiner, ())]
        while work:
            node, joiner, redirects = work.pop()
            kind = node.type
            if kind == "command":
                self.command(node, joiner, redirects)
            elif kind == "variable_assignment":
                self.command_from_children([node], node, joiner, redirects)
            elif kind in ("list", "pipeline"):
                children = node.children
                items: list[tuple] = []
                op = joiner
                last_index = max(i for i, c in enumerate(children) if c.type not in _JOINERS)
                for i, child in enumerate(children):
                    if child.type in _JOINERS:
                        op = child.type
                        continue
                    items.append((child, op, redirects if i == last_index else ()))
                    op = ""
                work.extend(reversed(items))
            elif kind == "redirected_statement":
                body = node.child_by_field_name("body")
                extra = [c for c in node.children if c != body]
                if body is None or any(c.type not in _REDIRECT_TYPES for c in extra):
                    self.problem("BP101", node, "unsupported redirection layout")
                    continue
                work.append((body, joiner, tuple(extra) + tuple(redirects)))
            elif kind == "test_command" and node.children[0].type == "[":
                self.bracket_test(node, joiner, redirects)
            elif kind == "negated_command":
                inner = [c for c in node.children if c.type != "!"]
                if len(inner) == 1 and inner[0].type == "command":
                    self.command(inner[0], joiner, redirects, negated=True)
                else:
                    self.problem("BP101", node, "`!` is supported before one simple command only")
            else:
                what = _CONSTRUCTS.get(kind, f"this construct ({kind})")
                self.problem("BP101", node, f"{what} is outside what plan mode can check",
                             "write a flat command: simple commands joined by |, &&, || or ;")

    def check_continuations(self, root) -> None:
        """bash deletes every backslash-newline before it splits tokens, so one
        between two characters can join them into a different token (`&` and
        `&` into `&&`, `2` and `>` into `2>`).  Inside a word the scanner joins
        them too; between operators the parsers may split what bash joins, so
        deny.  Comments and here-document bodies keep theirs."""
        exempt = []
        for seg in self.segments:
            exempt += [w.span for w in seg.words] + [a.span for a in seg.assignments]
            exempt += [r.target.span for r in seg.redirects if r.target is not None]
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type in ("comment", "heredoc_body"):
                exempt.append(self.span(node))
            else:
                stack.extend(node.children)
        source = self.source
        at = source.find("\\\n")
        while at >= 0:
            run = len(source[:at]) - len(source[:at].rstrip("\\"))
            before = source[at - 1] if at > 0 else " "
            after = source[at + 2] if at + 2 < len(source) else " "
            if after in _OPERATOR_CHARS:  # `&&`, `>>`, `2>`, `{fd}>`: a different token
                joins = before in _OPERATOR_CHARS or before.isdigit() or before == "}"
            else:  # `>file` reads as `> file`; two word parts must lie inside one word
                joins = before not in _OPERATOR_CHARS and before not in " \t\n" and after not in " \t\n"
            if run % 2 == 0 and joins and not any(sp.start <= at < sp.end for sp in exempt):
                self.problem("BP100", Span(at, at + 2),
                             "this line continuation joins the text on both sides into one token, "
                             "which the parsers may read differently from bash",
                             "put a space before the backslash, or write the command on one line")
                return
            at = source.find("\\\n", at + 2)

    def bracket_test(self, node, joiner: str, redirects) -> None:
        """`[ … ]` is the command `[` with its words: tree-sitter parses it as an
        expression, so collect its tokens back into words for the engine."""
        atoms = []
        stack = list(reversed(node.children))
        while stack:
            child = stack.pop()
            if child.type in _WORD_TYPES or child.type == "extglob_pattern" or not child.children:
                atoms.append(child)
            else:
                stack.extend(reversed(child.children))
        self.command_from_children(atoms, node, joiner, redirects)

    # -- simple commands ---------------------------------------------------
    def command(self, node, joiner: str, redirects=(), negated: bool = False) -> None:
        self.command_from_children(list(node.children), node, joiner, redirects, negated)

    def command_from_children(self, children, node, joiner, redirects=(), negated=False):
        assignments: list[Assignment] = []
        word_nodes: list = []
        redirect_nodes = list(redirects)
        try:
            for child in children:
                kind = child.type
                if kind == "variable_assignment":
                    if word_nodes:
                        word_nodes.append(child)  # an argument that looks like one
                    else:
                        assignments.append(self.assignment(child))
                elif kind == "command_name":
                    word_nodes.extend(child.children)
                elif kind in _REDIRECT_TYPES:
                    redirect_nodes.append(child)
                elif kind in _CONSTRUCTS:
                    raise _Problem("BP101", self.span(child),
                                   f"{_CONSTRUCTS[kind]} is outside what plan mode can check")
                else:
                    word_nodes.append(child)
            redirect_list: list[Redirect] = []
            for rnode in redirect_nodes:
                redirect_list.extend(self.redirect(rnode, word_nodes))
            covered = [(r.start_byte, r.end_byte) for r in redirect_nodes]
            words = self.group_words(sorted(word_nodes, key=lambda n: n.start_byte), covered)
        except _Problem as problem:
            self.problems.append(problem.args4)
            return
        except WordSyntaxError as error:
            self.problem("BP100", Span(error.offset, error.offset + 1), f"syntax error: {error}",
                         "check the quoting of this word")
            return
        self.segments.append(Segment(tuple(words), tuple(assignments), tuple(redirect_list),
                                     self.span(node), joiner, negated))

    def group_words(self, nodes, covered=()) -> list[Word]:
        """Join adjacent nodes into words: bash splits only at blanks.

        A gap between two nodes must be blanks, or a redirection (`covered`)
        between blanks; anything else is text the parser did not account for.
        """
        words: list[Word] = []
        starts = [self.word_start(node) for node in nodes]
        i = 0
        while i < len(nodes):
            start = starts[i]
            end = nodes[i].end_byte
            j = i + 1
            while j < len(nodes):
                gap = self.text(end, starts[j])
                if _JOIN_GAP.fullmatch(gap):
                    end = nodes[j].end_byte
                    j += 1
                elif _BLANK_GAP.fullmatch(self.uncovered(end, starts[j], covered)):
                    break
                else:
                    raise _Problem("BP100", self.span_bytes(end, starts[j]),
                                   "the parser skipped text here")
            words.append(self.word(start, end))
            i = j
        return words

    def word_start(self, node) -> int:
        """Where a word really starts: tree-sitter leaves escaped blanks that
        begin a word (`\\ c`) out of its node, but bash reads them as part of it."""
        start = node.start_byte
        while start >= 2 and self.raw[start - 1] in b" \t":
            slashes = 0
            while start - 2 - slashes >= 0 and self.raw[start - 2 - slashes] == 0x5C:
                slashes += 1
            if slashes % 2 == 0:
                break
            start -= 2
        return start

    def uncovered(self, a: int, b: int, covered) -> str:
        """Text of bytes [a, b) with the covered ranges replaced by blanks."""
        chunk = bytearray(self.raw[a:b])
        for lo, hi in covered:
            lo, hi = max(lo, a), min(hi, b)
            if lo < hi:
                chunk[lo - a:hi - a] = b" " * (hi - lo)
        return chunk.decode("utf-8", "replace")

    def word(self, a: int, b: int) -> Word:
        span = self.span_bytes(a, b)
        return scan_word(self.source[span.start:span.end], span.start)

    def assignment(self, node) -> Assignment:
        span = self.span(node)
        text = self.source[span.start:span.end]
        name, _, _ = text.partition("=")
        whole = scan_word(text, span.start)
        if whole.value is not None:
            value = Word(text[len(name) + 1:], Span(span.start + len(name) + 1, span.end),
                         whole.value[len(name) + 1:])
        else:
            value = Word(text[len(name) + 1:], Span(span.start + len(name) + 1, span.end),
                         None, whole.expansions, whole.prefix[len(name) + 1:])
        return Assignment(name, value, span)

    def redirect(self, node, word_nodes: list) -> list[Redirect]:
        """Read one redirection; words after its target are command arguments."""
        fd: int | None = None
        op = ""
        targets: list = []
        body: str | None = None
        quoted = False
        nested: list[Redirect] = []
        for child in node.children:
            kind = child.type
            if kind == "file_descriptor":
                if not child.text.isdigit():  # `-x2>f`: bash reads the word `-x2`, then `>f`
                    raise _Problem("BP100", self.span(child),
                                   f"`{child.text.decode()}` before a redirection is a word to bash, "
                                   "but the parser read it as a descriptor number",
                                   "put a space before the redirection")
                fd = int(child.text)
            elif kind == "heredoc_start":
                delimiter = child.text.decode("utf-8")
                quoted = any(ch in delimiter for ch in "'\"\\")
            elif kind == "heredoc_body":
                span = self.span(child)
                body = self.source[span.start:span.end]
            elif kind == "heredoc_end":
                pass
            elif kind in _REDIRECT_TYPES:
                nested.extend(self.redirect(child, word_nodes))
            elif not child.is_named:
                op = child.type
            elif node.type == "heredoc_redirect" and child.type in _WORD_TYPES:
                word_nodes.append(child)  # `cat <<EOF arg` passes arg to cat
            elif node.type == "heredoc_redirect":
                raise _Problem("BP101", self.span(child),
                               "commands after a here-document on its first line are not supported",
                               "use a here-string (<<< 'text') or put the here-document last")
            else:
                targets.append(child)
        target_word = None
        if targets:
            groups = self.group_words(targets)
            target_word = groups[0]
            # `cmd > out extra` passes `extra` to cmd: keep it as an argument.
            first_end = target_word.span.end
            word_nodes.extend(t for t in targets if self.span(t).start >= first_end)
        if fd is None and node.type == "file_redirect":
            # tree-sitter-bash reads the `0` of `0<` as an argument; bash reads a descriptor.
            for n in word_nodes:
                if n.type == "number" and n.end_byte == node.start_byte and n.text.isdigit():
                    word_nodes.remove(n)
                    fd = int(n.text)
                    break
            # `{name}>file` makes bash store a new descriptor number in `name`.
            for n in word_nodes:
                if n.end_byte == node.start_byte and _FD_VARIABLE.fullmatch(n.text.decode()):
                    raise _Problem("BP101", self.span(n),
                                   f"`{n.text.decode()}` before a redirection assigns a descriptor "
                                   "number to a shell variable", "drop it and redirect a plain descriptor")
        if node.type == "heredoc_redirect" and body is None:
            body = ""
        return [Redirect(op, fd, target_word, self.span(node), body, quoted), *nested]


def parse(source: str) -> Script:
    """Parse `source` with tree-sitter into the model (never raises)."""
    builder = _Builder(source)
    tree = _PARSER.parse(builder.raw)
    builder.build(tree.root_node)
    if "\\\n" in source and not builder.problems:
        builder.check_continuations(tree.root_node)
    return Script(source, tuple(builder.segments), tuple(builder.problems))
