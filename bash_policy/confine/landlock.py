"""Landlock through ctypes: a ruleset that lets the sandbox read and execute
everything, write only to /dev/null and its private directory, make no TCP
connection or binding, and reach no abstract socket or process outside it.

Constants and structures are the kernel's UAPI (include/uapi/linux/landlock.h,
Documentation/userspace-api/landlock.rst); each access right exists from the
ABI version named beside it, and a ruleset may only name rights its ABI knows.
Checked on Linux 6.18 (ABI 7) by tests/test_confine.py, one test per channel.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import struct

# Syscall numbers: the same on every architecture (they postdate the split tables).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Filesystem rights (bit, first ABI).
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2: link or rename into another directory
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5: ioctl on a device opened in the sandbox
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
# Rights a rule on a file (not a directory) may carry.
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
# Network rights (ABI 4) and scopes (ABI 6).
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none or
    it is disabled (ENOSYS, EOPNOTSUPP)."""
    version = _syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def handled_fs(version: int) -> int:
    return _FS_BY_ABI[min(version, 5)] if version >= 1 else 0


def ruleset(version: int, writable_dirs: tuple[str, ...]) -> int:
    """A ruleset fd (close-on-exec, as the kernel makes it) holding the
    read-only rules, for `restrict_self()` in the child.  Built in the
    parent so that the child only has one system call left to make."""
    fs = handled_fs(version)
    net = NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    attr = struct.pack("=QQQ", fs, net, scoped)
    size = 8 if version < 4 else 16 if version < 6 else 24
    buffer = ctypes.create_string_buffer(attr[:size], size)
    fd = _check(_syscall(ctypes.c_long(_CREATE_RULESET), buffer, ctypes.c_size_t(size),
                         ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        _allow(fd, "/", EXECUTE | READ_DIR)
        for top in readable_roots():
            _allow(fd, top, READ_FILE)
        for device in _READABLE_DEVICES:
            _allow(fd, device, READ_FILE)
        _allow(fd, os.devnull, (READ_FILE | WRITE_FILE | TRUNCATE) & fs)
        for directory in writable_dirs:
            _allow(fd, directory, fs)
    except BaseException:
        os.close(fd)
        raise
    return fd


# Under /dev only these may be opened: everything else there is a terminal
# (whose input a read would steal), a disk, or a device with effects of its own.
_READABLE_DEVICES = ("/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


@functools.cache
def readable_tops() -> tuple[str, ...]:
    """Every entry of / whose files may be read: all but /dev, and but any
    link that leads to /dev or back to /.  Read once per process: an entry
    made later stays unreadable (fail closed)."""
    tops = []
    for name in sorted(os.listdir("/")):
        real = os.path.realpath("/" + name)
        if real != "/" and real != "/dev" and not real.startswith("/dev/") and os.path.exists(real):
            tops.append("/" + name)
    return tuple(tops)


_DEVICE_FILESYSTEMS = {"devtmpfs", "devpts"}
_MAX_READABLE = 4096  # rules: past this, what is left of a split directory stays unreadable


def device_mounts() -> list[str]:
    """Mount points outside /dev of file systems that hold devices: /dev/pts
    bound under a chroot is a terminal's typed input all the same."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
            for line in info:
                fields = line.split()
                fstype = fields[fields.index("-") + 1] if "-" in fields else ""
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[4])
                if fstype in _DEVICE_FILESYSTEMS and point != "/dev" and not point.startswith("/dev/"):
                    found.append(point)
    except (OSError, IndexError, ValueError):
        return ["/"]  # unreadable: nothing may be read (fail closed)
    return found


def readable_roots() -> tuple[str, ...]:
    """`readable_tops()` less every device mount outside /dev: a directory on
    the way to one is replaced by its other entries, level by level, since a
    Landlock rule grants all beneath it and none can take a subtree away."""
    roots = set(readable_tops())
    for mount in device_mounts():
        if mount == "/":
            return ()
        holder = next((r for r in roots if mount == r or mount.startswith(r.rstrip("/") + "/")), None)
        if holder is None:
            continue
        roots.discard(holder)
        here = holder
        for part in mount[len(holder):].strip("/").split("/") if mount != holder else ():
            try:
                siblings = [os.path.join(here, n) for n in os.listdir(here) if n != part]
            except OSError:
                break
            if len(roots) + len(siblings) > _MAX_READABLE:
                break
            roots.update(siblings)
            here = os.path.join(here, part)
    mounts = device_mounts()
    # A rule is on what a path resolves to: a sibling that is a link back
    # over a device mount (pytest's `pytest-current`) or into one is dropped.
    return tuple(sorted(r for r in roots if not any(_over(os.path.realpath(r), m) for m in mounts)))


def _over(path: str, mount: str) -> bool:
    """Whether a rule on `path` would reach into `mount`."""
    return path == "/" or mount == path or mount.startswith(path + "/") or path.startswith(mount + "/")


def _allow(ruleset_fd: int, path: str, access: int) -> None:
    target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            access &= _FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("=Qi", access, target), 12)
        _check(_syscall(ctypes.c_long(_ADD_RULE), ctypes.c_int(ruleset_fd),
                        ctypes.c_int(_RULE_PATH_BENEATH), rule, ctypes.c_uint32(0)),
               f"landlock_add_rule({path})")
    finally:
        os.close(target)


def restrict_self(ruleset_fd: int) -> None:
    """Enforce the ruleset on this thread and every child, for good.  Needs
    no_new_privs (set first)."""
    _check(_syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)),
           "landlock_restrict_self")


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return int(result)
