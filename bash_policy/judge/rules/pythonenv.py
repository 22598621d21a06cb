"""uv pip reads an environment by running its interpreter; deny when the project picks it.

`uv pip list` (tree, show, freeze) finds the environment to read, then runs
its interpreter (`python -I -B -c ...`, seen with strace).  Without --system,
uv looks for a `.venv` in the working directory and its parents, and reads
uv.toml, `[tool.uv]` in pyproject.toml and .python-version there: all
repository content.  A `.venv/bin/python` script, or a real interpreter whose
site-packages hold a `.pth` file, runs code (a canary script ran, uv 0.13.9).
VIRTUAL_ENV and CONDA_PREFIX come from the harness's environment and are the
user's own.
"""

from __future__ import annotations

import os

from ...records import dataclass
from ...repo.files import physical
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .cd import known_directories

_NO_CWD_NOTE = ("the project's .venv was not looked for: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")
_PROJECT_FILES = ("uv.toml", ".python-version")


def _picks_environment(directory: str) -> str | None:
    """The first file in `directory` or a parent that makes uv pick an interpreter."""
    directory = physical(directory)  # a directory from flow.py: never under /proc
    while True:
        venv = os.path.join(directory, ".venv")
        if os.path.lexists(venv):
            return venv
        for name in _PROJECT_FILES:
            if os.path.lexists(os.path.join(directory, name)):
                return os.path.join(directory, name)
        pyproject = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(pyproject) and _has_uv_table(pyproject):
            return pyproject
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _has_uv_table(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "[tool.uv" in fh.read(1_000_000)
    except OSError:
        return True  # unreadable: assume it configures uv


@dataclass(frozen=True)
class ProjectInterpreter(Problem):
    code = Code.BP601
    effect = Effect.EXEC
    message_format = ("`{program}` runs the Python interpreter of the environment it reads, which {found} "
                      "chooses (repository content: a .venv can hold any program)")
    hint_format = ("read the lock file instead (rg NAME uv.lock), list .venv/lib/python3*/site-packages "
                   "with ls, or add --system for the python on PATH")
    program: str
    found: str


@rule("uv_environment", codes=[Code.BP601], deny=[], allow=["uv pip list --system"],
      untestable="needs a project directory: the @cwd cases in corpora/archives.txt")
def uv_environment(inv, ctx) -> None:
    """`uv pip list` and friends where the project chooses the interpreter uv runs.
    A .venv, uv.toml, [tool.uv] or .python-version in the directory or a parent is repository content."""
    if inv.has("--system"):
        return
    anchor = inv.words[0].span
    shown = inv.spec.display
    for directory in known_directories(ctx, anchor, "the environment it reads", _NO_CWD_NOTE, "exec"):
        found = _picks_environment(directory)
        if found:
            ctx.deny(ProjectInterpreter(shown, found), anchor)
            return
