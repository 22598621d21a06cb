"""Devices and kernel files, which a read-only command must not read.

Reading one may never end (`/dev/zero`, `/dev/tty`, `/proc/kmsg`,
`/proc/self/pagemap`) or reach another file (`/proc/self/root/dev/zero`).
Under /dev, /proc and /sys only the files listed below may be read; the
engine applies this to operands that may be files and to flags whose value
names a file to read (`reads = true` in a spec).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator

from ..read.model import Word

_SPECIAL_DIRS = ("/dev", "/proc", "/sys")
# /dev/stdout and /dev/stderr are not here: read, they read the terminal when
# the harness gives the command one.  Compiled on first use (re keeps it): most
# checks name no such path, and compiling took a third of a millisecond.
_READABLE_SPECIAL = (
    r"/dev/(?:null|stdin)"
    r"|/proc/(?:cpuinfo|meminfo|version|uptime|loadavg|stat|filesystems|partitions|swaps"
    r"|cgroups|diskstats|mounts|devices|vmstat|cmdline)"
    r"|/proc/(?:self|thread-self|[0-9]+)/(?:status|stat|statm|cmdline|comm|limits|maps|mounts"
    r"|mountinfo|cgroup|io)"
    r"|/sys/fs/cgroup/[^/]+(?:/[^/]+)*")  # small text attributes (memory.max, cpu.max)


# The names of the command's standard input.  /dev/fd/0 and /proc/self/fd/0
# are not readable at all (above), so only this one needs naming.
STDIN = "/dev/stdin"


def _absolute(path: str, cwd: str | None) -> str | None:
    """`path` made absolute and normalised lexically (against `cwd` when
    known).  Without `cwd`, a relative path that climbs with `..` may climb
    to `/`, so it is judged from there; other relative paths give None."""
    if path.startswith("/"):
        full = "/" + path.lstrip("/")
    elif cwd is not None:
        full = posixpath.join(cwd, path)
    else:
        parts = posixpath.normpath(path).split("/")
        if parts[0] != "..":
            return None
        full = "/" + "/".join(p for p in parts if p != "..")
    return "/" + posixpath.normpath(full).lstrip("/")


def special_file(path: str, cwd: str | None) -> bool:
    """Whether reading `path` may read a device or kernel file: its lexical
    absolute form is under /dev, /proc or /sys and not listed as readable."""
    full = _absolute(path, cwd)
    if full is None or not any(full == d or full.startswith(d + "/") for d in _SPECIAL_DIRS):
        return False
    return re.fullmatch(_READABLE_SPECIAL, full) is None


def special_in(path: str, directories: Iterable[str | None]) -> bool:
    """`special_file` for a command that may run in any of `directories`
    (flow.py gives the physical ones; None: one the checker cannot know):
    `cd /dev && cat zero` reads /dev/zero (issue 18, class 3).  Links are
    followed by `on_disk`, which the callers ask too."""
    return any(special_file(path, directory) for directory in directories)


def stdin_in(path: str, directories: Iterable[str | None]) -> bool:
    """`names_stdin` for a command that may run in any of `directories`."""
    return any(names_stdin(path, directory) for directory in directories)


def special_operand_in(word: Word, directories: Iterable[str | None]) -> bool:
    """`special_operand` for a command that may run in any of `directories`."""
    if word.value is None:
        return may_expand_to_special(word)
    return word.value != "-" and special_in(word.value, directories)


def names_stdin(path: str, cwd: str | None) -> bool:
    """Whether `path` names standard input by its name (`/dev/stdin`,
    `../../dev/stdin`); `-` is the program's to interpret."""
    return _absolute(path, cwd) == STDIN


def on_disk(path: str) -> str | None:
    """With a working directory, what the file at absolute `path` really is,
    when reading it does not just read a file: "stdin" (a symlink to
    /dev/stdin), or a description of a device, FIFO, socket or kernel file.
    Links are followed up to /dev, /proc and /sys (repo/files.py), so the
    answer does not depend on the checker's own standard input."""
    return next(on_disk_each("/", (path,)))[1]


def on_disk_each(directory: str, names: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """(name, on_disk(directory/name)) for each name, following the absolute
    `directory` once."""
    from ..repo.files import resolve_each, special_resolved

    for name, real, complete in resolve_each(directory, names):
        if real == STDIN:
            yield name, "stdin"
        elif special_file(real, None):
            yield name, f"a device or kernel file ({real})"
        elif any(real == d or real.startswith(d + "/") for d in _SPECIAL_DIRS):
            yield name, None  # a readable kernel file such as /dev/null or /proc/cpuinfo
        else:
            yield name, special_resolved(real, complete)


def may_expand_to_special(word: Word) -> bool:
    """Whether a glob or `~` word may expand to a special file: its literal
    prefix leaves the first directory open (`/[d]ev/zero`), names a special
    directory, or the word climbs with `..` (`~/../../dev/zero`)."""
    if "/.." in word.text or word.text.startswith(".."):
        return True
    prefix = word.prefix
    if not prefix.startswith("/"):
        return False
    first, slash, _ = prefix.lstrip("/").partition("/")
    return not slash or "/" + first in _SPECIAL_DIRS


def special_operand(word: Word, cwd: str | None) -> bool:
    """Whether an operand that may be a file is, or may expand to, a special file."""
    if word.value is None:
        return may_expand_to_special(word)
    return word.value != "-" and special_file(word.value, cwd)
