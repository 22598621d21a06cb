"""The readings that must agree before a command is allowed (docs/readers.md).

The exact reader decides what a command means; tree-sitter must read the
same tree (bash_policy/read/crosscheck.py compares them), and bashlex too
where it is installed and can read the command.  `Policy.crosscheck`:
"auto" (bashlex when installed), "required" (deny without it), "off" (no
bashlex).  Tree-sitter always runs.  The default install is as safe as the
one with the extra: the two required readings decide, and no corpus case
depends on which is installed.
"""

from __future__ import annotations

import functools
import importlib.util
import sys

from ..read import parse_cache
from ..read.crosscheck import Difference, compare
from ..read.model import Script, Span
from ..records import dataclass
from .codes import Code
from .problems import Problem
from .rules import engine_rule

READINGS = engine_rule("readings", """Commands that tree-sitter (or bashlex) reads differently from bash's grammar.
    Published bypasses of read-only checkers are mostly parser differentials:
    the checker read one command and bash ran another.  A command is allowed
    only when the independent readings agree.""",
    codes=[Code.BP106], deny=[], allow=["rg foo | head"],
    untestable="needs a reader bug; tests/test_crosscheck.py feeds the comparison differing trees")


@dataclass(frozen=True)
class ReadersDisagree(Problem):
    code = Code.BP106
    rule = READINGS
    hint_format = ("write it so every bash parser reads it one way: plain quoting, no line continuations "
                   "inside words, here-documents last; `bash-policy explain` shows the readings")
    difference: Difference

    def message(self) -> str:
        return self.difference.message


@dataclass(frozen=True)
class BashlexMissing(Problem):
    code = Code.BP106
    rule = READINGS
    message_format = "the policy requires the bashlex cross-check, but bashlex is not installed"
    hint_format = "install it (pip install 'bash-policy[crosscheck]') or set crosscheck = \"auto\""


def _bashlex_installed() -> bool:
    if "bashlex" in sys.modules:
        return sys.modules["bashlex"] is not None
    return _bashlex_found()


@functools.cache
def _bashlex_found() -> bool:
    """Looked up once per process: a failed import searches every path entry
    again on each call, which cost more than the rest of the check."""
    return importlib.util.find_spec("bashlex") is not None


def cross_check(script: Script, ctx) -> None:
    """Re-read `script.source` with tree-sitter, then bashlex; deny (BP106) on
    any difference from the exact reading."""
    from ..read import treesitter

    ctx.segment = None
    difference = parse_cache.compared(compare, script, parse_cache.read(treesitter.parse, script.source),
                                      "tree-sitter")
    if difference is not None:
        ctx.deny(ReadersDisagree(difference), difference.span)
        return
    mode = ctx.policy.crosscheck
    if mode == "off":
        ctx.notes.append("cross-check: tree-sitter agreed; bashlex off")
        return
    if not _bashlex_installed():
        if mode == "required":
            ctx.deny(BashlexMissing(), Span(0, len(script.source)))
        else:
            ctx.notes.append("cross-check: tree-sitter agreed; bashlex not installed")
        return
    from ..read import bashlex_reader

    reading = parse_cache.read(bashlex_reader.parse, script.source)
    if reading.problems:
        ctx.notes.append("cross-check: tree-sitter agreed; bashlex cannot read this command")
        return
    difference = parse_cache.compared(compare, script, reading, "bashlex")
    if difference is not None:
        ctx.deny(ReadersDisagree(difference), difference.span)
        return
    ctx.notes.append("cross-check: tree-sitter and bashlex agreed")
