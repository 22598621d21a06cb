"""Cross-check: allow a command only when tree-sitter and bashlex read it alike.

Published bypasses of read-only checkers are mostly parser differentials: the
checker read one command and bash ran another.  A second, independent parser
(bashlex, which follows bash's own grammar) re-reads every command the
tree-sitter verdict would allow; any difference in segments, joiners,
assignments, argv or redirections denies with BP106.  Deny verdicts skip it:
they need no second opinion, and bashlex is slow to import and to parse.

`Policy.crosscheck` picks the mode: "auto" (run it when bashlex is installed),
"required" (deny when bashlex is missing) or "off".
"""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass

from .model import Script, Segment, Span

_HINT = ("write it so any bash parser reads it one way: no line continuations inside words, "
         "plain quoting, here-documents last; `bash-policy explain` shows both readings")


@dataclass(frozen=True)
class Difference:
    """The first place the two readings differ, described for a person."""

    segment: int | None
    span: Span
    what: str
    tree_sitter: str
    bashlex: str

    @property
    def message(self) -> str:
        return (f"the two parsers read {self.what} differently: tree-sitter reads "
                f"{self.tree_sitter}, bashlex reads {self.bashlex}")


def heredoc_lines(body: str | None, strip_tabs: bool) -> tuple[str, ...] | None:
    """A here-document body as its complete lines (tabs stripped for `<<-`).

    The two parsers cut the body at different points of the terminator line
    and of `<<-` tabs; bash reads whole lines, so whole lines are compared.
    """
    if body is None:
        return None
    lines = body.split("\n")[:-1]
    return tuple(line.lstrip("\t") for line in lines) if strip_tabs else tuple(lines)


def _word(word) -> str:
    return repr(word.value) if word.literal else f"`{word.text}` (not literal)"


def _redirect(r) -> str:
    fd = "" if r.fd is None else str(r.fd)
    target = _word(r.target) if r.target is not None else ""
    if r.body is not None:
        lines = heredoc_lines(r.body, r.op == "<<-")
        target = f"here-document{' (quoted)' if r.quoted else ''} {list(lines)!r}"
    return f"{fd}{r.op} {target}".rstrip()


def _fields(segment: Segment) -> list[tuple[str, str, Span]]:
    """The parts of a segment both readings must share, in source order of meaning."""
    fields = [("the operator before it", repr(segment.joiner), segment.span),
              ("its `!`", "negated" if segment.negated else "not negated", segment.span),
              ("the number of assignments", str(len(segment.assignments)), segment.span),
              ("the number of words", str(len(segment.words)), segment.span),
              ("the number of redirections", str(len(segment.redirects)), segment.span)]
    for a in segment.assignments:
        fields.append(("an assignment", f"{a.name}={_word(a.value)}", a.span))
    for i, w in enumerate(segment.words):
        fields.append((f"word {i}", _word(w), w.span))
    for r in segment.redirects:
        fields.append(("a redirection", _redirect(r), r.span))
    return fields


def compare(tree_sitter: Script, bashlex: Script) -> Difference | None:
    """The first difference between two readings of one source, or None."""
    whole = Span(0, len(tree_sitter.source))
    if bashlex.problems and not tree_sitter.problems:
        code, span, message, _ = bashlex.problems[0]
        return Difference(None, span, "this command", "it as simple commands",
                          f"an error ({message})")
    if len(tree_sitter.segments) != len(bashlex.segments):
        return Difference(None, whole, "the number of simple commands",
                          str(len(tree_sitter.segments)), str(len(bashlex.segments)))
    for index, (mine, theirs) in enumerate(zip(tree_sitter.segments, bashlex.segments)):
        for (what, a, span), (_, b, _) in zip(_fields(mine), _fields(theirs)):
            if a != b:
                return Difference(index, span, f"{what} of command {index + 1}", a, b)
    return None


# The plain subset: one line of words, operators and the commonest
# redirections separated by spaces, where a word is made of the characters
# below and of quoted strings: '…' with anything but `'`, "…" with anything
# but `"`, `$`, backquote and backslash.  bash splits such a line at its
# unquoted spaces and removes the quotes, nothing else (no escapes,
# expansions, globs, comments or reserved words), so this reader is exact.
_PLAIN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:,+=@%-")
_PLAIN_REDIRECT = re.compile(r"(?:(?P<fd>[0-9])?(?P<op>>>?)(?P<file>/dev/null)"
                             r"|(?P<dfd>[0-9])?>&(?P<dup>[0-9])|&>(?P<all>/dev/null))")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_JOINERS = {"|", "||", "&&", ";"}
_RESERVED = {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while",
             "until", "do", "done", "in", "function", "time", "coproc"}


