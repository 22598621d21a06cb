"""One confined run: what the parent prepares, what the child applies
between fork and exec (`Sandbox.enter`, given to subprocess as preexec_fn),
and the watchdog that ends the run if the parent dies.

The parent builds the Landlock ruleset and the seccomp program, so that the
child, a copy of a possibly large and threaded process, only makes a few
system calls.  A step that fails in the child writes why to a pipe and
raises, so the command never runs half-confined.

The command leads its own session and process group and cannot leave them
(seccomp refuses setsid and setpgid), so killing the group ends everything
it started; the runner does that when the command ends, at the timeout and
at the output cap (launch.py).  If the runner itself dies, even by SIGKILL,
the watchdog (`guard`), a shell in a session of its own waiting on a pipe
only the runner holds, sees end of file, kills the group and removes the
private TMPDIR; and the command's own process has PR_SET_PDEATHSIG.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import tempfile
from collections.abc import Mapping

from . import landlock, privileges, seccomp

_FILTERS: dict[str, seccomp.Filter] = {}
_PR_SET_PDEATHSIG = 1


class ConfinementError(OSError):
    """Confinement could not be set up as asked; the command did not run.
    `step` names the set-up step that failed in the child, if one did."""

    def __init__(self, message: str, step: str = ""):
        super().__init__(message)
        self.step = step


class Sandbox:
    """The kernel set-up of one run and its private temporary directory
    (given as TMPDIR and removed when the run ends)."""

    def __init__(self, landlock_abi: int, arch: str | None, netns: bool):
        self._ruleset: int | None = None
        self._errors: tuple[int, int] | None = None
        self._watch: tuple[int, int] | None = None
        self._watchdog: subprocess.Popen | None = None
        self.tmpdir = ""
        try:
            self.tmpdir = tempfile.mkdtemp(prefix="bash-policy-")
            self._ruleset = landlock.ruleset(landlock_abi, (self.tmpdir,)) if landlock_abi else None
            if arch is not None and arch not in _FILTERS:
                _FILTERS[arch] = seccomp.Filter(arch)
            self._filter = _FILTERS.get(arch) if arch is not None else None
            self._errors = os.pipe()
            self._watch = os.pipe()
        except OSError as error:
            self.close()
            raise ConfinementError(f"cannot prepare the sandbox: {error}") from None
        self._netns = netns
        self._last_cap = privileges.last_capability()

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with the private directory as every name programs look up."""
        return {**base, **dict.fromkeys(("TMPDIR", "TMP", "TEMP", "TEMPDIR"), self.tmpdir)}

    def guard(self, group: int) -> None:
        """Start the watchdog for the command's process group (in the parent,
        right after the command started)."""
        assert self._watch is not None
        self._watchdog = subprocess.Popen(
            ["/bin/sh", "-c", 'read -r _; kill -KILL "-$1"; exec rm -rf -- "$2"', "watchdog",
             str(group), self.tmpdir],
            stdin=self._watch[0], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
        os.close(self._watch[0])
        self._watch = (-1, self._watch[1])

    def unguard(self) -> None:
        """Stop the watchdog before the command's process is reaped (so that
        it can never kill a group whose number was reused)."""
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
            self._watchdog = None

    def enter(self) -> None:
        """Confine this process for good (runs in the child)."""
        step = "start"
        try:
            privileges.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if self._netns:
                step = "network namespace"
                privileges.new_network_namespace()
            step = "core dumps"
            privileges.no_core_dumps()
            privileges.first_to_go_out_of_memory()
            step = "capabilities"
            privileges.drop_capabilities(self._last_cap)
            step = "no_new_privs"
            privileges.no_new_privs()
            if self._ruleset is not None:
                step = "landlock"
                landlock.restrict_self(self._ruleset)
            if self._filter is not None:
                step = "seccomp"
                self._filter.install(privileges.prctl)
        except BaseException as error:
            if self._errors is not None:
                os.write(self._errors[1], f"{step}\0{error}".encode(errors="replace")[:512])
            raise

    def failure(self) -> ConfinementError:
        """Why the child could not confine itself."""
        said = b""
        if self._errors is not None:
            os.set_blocking(self._errors[0], False)
            try:
                said = os.read(self._errors[0], 512)
            except BlockingIOError:
                pass
        step, _, why = said.decode(errors="replace").partition("\0")
        return ConfinementError(f"{step}: {why}" if why else "the sandbox could not be entered", step)

    def close(self) -> None:
        """Release the parent's descriptors and remove TMPDIR.  Never raises."""
        try:
            self.unguard()
        except OSError:
            pass
        for fd in (self._ruleset, *(self._errors or ()), *(self._watch or ())):
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._ruleset = self._errors = self._watch = None
        if self.tmpdir:
            remove_tree(self.tmpdir)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str) -> None:
    """Remove the private directory whatever the command left in it, and
    never raise.  Directories are flattened into the top one before they are
    emptied, so that no depth of nesting and no length of path matters, and
    each is opened relative to its parent without following links (links
    are removed, never their targets; the command is dead by now).  A
    directory made with no permissions is given them back first."""
    try:
        os.rmdir(path)  # most runs leave it empty
        return
    except OSError:
        pass
    try:
        top = os.open(path, _DIRECTORY)
    except OSError:
        return
    try:
        _flatten_and_empty(top)
    except OSError:
        pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _flatten_and_empty(top: int) -> None:
    """Pass over the top directory until a pass changes nothing: files are
    unlinked; each directory's subdirectories are moved up into the top one,
    its files unlinked, and then it is removed."""
    serial = 0
    while True:
        progress = False
        for name in os.listdir(top):
            if not _is_directory(name, top):
                progress |= _try(os.unlink, name, dir_fd=top)
                continue
            sub = _open_directory(name, top)
            if sub is None:
                continue
            try:
                for inner in os.listdir(sub):
                    if _is_directory(inner, sub):
                        serial += 1
                        _try(os.chmod, inner, 0o700, dir_fd=sub)  # moving a directory needs write on it
                        progress |= _try(os.rename, inner, f".bp-{serial}", src_dir_fd=sub, dst_dir_fd=top)
                    else:
                        progress |= _try(os.unlink, inner, dir_fd=sub)
            finally:
                os.close(sub)
            progress |= _try(os.rmdir, name, dir_fd=top)
        if not progress:
            return


def _is_directory(name: str, parent: int) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_directory(name: str, parent: int) -> int | None:
    for attempt in range(2):
        try:
            return os.open(name, _DIRECTORY, dir_fd=parent)
        except PermissionError:
            if attempt or not _try(os.chmod, name, 0o700, dir_fd=parent):
                return None
        except OSError:
            return None
    return None


def _try(function, *args, **kwargs) -> bool:
    try:
        function(*args, **kwargs)
        return True
    except OSError:
        return False
