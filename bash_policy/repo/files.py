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
from collections.abc import Iterable, Iterator
from contextvars import ContextVar, Token

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
_KERNEL_PREFIXES = tuple(d + "/" for d in _KERNEL_DIRS)
_MAX_LINKS = 40  # Linux's limit; more fails with ELOOP and opens nothing
_KERNEL_FILE = "a path under /dev, /proc or /sys, which names the opening process's own files or a device"


def _in_kernel_dir(path: str) -> bool:
    return path in _KERNEL_DIRS or path.startswith(_KERNEL_PREFIXES)


def _parts(path: str) -> list[str]:
    """The components of `path`, last first (a stack for `_walk`)."""
    return [part for part in reversed(path.split("/")) if part]


def _walk(current: str, pending: list[str], links: int) -> tuple[str, int, bool]:
    """Follow `pending` (components, last first) from the resolved directory
    `current`: the path, the links followed so far, and whether the walk
    stopped early (under /dev, /proc or /sys, or past the link limit)."""
    while pending:
        if _in_kernel_dir(current):
            return os.path.normpath(os.path.join(current, *reversed(pending))), links, True
        part = pending.pop()
        if part in (".", ".."):
            current = current if part == "." else os.path.dirname(current)
            continue
        candidate = current + part if current == "/" else f"{current}/{part}"
        try:  # lstat first: most components are not links, and a failed readlink raises
            if not stat.S_ISLNK(os.lstat(candidate).st_mode):
                current = candidate
                continue
            target = os.readlink(candidate)
        except (OSError, ValueError):
            current = candidate  # missing: the open goes no further
            continue
        links += 1
        if links > _MAX_LINKS:
            return candidate, links, True
        if target.startswith("/"):
            current = "/"
        pending.extend(_parts(target))
    return current, links, False


# The walks of the check running in this thread or task (engine.check keeps
# them for its duration): one check follows the same directories again and
# again (a repository's directory, git dir and common dir for each file git
# reads), and it takes the file system as it found it the first time.
_walked: ContextVar[dict[str, tuple[str, int, bool]] | None] = ContextVar("walked", default=None)


def remember_walks() -> Token:
    """Keep the walks from here until `forget_walks(token)` (a check)."""
    return _walked.set({} if _walked.get() is None else _walked.get())


def forget_walks(token: Token) -> None:
    _walked.reset(token)


def _walk_path(path: str) -> tuple[str, int, bool]:
    kept = _walked.get()
    if kept is None:
        return _walk("/", _parts(path), 0)
    walked = kept.get(path)
    if walked is None:
        walked = kept[path] = _walk("/", _parts(path), 0)
    return walked


def resolve(path: str) -> str:
    """The absolute `path` with symlinks followed as the kernel does, except
    that nothing under /dev, /proc or /sys is followed: the rest is joined
    lexically, for the caller to judge by name (judge/special.py)."""
    return _walk_path(path)[0]


def resolve_each(base: str, names: Iterable[str]) -> Iterator[tuple[str, str, bool]]:
    """(name, resolve(base/name), whether that walk went to its end) for each
    name, following the absolute `base` once: the same walk, split where the
    names start (a repository's two dozen files, a project file in each
    directory up to the root)."""
    real, links, stopped = _walk_path(base)
    for name in names:
        if stopped:  # the base's walk stopped: each name's stops there too, or later
            full = _walk_path(f"{base}/{name}")
        else:
            full = _walk(real, _parts(name), links)
        yield name, full[0], not full[2]


def physical(path: str) -> str:
    """os.path.realpath as the command's own process would resolve `path`.

    Links under /proc and /dev stand for the opening process's files
    (`/proc/self/cwd` is its working directory): resolved in the checker,
    they name the checker's.  A path that leads there raises Unreadable, so
    the caller fails closed (red team RT2: `git -C /proc/self/cwd/sub status`
    judged the checker's directory, not the repository git used)."""
    real = resolve(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))  # `..` after links
    if _in_kernel_dir(real):
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
    except Unreadable:
        return _KERNEL_FILE
    except (OSError, ValueError):
        return None
    return _kind(real)


def special_resolved(real: str, complete: bool) -> str | None:
    """`special_file` of a path `resolve` gave: walked to its end, it holds no
    link to follow again, so only its kind is looked up."""
    if not complete:
        return special_file(real)
    if _in_kernel_dir(real):
        return _KERNEL_FILE
    return _kind(real)


def special_files(base: str, names: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """(name, special_file(base/name)) for each name, with the absolute `base` followed once."""
    for name, real, complete in resolve_each(base, names):
        yield name, special_resolved(real, complete)


def _kind(real: str) -> str | None:
    try:
        mode = os.stat(real).st_mode
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
