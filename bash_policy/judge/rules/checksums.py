"""md5sum -c and its kin: the files a checksum list names, looked at like operands.

`md5sum -c LIST` (and sha*sum, b2sum, cksum: coreutils 9.1) opens every file
LIST names, relative to the working directory; a name that is a FIFO or
/dev/zero never ends, and `-` reads standard input.  With a working directory
the list is a file the checker can read: each name in it is judged as an
operand would be.  A list read from standard input, one the checker cannot
read, or names in a directory it does not know, deny.
"""

from __future__ import annotations

import os
import re

from ...read.model import Word
from ...records import dataclass
from ...repo.files import Unreadable, read_text
from ..codes import Code, Effect
from ..problems import Problem
from ..special import on_disk
from . import rule

# GNU lines: [\]HASH, one blank, then [ *]NAME (or NAME right after one blank:
# coreutils' "reversed BSD" form); BSD tag lines: ALGO[-BITS] (NAME) = HASH.
_GNU = re.compile(r"[ \t]*(\\?)[0-9A-Za-z+/=]+[ \t](.*)")
_TAG = re.compile(r"[ \t]*(\\?)[A-Za-z0-9-]+ ?\((.*)\) ?= ?[0-9A-Za-z+/=]*")


@dataclass(frozen=True)
class ChecksumListUnseen(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`{program} -c` opens every file the checksum list names, and {why}, so the names "
                      "cannot be looked at (a name such as /dev/zero never ends)")
    hint_format = "check a list file in the working directory: {program} -c SUMS"
    program: str
    why: str


@dataclass(frozen=True)
class ChecksumListNamesSpecial(Problem):
    code = Code.BP603
    effect = Effect.HANG
    message_format = "`{list}` names `{name}`, which is {what}: `{program} -c` would read it"
    hint_format = "check a list that names regular files only"
    program: str
    list: str
    name: str
    what: str


@rule("checksum_list", codes=[Code.BP406, Code.BP603],
      deny=["md5sum -c", "sha256sum -c -", "sha256sum --check SUMS"],
      allow=["md5sum a.txt", "sha256sum -b README.md"], unknown_operands=True)
def checksum_list(inv, ctx) -> None:
    """md5sum and its kin checking a list whose names cannot be looked at, or name a FIFO, device or `-`.
    The list names the files to open; read from a file in a known directory,
    each name is judged as an operand would be."""
    if not inv.has("-c"):
        return
    program = inv.spec.display
    lists = inv.positionals
    if not lists or any(w.value in (None, "-") for w in lists):
        ctx.deny(ChecksumListUnseen(program, "the list comes from standard input or a word computed at run "
                                             "time"), inv.words[0].span)
        return
    directories = sorted(d for d in ctx.directories() if d is not None)
    if not directories:
        ctx.deny(ChecksumListUnseen(program, "no working directory is known"), inv.words[0].span)
        return
    for directory in directories:
        for word in lists:
            if _judge_list(ctx, program, word, directory):
                return


def _judge_list(ctx, program: str, word: Word, directory: str) -> bool:
    path = os.path.join(directory, word.value or "")
    if on_disk(path) is not None:
        return False   # a special list is the operand rule's to deny
    try:
        text = read_text(path)
    except Unreadable as error:
        ctx.deny(ChecksumListUnseen(program, f"{error}"), word.span)
        return True
    if text is None:
        return False   # md5sum reports the missing list and opens nothing
    for line in text.split("\n"):
        for name in _names(line):
            if name == "-":
                ctx.deny(ChecksumListNamesSpecial(program, word.text, name, "standard input"), word.span)
                return True
            what = on_disk(os.path.join(directory, name))
            if what is not None:
                ctx.deny(ChecksumListNamesSpecial(program, word.text, name, what), word.span)
                return True
    return False


def _names(line: str) -> set[str]:
    """Every name coreutils may read from `line` (more rather than fewer)."""
    found: set[str] = set()
    if "\0" in line:   # `HASH  ff\0...` opened ff (tried): also read the line cut at the NUL
        found |= _names(line.split("\0", 1)[0])
    # coreutils drops one CR before the newline (red team RT-E: `HASH  ff\r` opened ff);
    # the line as it is stays too, more rather than fewer.
    spellings = (line, line[:-1]) if line.endswith("\r") else (line,)
    matches = (pattern.fullmatch(text) for pattern in (_GNU, _TAG) for text in spellings)
    for match in matches:
        if match is None:
            continue
        rest = match[2]
        for name in (rest, rest[1:] if rest[:1] in (" ", "*", "\t") else rest, rest.lstrip(" *\t")):
            name = name.split("\0", 1)[0]   # coreutils reads the name as a C string
            if name:
                found.add(name)
                if match[1] and (plain := _unescaped(name)) is not None:
                    found.add(plain)
    return found


def _unescaped(name: str) -> str | None:
    r"""A name as coreutils decodes it from an escaped line, left to right:
    `\\` a backslash, `\n` a newline, `\r` a carriage return (red team RT-D:
    the name `a\\\\nb` is `a\\nb`); another escape makes the line invalid (None)."""
    out, i = [], 0
    while i < len(name):
        if name[i] != "\\":
            out.append(name[i])
            i += 1
            continue
        plain = {"\\": "\\", "n": "\n", "r": "\r"}.get(name[i + 1:i + 2])
        if plain is None:
            return None
        out.append(plain)
        i += 2
    return "".join(out)
