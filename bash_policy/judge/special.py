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

from ..read.model import Word

_SPECIAL_DIRS = ("/dev", "/proc", "/sys")
_READABLE_SPECIAL = re.compile(
    r"/dev/(?:null|stdin|stdout|stderr)"
    r"|/proc/(?:cpuinfo|meminfo|version|uptime|loadavg|stat|filesystems|partitions|swaps"
    r"|cgroups|diskstats|mounts|devices|vmstat|cmdline)"
    r"|/proc/(?:self|thread-self|[0-9]+)/(?:status|stat|statm|cmdline|comm|limits|maps|mounts"
    r"|mountinfo|cgroup|io)"
    r"|/sys/fs/cgroup/[^/]+(?:/[^/]+)*")  # small text attributes (memory.max, cpu.max)


def special_file(path: str, cwd: str | None) -> bool:
    """Whether reading `path` may read a device or kernel file: its lexical
    absolute form (against `cwd` when known) is under /dev, /proc or /sys and
    not listed as readable.  Without `cwd`, a relative path that climbs with
    `..` may climb to `/`, so it is judged from there."""
    if path.startswith("/"):
        full = "/" + path.lstrip("/")
    elif cwd is not None:
        full = posixpath.join(cwd, path)
    else:
        parts = posixpath.normpath(path).split("/")
        if parts[0] != "..":
            return False
        full = "/" + "/".join(p for p in parts if p != "..")
    full = "/" + posixpath.normpath(full).lstrip("/")
    if not any(full == d or full.startswith(d + "/") for d in _SPECIAL_DIRS):
        return False
    return _READABLE_SPECIAL.fullmatch(full) is None


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
