"""Read operands that are not regular files: FIFOs, sockets and devices hang or never end.

A directory the agent explores may hold a committed symlink `README.md ->
/dev/zero`, or a FIFO from an archive: `head -n 5 README.md` then reads
forever or blocks.  With a working directory the engine calls this rule for
every program whose operands are read, and each literal operand is looked up
(through symlinks, bash_policy/repo/files.py) in every directory the segment
may run in.  Recursion into such files (`grep -R`, `find`) cannot be seen
here: the harness's timeout bounds it (docs/threat-model.md).
"""

from __future__ import annotations

import os

from ...repo.files import resolve
from ..codes import Code, Effect
from ..special import on_disk
from . import engine_rule

SPECIAL = engine_rule("special_operand", """Read operands that resolve to a FIFO, socket or device instead of a file.
    Reading one blocks or never ends, and a symlink in the repository can point there.""",
    codes=[Code.BP601], deny=[], allow=["head -n 5 README.md"],
    untestable="needs a directory holding a FIFO or a device symlink: tests/test_special_files.py")


def check_special_operands(positionals, ctx) -> None:
    """Deny each literal operand that resolves to a special file in a directory the
    segment may run in; one that links to /dev/stdin reads standard input.  The
    engine calls it for programs whose operands are read."""
    if ctx.cwd is None:
        return
    for word in positionals:
        if word.value is None or word.value in ("-", "/dev/null"):
            continue
        for directory in sorted(d for d in ctx.directories() if d is not None):
            path = os.path.join(directory, word.value)
            what = on_disk(path)
            if what is None:
                continue
            if what == "stdin":
                ctx.reads_stdin = True
                continue
            real = resolve(path)
            target = f" (it resolves to {real})" if real != os.path.normpath(path) else ""
            ctx.deny(Code.BP601, word.span,
                     f"`{word.text}` is {what}{target}: reading it blocks or never ends",
                     "read a regular file; look at what the name is with `ls -l` or `stat`",
                     Effect.HANG, rule=SPECIAL)
            break
