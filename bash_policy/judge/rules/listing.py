"""man without its pager, shuf that ends, and tools asked only their version.

man shows a page through a pager on a terminal, which waits for keys and can
run commands: a page is read into a pipe or with MANPAGER=cat; its locate
(-w, -W) and search (-k, -f) modes print and exit.  shuf -r
repeats lines forever unless -n bounds it, and -n and -i are bounded.  mypy, eslint, prettier and tsc
work on the whole project when given no arguments.
"""

from __future__ import annotations

import re

from ...read.model import Word
from ...records import dataclass
from .. import later
from ..codes import Code, Effect
from ..problems import Problem
from ..spec import Reason
from . import rule
from .system import SEQ_LIMIT_LINES


@dataclass(frozen=True)
class ManOtherTree(Problem):
    code = Code.BP406
    effect = Effect.EXEC
    message_format = "`man {flag}` makes man format pages from another tree, which groff reads like a program"
    hint_format = "read an installed page: man {page}"
    flag: str
    page: str


@dataclass(frozen=True)
class ManLocalFile(Problem):
    code = Code.BP406
    effect = Effect.EXEC
    message_format = "`man {word.text}` may name a local file, which man formats with groff"
    hint_format = "locate installed pages with `man -k {page}`"
    word: Word
    page: str


@dataclass(frozen=True)
class ManPager(Problem):
    code = Code.BP406
    effect = Effect.INTERACTIVE
    message_format = ("`man` shows the page through a pager when its output is a terminal, which waits "
                      "for keys and can run commands")
    hint_format = "pipe it: `man {page} | head -100`, or prefix MANPAGER=cat; locate it with `man -w {page}`"
    page: str


@dataclass(frozen=True)
class ShufRepeats(Problem):
    code = Code.BP400
    effect = Effect.HANG
    message_format = "`shuf -r` without -n repeats lines forever"
    hint_format = "bound it: shuf -r -n COUNT"


@dataclass(frozen=True)
class ShufTooLong(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`shuf` would print {lines} lines; the plan-mode limit is {limit}"
    hint_format = "print fewer: shuf -n {fewer} ..."
    lines: int
    limit: int = SEQ_LIMIT_LINES
    fewer: int = SEQ_LIMIT_LINES // 1000


@dataclass(frozen=True)
class ShufNotPlain(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`shuf {flag} {value}` is not a plain decimal count or range, so the length of the "
                      "output is unknown")
    hint_format = "write decimal numbers: shuf -n 10, shuf -i 1-100"
    flag: str
    value: str | None


@dataclass(frozen=True)
class WorksOnProject(Problem):
    code = Code.BP406
    message_format = "`{name}` with no arguments works on the project: it {reason.why}"
    hint_format = "only `{name} --version` is allowed"
    name: str
    reason: Reason

    def consequence(self):
        return self.reason.effect


@dataclass(frozen=True)
class OpensBrowser(Problem):
    code = Code.BP406
    message_format = "`{name}` with no arguments {reason.why}"
    hint_format = "only `{name} --version` is allowed"
    name: str
    reason: Reason

    def consequence(self):
        return self.reason.effect


_MAN_EXITS = ("-?", "--usage", "-V")  # man-db prints these as it reads them, and exits
# GNU shuf's counts and ranges: blanks, then decimal digits (xstrtoumax, base 10).
_SHUF_COUNT = re.compile(r"[ \t\n\v\f\r]*\+?(\d+)")
_SHUF_RANGE = re.compile(r"[ \t\n\v\f\r]*\+?(\d+)-[ \t\n\v\f\r]*\+?(\d+)")


@rule("man_mode", codes=[Code.BP406],
      deny=["man ls", "man 2 open", "PAGER=cat man ls", "man ls >&2 | head", "man ./x.1 | head",
            "MANPAGER=cat man -M ./mp ls", "man -w -D ls"],
      allow=["man -k socket", "man -w ls", "man -f printf", "man --help", "man git-log | head -50",
             "MANPAGER=cat man ls", "man 5 crontab | grep -n MAILTO"])
def man_mode(inv, ctx) -> None:
    """man showing a page where its output may be a terminal, or a page that is not installed.
    On a terminal man-db runs a pager, which waits for keys and can run
    commands; into a pipe, or with MANPAGER=cat (which wins over PAGER), it
    formats the page with groff and prints it (man-db 2.11.2 under strace and
    script(1): /usr/bin/pager on a terminal, cat with MANPAGER=cat, col alone
    into a pipe).  Root's man also writes the formatted page to its cache,
    /var/cache/man (bookkeeping).  The page must be an installed one: a name
    with `/` is a local file and -M/-m search other trees, which groff would
    format (a page names its preprocessors, and refer reads the files it
    names).  -w, -W, -k and -f only print, unless a later -D resets them
    (`man -w -D ls` shows the page: the spec's `modes`)."""
    if inv.has(*_MAN_EXITS) or inv.modes():
        return
    page = " ".join(w.text for w in inv.positionals if not w.text.startswith("-")) or "PAGE"
    for use in inv.uses("-M", "-m"):
        ctx.deny(ManOtherTree(use.name, page), use.word.span)
    for word in inv.positionals:
        if word.value is None or "/" in word.value:
            ctx.deny(ManLocalFile(word, page), word.span)
    if ctx.assignments.get("MANPAGER") == "cat" or later.writes_to_pipe(ctx.body, ctx.command):
        return
    ctx.deny(ManPager(page), inv.words[0].span)


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
        ctx.deny(ShufRepeats(), use.word.span)
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
        ctx.deny(ShufTooLong(lines), holder.word.span)


def _shuf_number(use, ctx) -> int | None:
    """The count of `-n COUNT`, or the size of `-i LO-HI`; None after denying."""
    match = (_SHUF_RANGE if "-i" in use.flag.names else _SHUF_COUNT).fullmatch(use.value or "")
    if match is None:
        ctx.deny(ShufNotPlain(use.name, use.value), use.word.span)
        return None
    if "-i" in use.flag.names:
        return max(0, int(match[2]) - int(match[1]) + 1)
    return int(match[1])


@rule("version_only", codes=[Code.BP406], deny=["mypy", "tsc", "eslint", "info"],
      allow=["mypy --version", "tsc -v"])
def version_only(inv, ctx) -> None:
    """A checker or compiler run with no arguments, which works on the whole project.
    Bare mypy checks the files its config names, bare eslint lints `.`, bare tsc compiles;
    bare info opens its browser on the terminal."""
    if len(inv.words) == 1:
        reason = inv.spec.positionals.over_max
        kind = OpensBrowser if reason.effect is Effect.INTERACTIVE else WorksOnProject
        ctx.deny(kind(inv.spec.display, reason), inv.words[0].span)
