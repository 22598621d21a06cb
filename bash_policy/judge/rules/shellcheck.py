"""shellcheck: a .shellcheckrc that makes it open the files scripts source.

ShellCheck 0.9.0 reads the first `.shellcheckrc` or `shellcheckrc` it finds
in each script's directory or any above it (then ~/.shellcheckrc), unless
--norc.  Without -x it opens no file a script sources (`. /dev/zero`, a
`# shellcheck source=` directive, -P paths: tried under strace); with -x, or
with `external-sources=true` in such a file, it reads every sourced file, and
`. /dev/zero` never ended.  Those files are repository content the command
text does not show.
"""

from __future__ import annotations

import os
import re

from ...read.model import GLOB, Word
from ...records import dataclass
from ...repo.files import Unreadable, read_text
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .cd import known_directories

_RC_NAMES = (".shellcheckrc", "shellcheckrc")
# Anywhere on a line: several directives may share one (red team RT-D:
# `disable=SC2086 external-sources=true`); any value but false counts.
_EXTERNAL = re.compile(r"external-sources\s*=\s*(\S*)")
_NO_CWD_NOTE = ("shellcheck's .shellcheckrc files were not looked for: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")


@dataclass(frozen=True)
class ShellcheckrcFollows(Problem):
    code = Code.BP601
    effect = Effect.HANG
    message_format = ("{path} sets external-sources, so `shellcheck` opens every file the scripts "
                      "source, which the command does not show (a sourced /dev/zero never ends)")
    hint_format = "add --norc, which ignores that file"
    path: str


@dataclass(frozen=True)
class ShellcheckrcUnreadable(Problem):
    code = Code.BP601
    effect = Effect.HANG
    message_format = "`shellcheck` reads the first .shellcheckrc it finds above a script, and {error}"
    hint_format = "add --norc, which ignores that file"
    error: Exception


@dataclass(frozen=True)
class ShellcheckScriptsUnknown(Problem):
    code = Code.BP601
    effect = Effect.HANG
    message_format = ("`{word.text}` may name scripts in directories the checker does not know, and "
                      "shellcheck reads the .shellcheckrc of each script's directory")
    hint_format = "add --norc, or name the scripts' directory literally: shellcheck src/*.sh"
    word: Word


@rule("shellcheck_rc", codes=[Code.BP601], deny=[], allow=["shellcheck script.sh", "shellcheck --norc */*.sh"],
      untestable="needs a directory with a .shellcheckrc: tests/test_special_files.py")
def shellcheck_rc(inv, ctx) -> None:
    """shellcheck where a .shellcheckrc above a script sets external-sources, or cannot be read.
    With external-sources=true shellcheck opens every file the scripts source,
    names the command does not show (`. /dev/zero` never ended); a
    .shellcheckrc that is a FIFO or a device is not a file to read."""
    if inv.has("--norc"):
        return
    anchor = inv.words[0].span
    directories: list[str | None] = list(
        known_directories(ctx, anchor, "its .shellcheckrc", _NO_CWD_NOTE, Effect.HANG))
    for directory in directories or [None]:   # without one, absolute scripts are still looked at
        starts = set() if directory is None else {directory}
        for word in inv.positionals:
            text = word.value if word.value is not None else word.prefix
            if word.value is None and (GLOB not in {e.kind for e in word.expansions} or "/" in
                                       word.text[len(word.prefix):]):
                ctx.deny(ShellcheckScriptsUnknown(word), word.span)
                return
            path = text if text.startswith("/") else (
                os.path.join(directory, text) if directory is not None else None)
            if path is not None:
                # shellcheck climbs from the script's real path, the shell's path
                # names it by the link (red team RT-D): both are looked at.
                starts.add(os.path.dirname(path))
                starts.add(os.path.dirname(os.path.realpath(path)))
        seen: set[str] = set()
        for start in sorted(starts):
            path = os.path.normpath(start)
            while path not in seen:
                seen.add(path)
                if _judge_rc(ctx, anchor, path):
                    return
                path = os.path.dirname(path)


def _judge_rc(ctx, anchor, directory: str) -> bool:
    """Deny a .shellcheckrc in `directory` that follows sources or cannot be read."""
    for name in _RC_NAMES:
        path = os.path.join(directory, name)
        try:
            text = read_text(path)
        except Unreadable as error:
            ctx.deny(ShellcheckrcUnreadable(error), anchor)
            return True
        if text is None:
            continue
        if any(match[1] != "false" for match in _EXTERNAL.finditer(text)):
            ctx.deny(ShellcheckrcFollows(path), anchor)
            return True
    return False
