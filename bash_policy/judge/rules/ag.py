"""ag (the silver searcher): -A, -B and -C take the next word only when it is a number.

ag 2.2.0 reads `-A WORD` with getopt, then gives WORD back when strtol does
not read all of it: `ag -A foo bar` searches for foo in bar (tried), where a
reading of WORD as the value would take bar for the pattern and look at no
file.  Plain numbers are read alike by both, so only they are allowed.
"""

from __future__ import annotations

import re

from ...records import dataclass
from ..codes import Code
from ..problems import Problem
from . import rule

_LINES = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class AgContextNotNumber(Problem):
    code = Code.BP403
    message_format = ("`ag {name}` with `{value}`: ag takes a value of {name} only when it is a number, and "
                      "otherwise reads the word as the pattern")
    hint_format = "write the number of lines: ag {name} 3 PATTERN"
    name: str
    value: str


@rule("ag_context_lines", codes=[Code.BP403], deny=["ag -A foo bar", "ag -C1x foo", "ag --after=x foo"],
      allow=["ag -A 3 foo", "ag -C2 foo src", "ag --after=3 foo"],
      reads=["-A", "-B", "-C", "--after", "--before", "--context"], unknown_operands=True)
def ag_context_lines(inv, ctx) -> None:
    """ag's -A, -B and -C with a value that is not a plain number, which ag reads as the pattern instead.
    ag gives a word that strtol does not read whole back to its operands
    (`ag -A foo bar` searches bar for foo), so the words would mean other things
    to the checker and to ag; `--after=WORD` does the same with a word that
    is not a number (`ag --after=./x foo` read the next words anew and never ended)."""
    for use in inv.uses("-A", "-B", "-C", "--after", "--before", "--context"):
        if use.value is not None and use.value_word is not None and not _LINES.fullmatch(use.value):
            ctx.deny(AgContextNotNumber(use.name, use.value), use.value_word.span)
            return
