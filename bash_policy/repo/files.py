"""Reading repository files without trusting what kind of file they are.

A directory the agent explores may hold FIFOs, sockets and symlinks to
devices (a committed `README.md -> /dev/zero`, a `.git/config` that is a
FIFO).  Opening a FIFO for reading blocks until a writer comes, and a device
may never end, so both the checker's own reads and the programs it allows
would hang.  `special_file` tells whether a path is one of those;
`read_text` reads a config file the way a program would, but refuses
anything that is not a regular file instead of hanging.
"""

from __future__ import annotations

import os
import stat

# A config file larger than this is not something a person wrote; reading it
# would only make the check slow.
MAX_CONFIG_BYTES = 1 << 20

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class Unreadable(ValueError):
    """A file git or npm would read that the checker cannot judge: the message says why."""


# Links under these directories stand for the opening process's own files
# (/dev/stdin -> /proc/self/fd/0): following them would judge the checker's.
_KERNEL_DIRS = ("/dev", "/proc", "/sys")
_MAX_LINKS = 40  # Linux's limit; more fails with ELOOP and opens nothing


def resolve(path: str) -> str:
    """The absolute `path` with symlinks followed as the kernel does, except
    that nothing under /dev, /proc or /sys is followed: the rest is joined
    lexically, for the caller to judge by name (judge/special.py)."""
    pending = [part for part in path.split("/") if part]
    current, links = "/", 0
    while pending:
        if any(current == d or current.startswith(d + "/") for d in _KERNEL_DIRS):
            return os.path.normpath(os.path.join(current, *pending))
        part = pending.pop(0)
        if part in (".", ".."):
            current = current if part == "." else os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        try:
            target = os.readlink(candidate)
        except (OSError, ValueError):
            current = candidate  # not a link, or missing: the open goes no further
            continue
        links += 1
        if links > _MAX_LINKS:
            return candidate
        if target.startswith("/"):
            current = "/"
        pending[:0] = [p for p in target.split("/") if p]
    return current


def physical(path: str) -> str:
    """os.path.realpath as the command's own process would resolve `path`.

    Links under /proc and /dev stand for the opening process's files
    (`/proc/self/cwd` is its working directory): resolved in the checker,
    they name the checker's.  A path that leads there raises Unreadable, so
    the caller fails closed (red team RT2: `git -C /proc/self/cwd/sub status`
    judged the checker's directory, not the repository git used)."""
    real = resolve(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))  # `..` after links
    if any(real == d or real.startswith(d + "/") for d in _KERNEL_DIRS):
        raise Unreadable(f"{path} leads to {real}, whose meaning depends on the process that opens it")
    return real


def special_file(path: str) -> str | None:
    """What `path` is when it resolves (through symlinks) to something other
    than a regular file or a directory: "a FIFO (named pipe)", "a character
    device"...; None for regular files, directories and missing paths.  A
    path leading under /dev, /proc or /sys is special whatever the checker
    finds there: `/proc/self/cwd/x` is the opening process's file (red team
    RT3: `core.excludesFile = /proc/self/cwd/fifo` blocked git)."""
    try:
        real = physical(path)
        mode = os.stat(real).st_mode
    except Unreadable:
        return "a path under /dev, /proc or /sys, which names the opening process's own files or a device"
    except (OSError, ValueError):
        return None
    return next((what for test, what in _KINDS if test(mode)), None)


def read_text(path: str, limit: int = MAX_CONFIG_BYTES) -> str | None:
    """The text of the regular file at `path`, or None when nothing is there.

    Raises Unreadable for a special file, a directory, a file over `limit`
    bytes or a read error: the caller fails closed.  The file is opened
    non-blocking and checked again after opening, so a FIFO swapped in
    between cannot block the checker.
    """
    try:
        before = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise Unreadable(f"{path}: {error.strerror}") from None
    what = special_file(path)
    if what is not None:
        raise Unreadable(f"{path} is {what}")
    if stat.S_ISDIR(before.st_mode):
        raise Unreadable(f"{path} is a directory")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise Unreadable(f"{path}: {error.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise Unreadable(f"{path} changed into something other than a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise Unreadable(f"{path} is larger than {limit} bytes")
    return data.decode("utf-8", errors="surrogateescape")
