"""The tree-sitter reader: source text -> the same tree as the exact reader.

Tree-sitter decides the structure (lists, pipelines, compound commands,
where each word and redirection lies); `words.scan_word` computes every value
from the raw text, independently of the exact reader.  The two readings must
agree before a command is allowed (bash_policy/read/crosscheck.py), so this
reader only has to be faithful to what tree-sitter saw; where tree-sitter's
grammar differs from bash's on purpose (it reads `time` as a command, hangs
trailing redirections on a whole list), it is mapped back to bash's reading.
Anything it cannot map is a problem, which the comparison reports.
"""

from __future__ import annotations

import os
import re
import sys

from .model import (
    COMMAND_SUB,
    OUTPUT_SUB,
    PROCESS_SUB,
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
)
from .words import WordSyntaxError, scan_word


def _binding(package: str):
    """The compiled module `package._binding`, loaded without running the
    package's `__init__`: tree-sitter's imports `typing` for a Protocol and
    tree-sitter-bash's `importlib.resources` for its query files, a third of
    a check's start-up that this reader does not use.  It is registered under
    its own name, so that importing the package later reuses it."""
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder

    name = f"{package}._binding"
    if name in sys.modules:
        return sys.modules[name]
    found = PathFinder.find_spec(package)
    folders = (found.submodule_search_locations or []) if found is not None else []
    for path in (os.path.join(folder, "_binding" + suffix) for folder in folders for suffix in EXTENSION_SUFFIXES):
        if os.path.isfile(path):
            loader = ExtensionFileLoader(name, path)
            module = loader.create_module(ModuleSpec(name, loader, origin=path))
            loader.exec_module(module)
            sys.modules[name] = module
            return module
    raise ImportError(f"no compiled module in {package}")


try:
    _ts, _ts_bash = _binding("tree_sitter"), _binding("tree_sitter_bash")
except ImportError:  # laid out otherwise than the wheels: through the packages
    import tree_sitter as _ts
    import tree_sitter_bash as _ts_bash
_PARSER = _ts.Parser(_ts.Language(_ts_bash.language()))

_SEPARATORS = {";", "&", ";;", ";&", ";;&"}
_WORD_TYPES = {"word", "string", "raw_string", "concatenation", "number", "simple_expansion",
               "expansion", "command_substitution", "ansi_c_string", "translated_string",
               "process_substitution", "arithmetic_expansion", "brace_expression"}
_REDIRECT_TYPES = {"file_redirect", "herestring_redirect", "heredoc_redirect"}
_STATEMENT_TYPES = {"command", "pipeline", "list", "negated_command", "redirected_statement",
                    "subshell", "compound_statement", "if_statement", "for_statement",
                    "c_style_for_statement",
                    "while_statement", "case_statement", "test_command", "variable_assignment"}
