"""nm, objdump and size: archives whose members are other files.

A GNU thin archive (`ar rcT`, magic `!<thin>`) holds only the names of its
members; BFD (binutils 2.40) opens each named file to read it, with no check
of what it is: a member linked to a FIFO blocked nm, objdump and size (red
team RT4), and a thin archive stored as a member of an ordinary archive is
followed by objdump and size the same way (tried).  readelf checks that a
member is a regular file first, and strings reads the archive's bytes.
Without operands each reads `a.out`.
"""

from __future__ import annotations

import os
import stat

from ...read.model import Word
from ...records import dataclass
from ...repo.files import physical, special_file
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .files import TooManyMatches, _in_directory, glob_matches

_ARCH = b"!<arch>\n"
_THIN = b"!<thin>\n"
_HEADER = 60
_MAX_MEMBERS = 100_000


@dataclass(frozen=True)
class ThinArchive(Problem):
    code = Code.BP603
    effect = Effect.HANG
    message_format = ("`{name}` is {what}: `{program}` opens the files it names as members, which may "
                      "be FIFOs or devices the command does not show")
    hint_format = "name the member object files themselves"
    name: str
    what: str
    program: str


@dataclass(frozen=True)
class DefaultInputSpecial(Problem):
    code = Code.BP603
    effect = Effect.HANG
    message_format = "`{program}` without operands reads a.out, which here is {what}"
    hint_format = "name the object file to read"
    program: str
    what: str


@rule("binutils_archives", codes=[Code.BP603], deny=[], allow=["nm /bin/ls", "objdump -h /bin/true"],
      untestable="needs a directory holding a thin archive: tests/test_special_files.py")
def binutils_archives(inv, ctx) -> None:
    """nm, objdump and size on a thin archive, or an archive holding one, whose members are other files.
    BFD opens each file a thin archive names, with no check of what it is: a
    member linked to a FIFO blocked them (red team RT4); an ordinary archive
    with a thin one inside is followed by objdump and size.  Without operands
    each reads a.out, which must be a regular file like any operand."""
    program = inv.spec.path[0]
    directories = sorted(d for d in ctx.directories() if d is not None)
    if not inv.positionals:
        for directory in directories:
            what = special_file(os.path.join(directory, "a.out"))
            if what is not None:
                ctx.deny(DefaultInputSpecial(program, what), inv.words[0].span)
                return
        words = [Word("a.out", inv.words[0].span, "a.out")]
    else:
        words = inv.positionals
    for word in words:
        absolute = word.value is not None and word.value.startswith("/")
        for directory in (["/"] if absolute else directories):
            seen = _in_directory(word, directory)
            if seen is None:
                continue
            paths = (glob_matches(directory, seen.text) if seen.value is None
                     else [os.path.join(directory, seen.value)])
            if paths is None:
                ctx.deny(TooManyMatches(word), word.span)
                return
            for path in paths:
                what = _archive_problem(path)
                if what is not None:
                    name = word.text if seen.value is not None else os.path.relpath(path, directory)
                    ctx.deny(ThinArchive(name, what, program), word.span)
                    return


def _archive_problem(path: str) -> str | None:
    """What makes the archive at `path` open other files, or None."""
    try:
        real = physical(path)
        if not stat.S_ISREG(os.stat(real).st_mode):
            return None  # a special file is the operand rule's; a directory is refused
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "something other than a regular file"
        magic = fh.read(8)
        if magic == _THIN:
            return "a thin archive"
        if magic != _ARCH:
            return None
        return _nested(fh, 8, os.fstat(fd).st_size, depth=0)


def _nested(fh, offset: int, end: int, depth: int) -> str | None:
    """Walk an ordinary archive's members from `offset` to `end`: a member that
    is a thin archive (or an archive holding one, or too deep or too many to
    read) makes the archive open other files."""
    for _ in range(_MAX_MEMBERS):
        if offset + _HEADER > end:
            return None
        fh.seek(offset)
        header = fh.read(_HEADER)
        if len(header) < _HEADER or header[58:60] != b"`\n":
            return None  # not an archive BFD reads further
        field = header[48:58].strip(b" ")
        if not field.isdigit():
            # BFD reads the number's leading digits and goes on (red team RT-D:
            # `1096x`); a header the checker does not read as BFD does is denied.
            return "an archive member header the checker cannot read"
        size = int(field)
        name = header[:16].rstrip(b" ")
        data = offset + _HEADER
        if name.startswith(b"#1/"):  # BSD: the name is the start of the data
            if not name[3:].isdigit():
                return "an archive member header the checker cannot read"
            data += int(name[3:])
        fh.seek(data)
        magic = fh.read(8)
        if magic == _THIN:
            return "an archive holding a thin archive"
        if magic == _ARCH:
            if depth >= 2:
                return "an archive nested too deep to look through"
            inner = _nested(fh, data + 8, min(offset + _HEADER + size, end), depth + 1)
            if inner is not None:
                return inner
        offset += _HEADER + size + (size & 1)
    return "an archive with too many members to look through"
