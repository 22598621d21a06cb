"""A seccomp filter for what Landlock does not mediate.

Landlock stops every write through a path, TCP, abstract sockets, signals
and ptrace outside the sandbox.  It does not see metadata calls (chmod,
chown, utimes, xattrs), file ioctls (`chattr`, btrfs snapshots), Unix
sockets by path, UDP and other socket families, System V and POSIX IPC
objects (which outlive the process), keyrings, io_uring (which would bypass
this filter), a process leaving its session or group (which would let it
outlive the run), or scheduling calls aimed at other processes.  This
filter answers those with an error, and:

- every system call newer than the reviewed table (`_MAX`) fails with
  ENOSYS, so a future kernel's new call is refused until reviewed;
- ioctl is an allowlist: terminal and file queries only (ENOTTY otherwise);
- fcntl(F_SETLEASE) fails: a lease on a file outside holds every other
  process that opens it for writing for the kernel's lease-break time
  (red team RT-F; record locks stay, sqlite readers take them);
- socket() is an allowlist: three kernel-only netlink protocols (EACCES
  otherwise); socketpair() only of SOCK_STREAM, a connected pair that
  reaches nothing (a datagram pair is not: sendto() with an address, or
  connect() again, points it at any pathname socket the user may write,
  /dev/log among them, and connect(AF_UNSPEC) frees it to bind an abstract
  name: red team RT-B);
- a call from another ABI (32-bit or x32 on x86_64) kills the process.

Numbers are the kernel's tables (arch/x86/entry/syscalls/syscall_64.tbl and
include/uapi/asm-generic/unistd.h, read for Linux 6.18); the x86_64 ones were
checked against /usr/include/x86_64-linux-gnu/asm/unistd_64.h.  Each denial
is tried by tests/test_confine.py.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

# (audit arch, syscall numbers by name) for the architectures the filter knows.
_X86_64 = {
    "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
    "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260,
    "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280,
    "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "setxattrat": 463,
    "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "removexattrat": 466,
    "file_setattr": 469, "lsm_set_self_attr": 460,
    "setsid": 112, "setpgid": 109, "unshare": 272, "setns": 308, "clone": 56, "clone3": 435,
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semtimedop": 220,
    "semctl": 66, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
    "mq_notify": 244, "mq_getsetattr": 245,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "socket": 41, "socketpair": 53, "ioctl": 16, "fcntl": 72,
    "setpriority": 141, "ioprio_set": 251, "sched_setaffinity": 203, "sched_setscheduler": 144,
    "sched_setparam": 142, "sched_setattr": 314, "prlimit64": 302, "migrate_pages": 256,
    "move_pages": 279,
}
# asm-generic: no chmod, chown, utime(s), futimesat or lchown (only the *at forms).
_GENERIC = {
    "fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "fchown": 55, "fchownat": 54,
    "utimensat": 88, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "setxattrat": 463,
    "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16, "removexattrat": 466,
    "file_setattr": 469, "lsm_set_self_attr": 460,
    "setsid": 157, "setpgid": 154, "unshare": 97, "setns": 268, "clone": 220, "clone3": 435,
    "add_key": 217, "request_key": 218, "keyctl": 219,
    "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
    "shmget": 194, "shmat": 196, "shmctl": 195, "semget": 190, "semop": 193, "semtimedop": 192,
    "semctl": 191, "msgget": 186, "msgsnd": 189, "msgrcv": 188, "msgctl": 187,
    "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183,
    "mq_notify": 184, "mq_getsetattr": 185,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "socket": 198, "socketpair": 199, "ioctl": 29, "fcntl": 25,
    "setpriority": 140, "ioprio_set": 30, "sched_setaffinity": 122, "sched_setscheduler": 119,
    "sched_setparam": 118, "sched_setattr": 274, "prlimit64": 261, "migrate_pages": 238,
    "move_pages": 239,
}
ARCHES = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _GENERIC)}
# The highest number reviewed (listns, Linux 6.18); anything above is ENOSYS.
_MAX = 470

# Calls refused outright, with the errno the caller sees.
_REFUSED = {
    errno.EPERM: (
        # metadata Landlock does not mediate
        "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
        "utime", "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr",
        "setxattrat", "removexattr", "lremovexattr", "fremovexattr", "removexattrat",
        "file_setattr", "lsm_set_self_attr",
        # leaving the run's session or group would outlive its kill; new namespaces
        "setsid", "setpgid", "unshare", "setns",
        # state that outlives the process: keyrings, System V and POSIX IPC
        "add_key", "request_key", "keyctl", "shmget", "shmat", "shmctl", "semget", "semop",
        "semtimedop", "semctl", "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink",
        "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
        # kernel attack surface nothing read-only needs
        "bpf", "perf_event_open", "userfaultfd",
    ),
    # io_uring runs calls this filter never sees; clone3's flags are out of its reach
    # (glibc falls back to clone on ENOSYS).
    errno.ENOSYS: ("io_uring_setup", "io_uring_enter", "io_uring_register", "clone3"),
}
# clone flags refused: new namespaces, and CLONE_PARENT (a sibling of the runner).
_CLONE_REFUSED = 0x00008000 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 \
    | 0x20000000 | 0x40000000
_AF_NETLINK = 16
# Netlink protocols whose every peer is the kernel, which answers queries and
# refuses changes without capabilities: NETLINK_ROUTE (ip), NETLINK_SOCK_DIAG
# (ss) and NETLINK_GENERIC.  NETLINK_USERSOCK and the rest can reach processes.
_NETLINK_PROTOCOLS = (0, 4, 16)
_PRIO_USER = 2  # setpriority's `which`; IOPRIO_WHO_USER is 3
_IOPRIO_WHO_USER = 3
# Calls aimed at a process: allowed only at the caller itself (pid argument 0).
_SELF_ONLY = {"sched_setaffinity": 0, "sched_setscheduler": 0, "sched_setparam": 0,
              "sched_setattr": 0, "prlimit64": 0, "migrate_pages": 0, "move_pages": 0}
# ioctl requests that only read (asm-generic values, the same on x86_64 and arm64):
# terminal queries, descriptor flags, and file attribute and extent queries.
IOCTL_ALLOWED = (
    0x5401, 0x5405, 0x540F, 0x5411, 0x5413, 0x5415, 0x5419, 0x541B, 0x541E, 0x5421,
    0x5424, 0x5429, 0x802C542A, 0x80045430, 0x80045432, 0x80045438, 0x80045439,
    0x80045440, 0x5450, 0x5451, 0x5452, 0x5456, 0x5460,
    # FS_IOC_GETFLAGS, its 32-bit form, FS_IOC_GETVERSION (both), FS_IOC_FSGETXATTR,
    # FS_IOC_FIEMAP, FIGETBSZ, FS_IOC_GETFSLABEL, FS_IOC_GETFSUUID, FS_IOC_GETFSSYSFSPATH
    0x80086601, 0x80046601, 0x80087601, 0x80047601, 0x801C581F, 0xC020660B, 0x2,
    0x81009431, 0x80111500, 0x80811501,
)

_F_SETLEASE = 1024
_SOCK_TYPE_MASK, _SOCK_STREAM = 0xF, 1  # the type without SOCK_NONBLOCK and SOCK_CLOEXEC

_RET_KILL_PROCESS, _RET_ALLOW, _RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
_LD_ABS, _AND, _JEQ, _JGT, _JSET, _RET = 0x20, 0x54, 0x15, 0x25, 0x45, 0x06
_NR, _ARCH = 0, 4


def _arg(index: int) -> int:
    """Offset of the low 32 bits of argument `index` in struct seccomp_data
    (little-endian; the kernel reads int and unsigned int arguments there)."""
    return 16 + 8 * index


def arch() -> str | None:
    machine = platform.machine()
    return machine if machine in ARCHES else None


def program(machine: str) -> bytes:
    """The filter as packed struct sock_filter instructions."""
    audit_arch, numbers = ARCHES[machine]
    code: list[tuple[int, int, int, int]] = [
        (_LD_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, audit_arch), (_RET, 0, 0, _RET_KILL_PROCESS),
        (_LD_ABS, 0, 0, _NR),
    ]
    if machine == "x86_64":  # the x32 ABI sets this bit in the number
        code += [(_JSET, 0, 1, 0x40000000), (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    code += [(_JGT, 0, 1, _MAX), (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    for err, names in _REFUSED.items():
        for name in names:
            if name in numbers:
                code += [(_JEQ, 0, 1, numbers[name]), (_RET, 0, 0, _RET_ERRNO | err)]

    def when(name: str, block: list[tuple[int, int, int, int]]) -> None:
        code.append((_JEQ, 0, len(block), numbers[name]))
        code.extend(block)

    protocols = len(_NETLINK_PROTOCOLS)
    when("socket", [(_LD_ABS, 0, 0, _arg(0)), (_JEQ, 0, protocols + 1, _AF_NETLINK),
                    (_LD_ABS, 0, 0, _arg(2)),
                    *[(_JEQ, protocols - i, 0, p) for i, p in enumerate(_NETLINK_PROTOCOLS)],
                    (_RET, 0, 0, _RET_ERRNO | errno.EACCES), (_RET, 0, 0, _RET_ALLOW)])
    when("socketpair", [(_LD_ABS, 0, 0, _arg(1)), (_AND, 0, 0, _SOCK_TYPE_MASK),
                        (_JEQ, 0, 1, _SOCK_STREAM), (_RET, 0, 0, _RET_ALLOW),
                        (_RET, 0, 0, _RET_ERRNO | errno.EACCES)])
    allowed = len(IOCTL_ALLOWED)
    when("ioctl", [(_LD_ABS, 0, 0, _arg(1)),
                   *[(_JEQ, allowed - i, 0, request) for i, request in enumerate(IOCTL_ALLOWED)],
                   (_RET, 0, 0, _RET_ERRNO | errno.ENOTTY), (_RET, 0, 0, _RET_ALLOW)])
    when("fcntl", [(_LD_ABS, 0, 0, _arg(1)), (_JEQ, 0, 1, _F_SETLEASE),
                   (_RET, 0, 0, _RET_ERRNO | errno.EPERM), (_RET, 0, 0, _RET_ALLOW)])
    when("clone", [(_LD_ABS, 0, 0, _arg(0)), (_JSET, 0, 1, _CLONE_REFUSED),
                   (_RET, 0, 0, _RET_ERRNO | errno.EPERM), (_RET, 0, 0, _RET_ALLOW)])
    for name, user in (("setpriority", _PRIO_USER), ("ioprio_set", _IOPRIO_WHO_USER)):
        when(name, [(_LD_ABS, 0, 0, _arg(1)), (_JEQ, 0, 2, 0), (_LD_ABS, 0, 0, _arg(0)),
                    (_JEQ, 0, 1, user), (_RET, 0, 0, _RET_ERRNO | errno.EPERM),
                    (_RET, 0, 0, _RET_ALLOW)])
    for name, index in _SELF_ONLY.items():
        when(name, [(_LD_ABS, 0, 0, _arg(index)), (_JEQ, 0, 1, 0), (_RET, 0, 0, _RET_ALLOW),
                    (_RET, 0, 0, _RET_ERRNO | errno.EPERM)])
    code.append((_RET, 0, 0, _RET_ALLOW))
    assert all(jt < 256 and jf < 256 for _, jt, jf, _ in code)
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in code)


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Filter:
    """A built filter, kept alive in memory until the child installs it."""

    def __init__(self, machine: str):
        code = program(machine)
        self._code = ctypes.create_string_buffer(code, len(code))
        self._prog = _Fprog(len(code) // 8, ctypes.addressof(self._code))

    def install(self, prctl) -> None:
        """PR_SET_SECCOMP with SECCOMP_MODE_FILTER; needs no_new_privs."""
        if prctl(22, 2, ctypes.addressof(self._prog), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"seccomp filter: {errno.errorcode.get(err, err)}")
