"""grep -R: the FIFOs and devices it meets while it recurses.

GNU grep 3.8 skips devices, FIFOs and sockets it finds while recursing with
-r, but with -R (--dereference-recursive), which follows links, it opens
them: a FIFO anywhere in the tree, or a link to /dev/zero, never ends
(tried: `grep -R x D` with a FIFO in D waited; `grep -r x D` and
`grep -R -D skip x D` printed the matches and ended; red team RT-G).
"""

from __future__ import annotations

from ...read.model import Span
from ...records import dataclass
from ..codes import Code, Effect
from ..problems import Problem
from ..verdict import UNSAFE, Edit, Fix
from . import rule


@dataclass(frozen=True)
class RecursionOpensFifos(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`{program} {flag}` opens every FIFO and device it meets while it recurses (and follows "
                      "links to them); one in the tree never ends")
    hint_format = "recurse with -r, which skips them, or add -D skip"
    program: str
    flag: str


@rule("grep_dereference_recursive", codes=[Code.BP406],
      deny=["grep -R foo .", "grep -Rn TODO src", "grep --dereference-recursive foo src", "egrep -R 'a|b' ."],
      allow=["grep -rn foo .", "grep -R -D skip foo .", "grep -Rn --devices=skip TODO src"],
      reads=["-R", "-D"], unknown_operands=True)
def grep_dereference_recursive(inv, ctx) -> None:
    """grep -R without -D skip: it opens the FIFOs and devices it meets in the tree.
    -r skips them; -R, which follows links, reads them unless -D skip."""
    recursive = inv.uses("-R")
    if recursive and not inv.has("-D"):
        flag = recursive[0].word.span
        # Unsafe as ruff means it: the argv changes (every regular file is read as before).
        fix = Fix((Edit(Span(flag.start, flag.start), "-D skip "),), UNSAFE)
        ctx.deny(RecursionOpensFifos(inv.spec.display, recursive[0].name, fix=fix), flag)
