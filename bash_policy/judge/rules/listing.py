"""man without its pager, shuf that ends, and tools asked only their version.

man shows a page through a pager, which waits for keys and can run commands;
only its locate (-w, -W) and search (-k, -f) modes print and exit.  shuf -r
repeats lines forever unless -n bounds it, and -n and -i are bounded.  mypy, eslint, prettier and tsc
work on the whole project when given no arguments.
"""

from __future__ import annotations

import re

from ..codes import Code, Effect
from . import rule
from .system import SEQ_LIMIT_LINES

_MAN_EXITS = ("-?", "--usage", "-V")  # man-db prints these as it reads them, and exits
# GNU shuf's counts and ranges: blanks, then decimal digits (xstrtoumax, base 10).
_SHUF_COUNT = re.compile(r"[ \t\n\v\f\r]*\+?(\d+)")
_SHUF_RANGE = re.compile(r"[ \t\n\v\f\r]*\+?(\d+)-[ \t\n\v\f\r]*\+?(\d+)")


@rule("man_mode", codes=[Code.BP406], deny=["man ls", "man 2 open", "man -w -D ls"],
      allow=["man -k socket", "man -w ls", "man -f printf", "man --help"])
def man_mode(inv, ctx) -> None:
    """man showing a page, which opens a pager.
    Pagers wait for keys and can run commands; the modes -w, -W, -k and -f
    only print, unless a later -D resets them (`man -w -D ls` shows the page:
    the spec's `modes`)."""
    if inv.has(*_MAN_EXITS) or inv.modes():
        return
    page = " ".join(w.text for w in inv.positionals if not w.text.startswith("-")) or "PAGE"
    ctx.deny(Code.BP406, inv.words[0].span,
             "`man` shows the page through a pager, which waits for keys and can run commands",
             f"locate it with `man -w {page}` or search with `man -k {page}`; read "
             "`PROGRAM --help | head -50` for the options", Effect.INTERACTIVE)


@rule("shuf_bounded", codes=[Code.BP400, Code.BP406],
      deny=["shuf -r -e a b", "shuf -ri 1-6", "shuf -rn 99999999999 -e a", "shuf -i 1-1000000000000",
            "shuf -rn 1e3 -e a"],
      allow=["shuf -rn 3 -e a b", "shuf -n 2 f", "shuf -i 1-1000000000000 -n 5", "shuf -i 1-100"])
def shuf_bounded(inv, ctx) -> None:
    """shuf -r without -n, which prints lines forever, and outputs longer than the plan-mode limit.
    Repeating samples never run out, so -n bounds the output; `-i LO-HI`
    prints the whole range unless -n is smaller.  GNU shuf reads counts and
    bounds as plain decimals (coreutils 9.1, tried: `1e3`, `5K` and `0x10`
    are refused); anything else is denied, and at most SEQ_LIMIT_LINES."""
    if inv.has("-r") and not inv.has("-n"):
        use = inv.uses("-r")[0]
        ctx.deny(Code.BP400, use.word.span, "`shuf -r` without -n repeats lines forever",
                 "bound it: shuf -r -n COUNT", Effect.HANG)
        return
    read = [_shuf_number(use, ctx) for use in inv.uses("-n", "-i")]
    if None in read:
        return
    counts = [n for n, use in zip(read, inv.uses("-n", "-i")) if n is not None and "-n" in use.flag.names]
    ranges = [n for n, use in zip(read, inv.uses("-n", "-i")) if n is not None and "-i" in use.flag.names]
    if inv.has("-r"):
        lines = max(counts)
    elif ranges:
        lines = min([max(ranges)] + counts)
    else:
        return  # at most the input's lines
    if lines is not None and lines > SEQ_LIMIT_LINES:
        holder = (inv.uses("-n") or inv.uses("-i"))[-1]
        ctx.deny(Code.BP406, holder.word.span, f"`shuf` would print {lines} lines; the plan-mode limit "
                 f"is {SEQ_LIMIT_LINES}", f"print fewer: shuf -n {SEQ_LIMIT_LINES // 1000} ...", Effect.HANG)


def _shuf_number(use, ctx) -> int | None:
    """The count of `-n COUNT`, or the size of `-i LO-HI`; None after denying."""
    match = (_SHUF_RANGE if "-i" in use.flag.names else _SHUF_COUNT).fullmatch(use.value or "")
    if match is None:
        ctx.deny(Code.BP406, use.word.span, f"`shuf {use.name} {use.value}` is not a plain decimal "
                 "count or range, so the length of the output is unknown",
                 "write decimal numbers: shuf -n 10, shuf -i 1-100", Effect.HANG)
        return None
    if "-i" in use.flag.names:
        return max(0, int(match[2]) - int(match[1]) + 1)
    return int(match[1])


@rule("version_only", codes=[Code.BP406], deny=["mypy", "tsc", "eslint"],
      allow=["mypy --version", "tsc -v"])
def version_only(inv, ctx) -> None:
    """A checker or compiler run with no arguments, which works on the whole project.
    Bare mypy checks the files its config names, bare eslint lints `.`, bare tsc compiles."""
    if len(inv.words) == 1:
        name, reason = inv.spec.display, inv.spec.positionals.over_max
        ctx.deny(Code.BP406, inv.words[0].span,
                 f"`{name}` with no arguments works on the project: it {reason.why}",
                 f"only `{name} --version` is allowed", reason.effect)
