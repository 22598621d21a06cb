"""One confined run: what the parent prepares, and what the child applies
between fork and exec (`Sandbox.enter`, given to subprocess as preexec_fn).

The parent builds the Landlock ruleset and the seccomp program, so that the
child, a copy of a possibly large and threaded process, only makes a few
system calls and allocates almost nothing.  A step that fails in the child
writes why to a pipe and raises, so the command never runs half-confined.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Mapping

from . import landlock, privileges, seccomp

_FILTERS: dict[str, seccomp.Filter] = {}


class ConfinementError(OSError):
    """Confinement could not be set up as asked; the command did not run.
    `step` names the set-up step that failed in the child, if one did."""

    def __init__(self, message: str, step: str = ""):
        super().__init__(message)
        self.step = step


class Sandbox:
    """The kernel set-up of one run and its private temporary directory
    (given as TMPDIR and removed by `close`)."""

    def __init__(self, landlock_abi: int, arch: str | None, netns: bool):
        self.tmpdir = tempfile.mkdtemp(prefix="bash-policy-")
        self._ruleset: int | None = None
        self._errors: tuple[int, int] | None = None
        try:
            self._ruleset = landlock.ruleset(landlock_abi, (self.tmpdir,)) if landlock_abi else None
            if arch is not None and arch not in _FILTERS:
                _FILTERS[arch] = seccomp.Filter(arch)
            self._filter = _FILTERS.get(arch) if arch is not None else None
            self._errors = os.pipe()
        except OSError as error:
            self.close()
            raise ConfinementError(f"cannot prepare the sandbox: {error}") from None
        self._netns = netns
        self._last_cap = privileges.last_capability()

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with the private directory as every name programs look up."""
        return {**base, **dict.fromkeys(("TMPDIR", "TMP", "TEMP", "TEMPDIR"), self.tmpdir)}

    def enter(self) -> None:
        """Confine this process for good (runs in the child)."""
        step = "start"
        try:
            if self._netns:
                step = "network namespace"
                privileges.new_network_namespace()
            step = "core dumps"
            privileges.no_core_dumps()
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
        for fd in (self._ruleset, *(self._errors or ())):
            if fd is not None:
                os.close(fd)
        self._ruleset = self._errors = None
        _remove_tree(self.tmpdir)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _remove_tree(path: str) -> None:
    """Remove the private directory whatever the command left in it: a
    directory made with no permissions (`mkdir -m 0`) can be emptied only
    once it is given them back.  Nothing is followed: links are removed,
    never their targets (the command is dead by now, so nothing moves)."""
    try:
        os.rmdir(path)  # most runs leave it empty
        return
    except OSError:
        pass
    for root, dirs, _files in os.walk(path):  # top-down: each is granted before it is entered
        for name in dirs:
            full = os.path.join(root, name)
            if stat.S_ISDIR(os.lstat(full).st_mode):
                os.chmod(full, 0o700)
    shutil.rmtree(path, ignore_errors=True)
