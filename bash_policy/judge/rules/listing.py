"""man without its pager, shuf that ends, tools asked only their version, and
binutils response files (`@FILE`).

man shows a page through a pager, which waits for keys and can run commands;
only its locate (-w, -W) and search (-k, -f) modes print and exit.  shuf -r
repeats lines forever unless -n bounds it.  mypy, eslint, prettier and tsc
work on the whole project when given no arguments.  strings, readelf and size
read options and file names from any argument `@FILE`.
"""

from __future__ import annotations

from ..codes import Code, Effect
from . import rule

_MAN_MODES = ("-w", "-W", "-k", "-f", "-?", "--usage", "-V")


@rule("man_mode", codes=[Code.BP406], deny=["man ls", "man 2 open"],
      allow=["man -k socket", "man -w ls", "man -f printf", "man --help"])
def man_mode(inv, ctx) -> None:
    """man showing a page, which opens a pager.
    Pagers wait for keys and can run commands; -w, -W, -k and -f only print."""
    if inv.has(*_MAN_MODES):
        return
    page = " ".join(w.text for w in inv.positionals) or "PAGE"
    ctx.deny(Code.BP406, inv.words[0].span,
             "`man` shows the page through a pager, which waits for keys and can run commands",
             f"locate it with `man -w {page}` or search with `man -k {page}`; read "
             "`PROGRAM --help | head -50` for the options", Effect.INTERACTIVE)


@rule("shuf_repeat", codes=[Code.BP400], deny=["shuf -r -e a b", "shuf -ri 1-6"],
      allow=["shuf -rn 3 -e a b", "shuf -n 2 f"])
def shuf_repeat(inv, ctx) -> None:
    """shuf -r without -n, which prints lines forever.
    Repeating samples never run out; -n bounds the output."""
    if inv.has("-r") and not inv.has("-n"):
        use = inv.uses("-r")[0]
        ctx.deny(Code.BP400, use.word.span, "`shuf -r` without -n repeats lines forever",
                 "bound it: shuf -r -n COUNT", Effect.HANG)


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


@rule("response_file", codes=[Code.BP406], deny=["strings @args", "readelf @list", "size *"],
      allow=["strings -n 8 data.bin", "readelf -h /bin/ls", "size src/*.o", "strings ~/x"])
def response_file(inv, ctx) -> None:
    """A binutils argument that is or may become `@FILE`: the program reads options and
    file names from FILE, even after `--`.  The checker cannot see them: a FIFO or a
    listed /dev/zero never ends, a listed /dev/stdin reads the script."""
    for word in inv.words[1:]:
        if word.value is not None:
            risky = word.value.startswith("@")
        else:  # a glob or `~`: only a literal prefix or a tilde fixes how it starts
            risky = not (word.text.startswith("~")
                         or (word.prefix and not word.prefix.startswith("@")))
        if risky:
            ctx.deny(Code.BP406, word.span,
                     f"`{inv.spec.display}` reads options and file names from a word starting "
                     f"with `@`, and `{word.text}` is or may become one",
                     "name the files literally, or with a glob that starts with a directory "
                     "(`./*.o`)", Effect.HANG)
            return
