"""mvn: a project `.mvn` directory, which configures the JVM and the arguments mvn runs with.

Debian's mvn script (Maven 3.8.7) looks for the nearest `.mvn` directory in
the working directory or any above it and, before anything else, passes the
words of `.mvn/jvm.config` to java and those of `.mvn/maven.config` to Maven
as arguments: `mvn -v` under a jvm.config holding `-XX:+PrintFlagsFinal`
printed the JVM's flags (tried), and `-javaagent:x.jar` runs x.jar's code.
That directory is repository content the command text does not show.
"""

from __future__ import annotations

import os

from ...records import dataclass
from ...repo.files import physical
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .cd import known_directories

_NO_CWD_NOTE = ("mvn's .mvn directory was not looked for: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")


@dataclass(frozen=True)
class MavenProjectConfig(Problem):
    code = Code.BP601
    effect = Effect.EXEC
    message_format = ("`mvn` runs under {path}: its jvm.config and maven.config are options for the JVM "
                      "and Maven (`-javaagent:` runs code) that the command does not show")
    hint_format = "read the files with cat; run mvn after leaving plan mode"
    path: str


def _dot_mvn(directory: str) -> str | None:
    """The .mvn above `directory` on the logical path (Debian's mvn script climbs
    `pwd` with `cd ..`: red team RT-D, `cd lnk && mvn -v`) or the physical one."""
    return _climb(os.path.normpath(directory)) or _climb(physical(directory))


def _climb(directory: str) -> str | None:
    while True:
        path = os.path.join(directory, ".mvn")
        if os.path.lexists(path):
            return path
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


@rule("maven_project_config", codes=[Code.BP601], deny=[], allow=["mvn -v"],
      untestable="needs a directory with a .mvn directory: tests/test_toolchain.py")
def maven_project_config(inv, ctx) -> None:
    """mvn under a project .mvn directory, whose jvm.config and maven.config it applies even to `mvn -v`.
    jvm.config's words are JVM options (`-javaagent:` runs code, tried with
    `-XX:+PrintFlagsFinal`) and maven.config's are Maven arguments."""
    anchor = inv.words[0].span
    logical = {d for d in ctx.working_directories() if d is not None}
    for directory in [*known_directories(ctx, anchor, "its .mvn directory", _NO_CWD_NOTE, Effect.EXEC),
                      *sorted(logical)]:
        found = _dot_mvn(directory)
        if found:
            ctx.deny(MavenProjectConfig(found), anchor)
            return