def _plain_tokens(source: str) -> list[tuple[str, str, bool]] | None:
    """(raw text, value, whether any of it was quoted) for each token, or None."""
    tokens: list[tuple[str, str, bool]] = []
    i, n = 0, len(source)
    while i < n:
        if source[i] == " ":
            i += 1
            continue
        start, value, quoted = i, [], False
        while i < n and source[i] != " ":
            ch = source[i]
            if ch in "'\"":
                end = source.find(ch, i + 1)
                if end < 0 or (ch == '"' and any(c in source[i + 1:end] for c in "$`\\")):
                    return None
                value.append(source[i + 1:end])
                quoted = True
                i = end + 1
            else:
                value.append(ch)
                i += 1
        tokens.append((source[start:i], "".join(value), quoted))
    return tokens


def plain_reading(source: str) -> list[tuple] | None:
    """bash's reading of `source` if it lies in the plain subset, else None."""
    if not source.strip(" ") or not source.isprintable():  # newlines, tabs, controls
        return None
    tokens = _plain_tokens(source)
    if tokens is None:
        return None
    segments: list[tuple] = []
    joiner = ""
    current: list[tuple[str, str, bool]] = []
    for token in tokens + [(";", ";", False)]:
        if token[0] in _JOINERS:
            if not current:
                return None
            segment = _plain_segment(current, joiner)
            if segment is None:
                return None
            segments.append(segment)
            joiner, current = token[0], []
        else:
            current.append(token)
    return segments


def _plain_segment(tokens, joiner: str) -> tuple | None:
    assignments, argv, redirects = [], [], []
    for raw, value, quoted in tokens:
        redirect = None if quoted else _PLAIN_REDIRECT.fullmatch(raw)
        if redirect:
            if redirect["file"]:
                fd = int(redirect["fd"]) if redirect["fd"] else None
                redirects.append((fd, redirect["op"], redirect["file"]))
            elif redirect["dup"]:
                fd = int(redirect["dfd"]) if redirect["dfd"] else None
                redirects.append((fd, ">&", redirect["dup"]))
            else:
                redirects.append((None, "&>", redirect["all"]))
            continue
        unquoted = _unquoted_parts(raw)
        if any(ch not in _PLAIN_CHARS for ch in unquoted):
            return None
        assignment = _ASSIGNMENT.match(raw) if not argv else None
        if assignment:
            assignments.append((assignment[1], value[len(assignment[0]):]))
        else:
            # `time` opening a pipeline is bash's keyword: it times what follows and
            # runs it as the time wrapper's spec reads it; other reserved words change
            # the grammar.
            if not argv and value in _RESERVED and not (value == "time" and joiner != "|"):
                return None
            argv.append(value)
    return (joiner, tuple(assignments), tuple(argv), tuple(redirects))


def _unquoted_parts(raw: str) -> str:
    return re.sub(r"'[^']*'|\"[^\"]*\"", "", raw)


def _model_reading(script: Script) -> list[tuple]:
    return [
        (seg.joiner, tuple((a.name, a.value.value) for a in seg.assignments),
         tuple(w.value for w in seg.words),
         tuple((r.fd, r.op, r.target.value if r.target else None) for r in seg.redirects))
        for seg in script.segments
    ]


def _bashlex_installed() -> bool:
    if "bashlex" in sys.modules:
        return sys.modules["bashlex"] is not None
    return importlib.util.find_spec("bashlex") is not None


def cross_check(script: Script, ctx) -> None:
    """Re-read `script.source` with a second reader; deny (BP106) on any difference.

    Plain text (`plain_reading`) is read by splitting at spaces, which is
    exact for it; everything else by bashlex.  A plain reading that differs
    is not a verdict: bashlex then decides.
    """
    mode = ctx.policy.crosscheck
    if mode == "off":
        ctx.notes.append("cross-check: off")
        return
    if mode == "auto" or _bashlex_installed():
        plain = plain_reading(script.source)
        if plain is not None and plain == _model_reading(script):
            ctx.notes.append("cross-check: plain-text reading agreed")
            return
    try:
        from . import bashlex_reader as parse_bashlex
    except ModuleNotFoundError as error:
        if error.name != "bashlex":
            raise
        if mode == "required":
            ctx.segment = None
            ctx.deny("BP106", Span(0, len(script.source)),
                     "the policy requires the bashlex cross-check, but bashlex is not installed",
                     "install it (pip install 'bash-policy[crosscheck]') or set crosscheck = \"auto\"")
        else:
            ctx.notes.append("cross-check: bashlex not installed")
        return
    difference = compare(script, parse_bashlex.parse(script.source))
    if difference is None:
        ctx.notes.append("cross-check: bashlex agreed")
        return
    ctx.segment = difference.segment
    ctx.deny("BP106", difference.span, difference.message, _HINT)