_UNSUPPORTED = {
    "function_definition": "a function definition",
}
# Nodes tree-sitter gives to what bash reads as a simple command: `export`,
# `declare` and the like, `unset`, and several assignments without a command.
_COMMAND_LIKE = {"declaration_command", "unset_command", "variable_assignments"}
# Gaps between tokens may hold only blanks and backslash-newline pairs.
_BLANK_GAP = re.compile(r"(?:[ \t]|\\\n)*")
_JOIN_GAP = re.compile(r"(?:\\\n)*")
_GAP = re.compile(r"(?:[ \t\n]|\\\n|#[^\n]*)*")
_FD_VARIABLE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


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
                for k in range(len(ch.encode("utf-8"))):
                    table[pos + k] = index
                pos += len(ch.encode("utf-8"))
            table[pos] = len(source)
            self.char_at = table

    # -- offsets -----------------------------------------------------------
    def span(self, node) -> Span:
        return self.span_bytes(node.start_byte, node.end_byte)

    def span_bytes(self, a: int, b: int) -> Span:
        if self.char_at is None:
            return Span(a, b)
        return Span(self.char_at[a], self.char_at[b])

    def text(self, a: int, b: int) -> str:
        return self.raw[a:b].decode("utf-8")

    def fail(self, code: str, node_or_span, message: str, hint: str = ""):
        span = node_or_span if isinstance(node_or_span, Span) else self.span(node_or_span)
        raise _Problem(code, span, message, hint)

    # -- lists ---------------------------------------------------------------
    def sequence(self, nodes, start: int, end: int) -> List:
        """Statements separated by `;`, `&` or newlines (the gaps between them)."""
        items: list[Pipeline] = []
        ops: list[str] = []
        prev_end = start
        for node in nodes:
            gap = self.text(prev_end, node.start_byte)
            if not _GAP.fullmatch(gap):
                self.fail("BP100", self.span_bytes(prev_end, node.start_byte),
                          "the parser skipped text here")
            if items and len(ops) < len(items) and "\n" in _strip_comments(gap).replace("\\\n", ""):
                ops.append("\n")
            prev_end = node.end_byte
            kind = node.type
            if kind == "comment":
                continue
            if kind in _SEPARATORS:
                if len(ops) < len(items):
                    ops.append(kind)
                continue
            if len(ops) < len(items):
                self.fail("BP100", node, "two commands without an operator between them")
            for pipeline, op in self.and_or(node):
                if op:
                    ops.append(op)
                items.append(pipeline)
        tail = self.text(prev_end, end)
        if not _GAP.fullmatch(tail):
            self.fail("BP100", self.span_bytes(prev_end, end), "the parser skipped text here")
        if not items:
            self.fail("BP100", self.span_bytes(start, end), "an empty command list")
        return List(tuple(items), tuple(ops), Span(items[0].span.start, items[-1].span.end))

    def and_or(self, node, redirects=(), continued: bool = False) -> list[tuple[Pipeline, str]]:
        """A statement as pipelines joined by && and || (the op before each).
        `continued`: the first pipeline continues one that `rejoined` is
        putting back together (no `!` or `time` may start it)."""
        out: list[tuple[Pipeline, str]] = []
        work = [(node, "", redirects, continued)]
        while work:
            node, op, redirects, continued = work.pop()
            if node.type == "list":
                children = [c for c in node.children if c.type != "comment"]
                parts = [c for c in children if c.type not in ("&&", "||")]
                ops = [c.type for c in children if c.type in ("&&", "||")]
                if len(parts) != 2 or len(ops) != 1:
                    self.fail("BP100", node, "the parser read this list differently")
                work.append((parts[1], ops[0], redirects, False))
                work.append((parts[0], op, (), continued))
            elif node.type == "redirected_statement" and node.child_by_field_name("body") is not None \
                    and node.child_by_field_name("body").type in ("list", "pipeline", "negated_command") \
                    and not self.is_compound(node.child_by_field_name("body")):
                body = node.child_by_field_name("body")
                extra = [c for c in node.children if c != body]
                self.check_redirect_nodes(node, extra)
                work.append((body, op, tuple(extra) + tuple(redirects), continued))
            elif node.type == "pipeline" and self.members(node)[0][-1][0].type == "list":
                out.extend(self.rejoined(node, op, redirects, continued))
            else:
                out.append((self.pipeline(node, redirects, continued), op))
        return out

    def members(self, node) -> tuple[list, list[bool]]:
        """A pipeline node's members, each with the redirection nodes that
        belong to it, and for each joint whether it is `|&`.  tree-sitter-bash
        hangs a redirection after a middle member on the pipeline so far
        (`a | b 2>x | c` is `pipeline(redirected(pipeline(a, b), 2>x), c)`):
        bash's redirection belongs to that member, `b`."""
        members: list[tuple] = []
        joints: list[bool] = []
        for child in node.children:
            if child.type in ("|", "|&"):
                joints.append(child.type == "|&")
            elif child.type != "comment":
                members.append((child, ()))
        first = members[0][0]
        body = first.child_by_field_name("body") if first.type == "redirected_statement" else None
        if body is not None and body.type == "pipeline":
            extra = tuple(c for c in first.children if c != body)
            self.check_redirect_nodes(first, extra)
            inner, inner_joints = self.members(body)
            last, own = inner[-1]
            inner[-1] = (last, own + extra)
            members, joints = inner + members[1:], inner_joints + joints
        return members, joints

    def rejoined(self, node, op: str, redirects, continued: bool) -> list[tuple[Pipeline, str]]:
        """Undo tree-sitter-bash's one misnesting of `a | b | c && d`: it reads
        `pipeline(a, list(pipeline(b, c), d))`, where bash (whose `|` binds
        tighter than `&&` and `||`) reads `list(pipeline(a, b, c), d)`.  The
        same members and operators, in the same order: the list's first
        pipeline continues this one, and the rest of the list follows it."""
        members, joints = self.members(node)
        head = self.piped(node.start_byte, members[:-1], joints[:-1], False, (), continued)
        rest = self.and_or(members[-1][0], redirects, continued=True)
        first, _ = rest[0]
        merged = Pipeline(head.commands + first.commands, Span(head.span.start, first.span.end),
                          head.negated, head.timed, head.stderr + (joints[-1],) + first.stderr)
        return [(merged, op), *rest[1:]]

    def is_compound(self, node) -> bool:
        return node.type not in ("list", "pipeline", "negated_command", "command")

    def check_redirect_nodes(self, node, extra) -> None:
        if any(c.type not in _REDIRECT_TYPES for c in extra):
            self.fail("BP101", node, "unsupported redirection layout")

    def pipeline(self, node, redirects=(), continued: bool = False) -> Pipeline:
        negated = False
        start = node.start_byte
        while node.type == "negated_command":
            inner = [c for c in node.children if c.type != "!"]
            if len(inner) != 1 or continued:
                self.fail("BP100", node, "the parser read this `!` differently")
            negated = not negated
            node = inner[0]
        if node.type == "redirected_statement" and not self.is_compound_body(node):
            body = node.child_by_field_name("body")
            if body is not None and body.type in ("pipeline", "negated_command"):
                extra = [c for c in node.children if c != body]
                self.check_redirect_nodes(node, extra)
                piped = self.pipeline(body, tuple(extra) + tuple(redirects), continued)
                return Pipeline(piped.commands, self.span_bytes(start, node.end_byte),
                                piped.negated != negated, piped.timed, piped.stderr)
        members, stderr = self.members(node) if node.type == "pipeline" else ([(node, ())], [])
        return self.piped(start, members, stderr, negated, redirects, continued)

    def piped(self, start: int, members, stderr: list[bool], negated: bool, redirects,
              continued: bool) -> Pipeline:
        """Pipeline members as a Pipeline; `redirects` belong to the last one."""
        commands = []
        for index, (member, own) in enumerate(members):
            if member.type == "negated_command":  # tree-sitter puts `!` on the first member
                inner = [c for c in member.children if c.type != "!"]
                if index or continued or len(inner) != 1 or inner[0].type == "negated_command":
                    self.fail("BP100", member, "`!` must start a pipeline")
                negated = not negated
                member = inner[0]
            last = index == len(members) - 1
            commands.append(self.unit(member, tuple(own) + (tuple(redirects) if last else ())))
        timed = False
        first = commands[0]
        if isinstance(first, Command) and first.words and first.words[0].text == "time" \
                and not first.assignments and not continued:  # after `|`, `time` is a program
            commands[0], timed = self.untime(first, members[0][0])
        return Pipeline(tuple(commands), self.span_bytes(start, members[-1][0].end_byte), negated,
                        timed, tuple(stderr))

    def is_compound_body(self, node) -> bool:
        body = node.child_by_field_name("body")
        return body is not None and self.is_compound(body) and body.type != "redirected_statement"

    def untime(self, command: Command, node):
        """tree-sitter reads bash's `time` keyword as a program: take it, one
        `-p` and one `--` off the words, as bash's grammar does."""
        words = list(command.words[1:])
        if words and words[0].text == "-p":
            words.pop(0)
        if words and words[0].text == "--":
            words.pop(0)
        if not words:
            self.fail("BP101", node, "`time` with no command after it is not supported")
        if words[0].text in ("!", "time", "{", "(", "if", "for", "while", "until", "case", "[["):
            self.fail("BP100", node, "the parser read `time` differently")
        return Command(tuple(words), (), command.redirects, Span(words[0].span.start,
                                                                   command.span.end)), True

    # -- one command or compound ---------------------------------------------------
    def unit(self, node, redirects=()):
        kind = node.type
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            extra = [c for c in node.children if c != body]
            self.check_redirect_nodes(node, extra)
            if body is None:
                return self.command_from_children([], node, tuple(extra) + tuple(redirects))
            return self.unit(body, tuple(extra) + tuple(redirects))
        if kind == "command" or kind in _COMMAND_LIKE:
            return self.command_from_children(list(node.children), node, redirects)
        if kind == "variable_assignment":
            return self.command_from_children([node], node, redirects)
        if kind == "test_command" and node.children and node.children[0].type == "[":
            return self.bracket_test(node, redirects)
        reds = self.redirects_of(redirects)
        if kind == "subshell":
            inner = [c for c in node.children if c.type not in ("(", ")")]
            return Subshell(self.sequence(inner, node.children[0].end_byte, node.children[-1].start_byte),
                            reds, self.span(node))
        if kind == "compound_statement":
            if node.children and node.children[0].type == "((":
                return self.arith(node, reds)
            inner = [c for c in node.children if c.type not in ("{", "}")]
            return Group(self.sequence(inner, node.children[0].end_byte, node.children[-1].start_byte),
                         reds, self.span(node))
        if kind == "if_statement":
            return self.if_statement(node, reds)
        if kind == "while_statement":
            return self.while_statement(node, reds)
        if kind == "for_statement":
            return self.for_statement(node, reds)
        if kind == "c_style_for_statement":
            return self.arith_for(node, reds)
        if kind == "case_statement":
            return self.case_statement(node, reds)
        if kind == "test_command":
            return Cond(tuple(self.cond_words(node)), reds, self.span(node))
        if kind in ("list", "pipeline", "negated_command"):
            self.fail("BP100", node, "the parser nested a list where bash reads one command")
        what = _UNSUPPORTED.get(kind, f"this construct ({kind})")
        self.fail("BP101", node, f"{what} is outside what plan mode can check",
                  "write simple commands, pipelines and lists")

    def redirects_of(self, nodes) -> tuple[Redirect, ...]:
        extra_words: list = []
        out = []
        for rnode in nodes:
            out.extend(self.redirect(rnode, extra_words))
        if extra_words:
            self.fail("BP100", extra_words[0], "words after a redirection of a compound command")
        return tuple(out)

    def statements_between(self, node, first_type: str, stop_types) -> tuple[list, int, int]:
        """The statement children after the keyword `first_type` up to a stop keyword."""
        children = node.children
        start_index = next(i for i, c in enumerate(children) if c.type == first_type) + 1
        collected = []
        end_byte = node.end_byte
        for c in children[start_index:]:
            if c.type in stop_types:
                end_byte = c.start_byte
                break
            collected.append(c)
        return collected, children[start_index - 1].end_byte, end_byte

    def if_statement(self, node, reds) -> If:
        children = node.children
        branches = []
        condition, start, end = self.statements_between(node, "if", {"then"})
        body, bstart, bend = self.statements_between(node, "then", {"elif_clause", "else_clause", "fi"})
        branches.append((self.sequence(condition, start, end), self.sequence(body, bstart, bend)))
        orelse = None
        for c in children:
            if c.type == "elif_clause":
                condition, start, end = self.statements_between(c, "elif", {"then"})
                body, bstart, bend = self.statements_between(c, "then", set())
                branches.append((self.sequence(condition, start, end), self.sequence(body, bstart, bend)))
            elif c.type == "else_clause":
                body, bstart, bend = self.statements_between(c, "else", set())
                orelse = self.sequence(body, bstart, bend)
        return If(tuple(branches), orelse, reds, self.span(node))

    def do_group(self, node) -> List:
        group = next((c for c in node.children if c.type == "do_group"), None)
        if group is None:
            self.fail("BP101", node, "a loop without `do … done` is not supported")
        inner, start, end = self.statements_between(group, "do", {"done"})
        return self.sequence(inner, start, end)

    def while_statement(self, node, reds) -> While:
        keyword = node.children[0].type
        condition, start, end = self.statements_between(node, keyword, {"do_group"})
        return While(self.sequence(condition, start, end), self.do_group(node), keyword == "until",
                     reds, self.span(node))

    def for_statement(self, node, reds) -> For:
        variable = node.child_by_field_name("variable")
        values = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "value"]
        has_in = any(c.type == "in" for c in node.children)
        words = tuple(self.group_words(values)) if has_in else None
        return For(self.text(variable.start_byte, variable.end_byte), words, self.do_group(node), reds,
                   self.span(node))

    def arith_for(self, node, reds) -> ArithFor:
        """`for (( A; B; C ))`: the text between `((`, the two `;` and `))`."""
        marks = [c for c in node.children if c.type in ("((", ";", "))")]
        if [c.type for c in marks[:4]] != ["((", ";", ";", "))"]:
            self.fail("BP100", node, "the parser read this `for (( … ))` differently")
        init, test, update = (self.text(a.end_byte, b.start_byte).strip(" \t")
                              for a, b in zip(marks, marks[1:4]))
        if not any(c.type == "do_group" for c in node.children):
            self.fail("BP101", node, "`for (( … )) { …; }` is not supported")
        return ArithFor(init, test, update, self.do_group(node), reds, self.span(node))

    def case_statement(self, node, reds) -> Case:
        value = node.child_by_field_name("value")
        subject = self.group_words([value])[0]
        arms = []
        for item in (c for c in node.children if c.type == "case_item"):
            patterns, body_nodes, terminator = [], [], ""
            seen_paren = False
            for i, c in enumerate(item.children):
                if not seen_paren:
                    if c.type == ")":
                        seen_paren = True
                    elif item.field_name_for_child(i) == "value":
                        patterns.append(c)
                    continue
                if c.type in (";;", ";&", ";;&"):
                    terminator = c.type
                else:
                    body_nodes.append(c)
            words = [self.group_words([pattern])[0] for pattern in patterns]
            close = next(c for c in item.children if c.type == ")")
            body = None
            if any(c.type not in ("comment",) for c in body_nodes):
                stop = next((c.start_byte for c in item.children if c.type in (";;", ";&", ";;&")),
                            item.end_byte)
                body = self.sequence(body_nodes, close.end_byte, stop)
            arms.append(CaseArm(tuple(words), body, terminator, self.span(item)))
        return Case(subject, tuple(arms), reds, self.span(node))

    def arith(self, node, reds) -> Arith:
        close = node.children[-1]
        if close.type != "))":
            self.fail("BP100", node, "the parser read this arithmetic differently")
        return Arith(self.text(node.children[0].end_byte, close.start_byte), reds, self.span(node))

    def cond_words(self, node) -> list[Word]:
        """The words and operators between `[[` and `]]`, in order."""
        leaves = []
        stack = list(reversed(node.children[1:-1]))
        while stack:
            child = stack.pop()
            if child.type in _WORD_TYPES or child.type in ("extglob_pattern", "regex", "test_operator") \
                    or not child.children:
                leaves.append(child)
            else:
                stack.extend(reversed(child.children))
        words: list[Word] = []
        run: list = []
        regex = False  # the run after the `=~` operator is a regular expression
        for leaf in leaves + [None]:
            if leaf is None or leaf.type in ("&&", "||", "(", ")", "<", ">") or leaf.type == "=~":
                if regex and run:
                    words += self.regex_words(run)
                else:
                    words += self.group_words(run)
                regex = leaf is not None and leaf.type == "=~"
                run = [leaf] if regex else []
                if regex:
                    words += self.group_words(run)
                    run = []
                elif leaf is not None:
                    text = leaf.text.decode()
                    words.append(Word(text, self.span(leaf), text))
            else:
                run.append(leaf)
        return words

    def regex_words(self, nodes) -> list[Word]:
        """The right side of `=~`: one word from its first node to the first
        blank between nodes, taken as written (bash matches its quoted parts
        literally; the exact reader decides which forms are read at all),
        then any words after it."""
        start, end, count = nodes[0].start_byte, nodes[0].end_byte, 1
        while count < len(nodes) and not self.text(end, nodes[count].start_byte):
            end = nodes[count].end_byte
            count += 1
        span = self.span_bytes(start, end)
        text = self.source[span.start:span.end]
        plain = not any(n.type in _EXPANSION_NODES for node in nodes[:count] for n in _descendants(node))
        return [Word(text, span, text if plain else None), *self.group_words(nodes[count:])]

    def bracket_test(self, node, redirects) -> Command:
        """`[ … ]` is the command `[` with its words: tree-sitter parses it as an
        expression, so collect its tokens back into words."""
        atoms = []
        stack = list(reversed(node.children))
        while stack:
            child = stack.pop()
            if child.type in _WORD_TYPES or child.type == "extglob_pattern" or not child.children:
                atoms.append(child)
            else:
                stack.extend(reversed(child.children))
        return self.command_from_children(atoms, node, redirects)

    # -- simple commands ---------------------------------------------------
    def command_from_children(self, children, node, redirects=()) -> Command:
        assignments: list[Assignment] = []
        word_nodes: list = []
        redirect_nodes = list(redirects)
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
            elif kind in _STATEMENT_TYPES or kind in _UNSUPPORTED or kind in _COMMAND_LIKE:
                self.fail("BP101", child, "a compound command inside a simple command")
            else:
                word_nodes.append(child)
        redirect_list: list[Redirect] = []
        for rnode in redirect_nodes:
            redirect_list.extend(self.redirect(rnode, word_nodes))
        covered = [(r.start_byte, r.end_byte) for r in redirect_nodes]
        words = self.group_words(sorted(word_nodes, key=lambda n: n.start_byte), covered)
        return Command(tuple(words), tuple(assignments), tuple(redirect_list), self.span(node))

    def group_words(self, nodes, covered=()) -> list[Word]:
        """Join adjacent nodes into words: bash splits only at blanks.

        A gap between two nodes must be blanks, or a redirection (`covered`)
        between blanks; anything else is text the parser did not account for.
        """
        words: list[Word] = []
        starts = [self.word_start(node) for node in nodes]
        raw = self.raw
        i = 0
        while i < len(nodes):
            start = starts[i]
            end = nodes[i].end_byte
            j = i + 1
            while j < len(nodes):
                if end == starts[j]:  # nothing between: one word (as _JOIN_GAP says of "")
                    end = nodes[j].end_byte
                    j += 1
                    continue
                if starts[j] == end + 1 and raw[end] in b" \t":  # one blank: the word ends
                    break
                gap = self.text(end, starts[j])
                if _JOIN_GAP.fullmatch(gap):
                    end = nodes[j].end_byte
                    j += 1
                elif _BLANK_GAP.fullmatch(self.uncovered(end, starts[j], covered) if covered else gap):
                    break
                else:
                    self.fail("BP100", self.span_bytes(end, starts[j]), "the parser skipped text here")
            words.append(self.word(start, end, nodes[i:j]))
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

    def word(self, a: int, b: int, nodes=()) -> Word:
        span = self.span_bytes(a, b)
        try:
            word = scan_word(self.source[span.start:span.end], span.start)
        except WordSyntaxError as error:
            self.fail("BP100", Span(error.offset, error.offset + 1), f"syntax error: {error}",
                      "check the quoting of this word")
        if not any(node.child_count for node in nodes):
            return word  # a substitution node always has children (its `$(`, `<(`, `>(`)
        subs = list(self.substitutions(nodes))
        if not subs:
            return word
        kept = [e for e in word.expansions if e.kind not in (COMMAND_SUB, PROCESS_SUB, OUTPUT_SUB)]
        return Word(word.text, word.span, None, tuple(sorted(kept + subs, key=lambda e: e.span.start)),
                    word.prefix)

    def substitutions(self, nodes):
        """The command and process substitutions in a word's nodes, with their bodies."""
        stack = list(reversed(list(nodes)))
        while stack:
            node = stack.pop()
            if node.type in ("command_substitution", "process_substitution"):
                opener = node.children[0]
                if opener.type not in ("$(", "<(", ">("):
                    self.fail("BP200", node, "backquote command substitution is not supported",
                              "use $(…) instead of backquotes")
                inner = [c for c in node.children[1:-1]]
                body = self.sequence(inner, opener.end_byte, node.children[-1].start_byte) \
                    if any(c.type != "comment" for c in inner) else None
                kind = {"$(": COMMAND_SUB, "<(": PROCESS_SUB}.get(opener.type, OUTPUT_SUB)
                yield Expansion(kind, self.span(node), body)
            else:
                stack.extend(reversed(node.children))

    def assignment(self, node) -> Assignment:
        span = self.span(node)
        text = self.source[span.start:span.end]
        name, _, _ = text.partition("=")
        value_text = text[len(name) + 1:]
        value_node = node.child_by_field_name("value")
        if value_node is not None and value_node.type == "array":
            parts = value_node.children
            if not parts or parts[0].type != "(" or parts[-1].type != ")" \
                    or any(p.type == "comment" for p in parts):
                self.fail("BP100", node, "the parser read this array assignment differently")
            elements = self.group_words(list(parts[1:-1]))
            value = Word(value_text, self.span(value_node), None)
            if value.span.start != span.start + len(name) + 1 or value.span.end != span.end:
                self.fail("BP100", node, "the parser read this array assignment differently")
            return Assignment(name, value, span, tuple(elements))
        value = self.word(node.start_byte + len(name.encode()) + 1, node.end_byte, node.children[2:])
        if value.text != value_text:
            self.fail("BP100", node, "the parser read this assignment differently")
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
                    self.fail("BP100", child,
                              f"`{child.text.decode()}` before a redirection is a word to bash, "
                              "but the parser read it as a descriptor number",
                              "put a space before the redirection")
                fd = int(child.text)
            elif kind == "heredoc_start":
                delimiter = child.text.decode("utf-8")
                quoted = any(ch in delimiter for ch in "'\"\\")
                targets.append(child)
            elif kind == "heredoc_body":
                span = self.span(child)
                body = self.source[span.start:span.end]
            elif kind in ("heredoc_end", "comment"):
                pass
            elif kind in _REDIRECT_TYPES:
                nested.extend(self.redirect(child, word_nodes))
            elif not child.is_named:
                op = child.type
            elif node.type == "heredoc_redirect" and child.type in _WORD_TYPES:
                word_nodes.append(child)  # `cat <<EOF arg` passes arg to cat
            elif node.type == "heredoc_redirect":
                self.fail("BP101", child,
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
            # tree-sitter reads the `0` of `0<` as an argument; bash reads a descriptor.
            for n in word_nodes:
                if n.type == "number" and n.end_byte == node.start_byte and n.text.isdigit():
                    word_nodes.remove(n)
                    fd = int(n.text)
                    break
            for n in word_nodes:
                if n.end_byte == node.start_byte and _FD_VARIABLE.fullmatch(n.text.decode()):
                    self.fail("BP101", n, f"`{n.text.decode()}` before a redirection assigns a "
                                          "descriptor number to a shell variable",
                              "drop it and redirect a plain descriptor")
        if node.type == "heredoc_redirect" and body is None:
            body = ""
        return [Redirect(op, fd, target_word, self.span(node), body, quoted), *nested]


_EXPANSION_NODES = {"simple_expansion", "expansion", "command_substitution", "process_substitution",
                    "arithmetic_expansion"}


def _descendants(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _strip_comments(gap: str) -> str:
    return re.sub(r"#[^\n]*", "", gap)


def parse(source: str) -> Script:
    """Read `source` with tree-sitter into the model (never raises)."""
    builder = _Builder(source)
    tree = _PARSER.parse(builder.raw)
    root = tree.root_node
    try:
        if root.has_error:
            _report_errors(builder, root)
        children = [c for c in root.children]
        if not any(c.type != "comment" for c in children):
            tail = builder.text(0, len(builder.raw))
            if not _GAP.fullmatch(tail):
                builder.fail("BP100", Span(0, len(source)), "the parser skipped text here")
            return Script(source, None, ())
        body = builder.sequence(children, 0, len(builder.raw))
    except _Problem as problem:
        return Script(source, None, (problem.args4,))
    except RecursionError:
        return Script(source, None, (("BP103", Span(0, len(source)),
                                      "the command is nested too deeply to read", "simplify it"),))
    return Script(source, body, ())


def _report_errors(builder: _Builder, root) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            what = f"expected {node.type!r}" if node.is_missing else "cannot parse this"
            builder.fail("BP100", node, f"syntax error: {what}",
                         "check for an unpaired quote, bracket or operator")
        if node.has_error:
            stack.extend(reversed(node.children))
    builder.fail("BP100", root, "syntax error", "check for an unpaired quote or operator")
