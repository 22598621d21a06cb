"""tail's obsolete first-operand option: `tail +5f FILE` follows like `-f`.

GNU tail reads a first argument of the form `+N[bcl][f]` as an option when at
most one file follows (tail.c, parse_obsolete_option), so an operand can turn
on follow mode, which never ends.
"""

from __future__ import annotations

import re

from ..codes import Code, Effect
from . import rule

_OBSOLETE_FOLLOW = re.compile(r"\+[0-9]*[bcl]?f")


@rule("tail_obsolete_follow", codes=[Code.BP406],
      deny=["tail +5f app.log"], allow=["tail -n +5 app.log"])
def tail_obsolete_follow(inv, ctx) -> None:
    """tail's obsolete `+Nf` first operand, which follows the file forever.
    GNU tail reads `+N[bcl][f]` as an option when at most one file follows."""
    if len(inv.words) < 2:
        return
    first = inv.words[1]
    if first.value is None:
        risky = first.text.startswith("+")  # a glob here could expand to `+5f`
    else:
        risky = bool(_OBSOLETE_FOLLOW.fullmatch(first.value))
    if risky:
        ctx.deny(Code.BP406, first.span,
                 f"`tail {first.text}` is the obsolete form of `tail -f`: it keeps waiting for the "
                 "file to grow and never ends",
                 "read the end once: tail -n +5 FILE (or tail -n 50 FILE)", Effect.HANG)
