"""diff of a file and a directory: the file of the same name in the directory.

GNU diffutils 3.8 compares FILE with DIR/FILE when one operand is a
directory (`diff f1 dp`, `diff dp f1`, `--to-file=DIR F`): it opens dp/f1,
which no operand names, and a FIFO there blocked (red team RT-I).
"""

from __future__ import annotations

import os

from ...records import dataclass
from ..codes import Code, Effect
from ..problems import Problem
from ..special import on_disk
from . import rule
from .files import SPECIAL


@dataclass(frozen=True)
class MemberOfDirectory(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = SPECIAL
    message_format = ("`{program}` compares `{file}` with `{member}`, the file of that name in the directory, "
                      "which is {what}: reading it blocks or never ends")
    hint_format = "name the two files to compare"
    program: str
    file: str
    member: str
    what: str


@rule("diff_directory_member", codes=[Code.BP603],
      deny=[], allow=["diff a.txt b.txt", "diff -u old/ new/", "diff --to-file=b.txt a.txt"],
      untestable="needs a FIFO in a directory, made at test time (tests/test_special_files.py)",
      reads=["--from-file", "--to-file"], unknown_operands=True)
def diff_directory_member(inv, ctx) -> None:
    """diff of a file and a directory, which opens the file of the same name in the directory.
    GNU diffutils 3.8: `diff f1 dp` (and `diff dp f1`, `--to-file=DIR F`) opens
    dp/f1, which no operand names; a FIFO there blocked (red team RT-I)."""
    names = [w.value for w in inv.positionals] + [use.value for use in inv.uses("--from-file", "--to-file")]
    known = [n for n in names if n is not None and n != "-"]
    for directory in sorted(d for d in ctx.directories() if d is not None):
        folders = [n for n in known if os.path.isdir(os.path.join(directory, n))]
        files = [n for n in known if n not in folders]
        for folder in folders:
            for name in files:
                member = os.path.join(folder, os.path.basename(name.rstrip("/")))
                what = on_disk(os.path.join(directory, member))
                if what is not None and what != "stdin":
                    ctx.deny(MemberOfDirectory(inv.spec.display, name, member, what), inv.words[0].span)
                    return
