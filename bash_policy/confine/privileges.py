"""Process-wide steps the child takes before Landlock and seccomp: a network
namespace (where the process may make one), no core dumps, no capabilities,
and no_new_privs (which also lets an unprivileged process install both)."""

from __future__ import annotations

import ctypes
import os
import resource

_libc = ctypes.CDLL(None, use_errno=True)
prctl = _libc.prctl
prctl.restype = ctypes.c_int
prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_CLONE_NEWNET = 0x40000000
_CAP_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def last_capability() -> int:
    """The highest capability number this kernel knows (read in the parent)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 63


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def new_network_namespace() -> None:
    """No interface but a loopback that is down: no address is reachable,
    and abstract Unix sockets are the namespace's own.  Needs CAP_SYS_ADMIN."""
    if _libc.unshare(_CLONE_NEWNET) != 0:
        raise _fail("unshare(CLONE_NEWNET)")


def no_core_dumps() -> None:
    """A crash must not write a core file into the working directory."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def first_to_go_out_of_memory() -> None:
    """If memory runs out, the kernel kills the sandbox before anything else."""
    with open("/proc/self/oom_score_adj", "w") as fh:
        fh.write("1000")


def drop_capabilities(last_cap: int) -> None:
    """Empty every capability set, so that root in the sandbox cannot set the
    clock, load modules, renice others, read what DAC forbids or regain any
    capability by executing a program.  An unprivileged process has nothing
    in its bounding set to give up (the drop needs CAP_SETPCAP)."""
    privileged = os.geteuid() == 0
    for cap in range(last_cap + 1):
        if prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and privileged:
            raise _fail(f"PR_CAPBSET_DROP {cap}")
    if prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        raise _fail("PR_CAP_AMBIENT_CLEAR_ALL")
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise _fail("capset")


def no_new_privs() -> None:
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _fail("PR_SET_NO_NEW_PRIVS")


def inherits_orphans() -> bool:
    """Whether this process is PID 1 or a subreaper, so that orphans of the
    runs it makes (their killed groups, their watchdogs) become its zombies."""
    flag = ctypes.c_int(0)
    return os.getpid() == 1 or (prctl(37, ctypes.addressof(flag), 0, 0, 0) == 0 and flag.value != 0)
