"""Every way the exact reader refuses a command, and every construct it
reads, has a corpus case (issue 18): the corpora are the reader's evidence.

Refusal sites are the calls of `fail`, `unexpected` and `_regex_fail` in
bash_policy/read/exact.py, found in its syntax tree, and the handler of a
tree too deep to read; each must be the one that refuses some corpus
command.  Constructs are what the reader can put in a tree: each node type,
each list and pipeline operator, each redirection operator, each kind of
expansion, each case-arm terminator, here-documents quoted and not, `!`,
`time`, `|&`, `=~`; each must occur in some corpus command the reader reads
without a problem.  A new refusal or construct without a case fails here.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from bash_policy.corpus import corpus_files, read_cases
from bash_policy.read import exact, model
from bash_policy.read.model import (
    Case,
    Command,
    Cond,
    For,
    If,
    List,
    Pipeline,
    While,
    own_words,
    walk,
)

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
COMMANDS = sorted({case.command for f in corpus_files([CORPORA]) for case in read_cases(f)})
SOURCE = Path(exact.__file__)
_WRAPPERS = ("fail", "unexpected", "_regex_fail")


def _refusal_sites() -> set[int]:
    """Lines of exact.py that call a refusing method, outside the methods themselves."""
    tree = ast.parse(SOURCE.read_text())
    inside = {n.lineno for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in _WRAPPERS
              for n in ast.walk(f) if isinstance(n, ast.Call)}
    return {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr in _WRAPPERS} - inside


def test_every_refusal_site_is_reached_by_a_corpus_case(monkeypatch):
    reached: set[int] = set()
    refuse = exact.Reader.fail

    def traced(self, *args, **kwargs):
        frame = sys._getframe(1)
        while frame.f_code.co_name in _WRAPPERS and frame.f_code.co_filename == str(SOURCE):
            frame = frame.f_back
        reached.add(frame.f_lineno)
        return refuse(self, *args, **kwargs)

    monkeypatch.setattr(exact.Reader, "fail", traced)
    problems = [exact.parse(command).problems for command in COMMANDS]
    lines = SOURCE.read_text().splitlines()
    missing = sorted(_refusal_sites() - reached)
    assert [f"{n}: {lines[n - 1].strip()}" for n in missing] == []
    assert any(p and "nested too deeply to read" in p[0][2] for p in problems)  # RecursionError


def _constructs(script) -> set[str]:
    found: set[str] = set()
    for node in walk(script.body):
        found.add(type(node).__name__)
        if isinstance(node, List):
            found.update(f"op {op!r}" for op in node.ops)
        elif isinstance(node, Pipeline):
            found.update(name for name, on in (("!", node.negated), ("time", node.timed),
                                               ("|&", any(node.stderr))) if on)
        elif isinstance(node, If):
            found.update(name for name, on in (("elif", len(node.branches) > 1),
                                               ("else", node.orelse is not None)) if on)
        elif isinstance(node, While) and node.until:
            found.add("until")
        elif isinstance(node, For) and node.words is None:
            found.add("for without in")
        elif isinstance(node, Case):
            found.update(f"case {arm.terminator or 'last'}" for arm in node.arms)
        elif isinstance(node, Cond) and any(w.text == "=~" for w in node.words):
            found.add("=~")
        elif isinstance(node, Command) and node.assignments:
            found.add("assignment")
        for redirect in getattr(node, "redirects", ()):
            found.add(f"redirect {redirect.op}")
            if redirect.op in ("<<", "<<-"):
                found.add(f"here-document {'quoted' if redirect.quoted else 'unquoted'}")
        found.update(f"expansion {e.kind}" for w in own_words(node) for e in w.expansions)
    return found


def _readable() -> set[str]:
    """Everything the exact reader can put in a tree, from its own tables."""
    kinds = {getattr(exact, name) for name in dir(model) if isinstance(getattr(model, name), str)
             and name.isupper() and hasattr(exact, name) and getattr(exact, name) == getattr(model, name)}
    nodes = {cls.__name__ for cls in (*model.COMPOUND, Command, List, Pipeline) if hasattr(exact, cls.__name__)}
    return (nodes | {f"expansion {k}" for k in kinds - {"found-path", "found-paths"}}
            | {f"redirect {op}" for op in exact._REDIRECT_OPS | {"<&-", ">&-"}}
            | {f"op {op!r}" for op in ("&&", "||", ";", "\n", "&")}
            | {"!", "time", "|&", "elif", "else", "until", "for without in", "case ;;", "case ;&",
               "case ;;&", "case last", "=~", "assignment", "here-document quoted",
               "here-document unquoted"})


def test_every_construct_the_reader_reads_has_a_corpus_case():
    found: set[str] = set()
    for command in COMMANDS:
        script = exact.parse(command)
        if not script.problems and script.body is not None:
            found |= _constructs(script)
    assert sorted(_readable() - found) == []
