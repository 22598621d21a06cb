"""find: the starting points must all precede the expression.

The engine has checked every primary against the spec; what is left is the
order.  After the first expression word (a primary, `!`, `(`, `)` or `,`)
every operand must be an operator word: anything else is a stray operand
that find itself rejects ("paths must precede expression"), or a value the
checker has not paired with its primary, so it is denied.
"""

from __future__ import annotations

from ...read.model import Word
from ...records import dataclass
from ..codes import Code
from ..problems import Problem
from . import rule
from .script import already_denied


@dataclass(frozen=True)
class OperandAfterExpression(Problem):
    code = Code.BP406
    message_format = "`{word.text}` follows the expression; find reads only the first words as starting points"
    hint_format = "put the starting points before the expression, and quote patterns (`find src -name '*.py'`)"
    word: Word

_OPERATORS = {"!", "(", ")", ","}
_LEADING = {"-H", "-L", "-P", "-D", "-O0", "-O1", "-O2", "-O3"}


@rule("find_expression", codes=[Code.BP406],
      deny=["find . -name x stray"], allow=["find src -name '*.py' -type f"])
def check(inv, ctx) -> None:
    """find operands that follow the expression.
    find reads only the first words as starting points; a later operand is one
    it rejects, or a value the checker has not paired with its primary."""
    if already_denied(inv, ctx):
        return
    index = {id(w): k for k, w in enumerate(inv.words)}
    starts = [use.index for use in inv.flags if use.word.value not in _LEADING]
    starts += [index[id(w)] for w in inv.positionals if w.value in _OPERATORS]
    if not starts:
        return
    first = min(starts)
    for word in inv.positionals:
        if index[id(word)] > first and word.value not in _OPERATORS:
            ctx.deny(OperandAfterExpression(word), word.span)
            return
