"""Read operands that are not regular files: FIFOs, sockets and devices hang or never end.

A directory the agent explores may hold a committed symlink `README.md ->
/dev/zero`, or a FIFO from an archive: `head -n 5 README.md` then reads
forever or blocks.  With a working directory the engine calls this rule for
every program whose operands are read, and each literal operand is looked up
(through symlinks, bash_policy/repo/files.py) in every directory the segment
may run in.  Where the spec says a value or operand makes the program open
more (a directory's files, an archive's next volumes: spec READ_SHAPES),
those files are looked at too.  Recursion that options choose (`grep -R`,
`find`) is not: the harness's timeout bounds it (docs/threat-model.md).
"""

from __future__ import annotations

import fnmatch
import os
import re

from ...read.model import GLOB, Word
from ...read.words import WordSyntaxError, scan_word
from ...records import dataclass
from ...repo.files import resolve
from ..codes import Code, Effect
from ..problems import Problem
from ..special import on_disk, special_in, stdin_in
from . import engine_rule

# `$PWD` and `${PWD}`; a directory written in their place must mean the same
# inside and outside double quotes.
_PWD = re.compile(r"\$(?:PWD(?![A-Za-z0-9_])|\{PWD\})")
_PLAIN_DIRECTORY = re.compile(r"/[A-Za-z0-9_./+@%,:=-]*")
_PWD_TILDE = re.compile(r"~(?:\+0?|0|-0)(?=/|\Z)")

SPECIAL = engine_rule("special_operand", """Read operands that resolve to a FIFO, socket or device instead of a file.
    Reading one blocks or never ends, and a symlink in the repository can point there.""",
    codes=[Code.BP603], deny=[], allow=["head -n 5 README.md"],
    untestable="needs a directory holding a FIFO or a device symlink: tests/test_special_files.py")


@dataclass(frozen=True)
class SpecialOnDisk(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = SPECIAL
    message_format = "`{word.text}` is {what}{target}: reading it blocks or never ends"
    hint_format = "read a regular file; look at what the name is with `ls -l` or `stat`"
    word: Word
    what: str  # as special.on_disk says it: "a FIFO", "a socket", "a device or kernel file"
    target: str  # " (it resolves to PATH)", or ""


@dataclass(frozen=True)
class TooManyAround(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = SPECIAL
    message_format = "`{program}` opens the files around `{word.text}`, more than the checker looks through ({limit})"
    hint_format = "name the files it should read"
    program: str
    word: Word
    limit: int


@dataclass(frozen=True)
class SpecialAround(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = SPECIAL
    message_format = ("`{program}` opens the files {where} `{word.text}`, and `{entry}` is {what}: reading "
                      "it blocks or never ends")
    hint_format = "move the special file away, or name the regular files to read"
    program: str
    where: str  # "under", "beside" or "tried in place of"
    word: Word
    entry: str
    what: str


@dataclass(frozen=True)
class SpecialMatch(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = SPECIAL
    message_format = "`{word.text}` matches `{entry}`, which is {what}: reading it blocks or never ends"
    hint_format = "name the regular files to read, or narrow the pattern"
    word: Word
    entry: str
    what: str


@dataclass(frozen=True)
class DeviceValue(Problem):
    """A flag's value, or a file named inside one, under /dev, /proc or /sys."""

    code = Code.BP403
    effect = Effect.HANG
    message_format = "`{program}` would read `{path}`, a device or kernel file whose reading may never end"
    hint_format = "read a regular file"
    program: str  # the program, with the flag where one names the file
    path: str | None


# A glob is looked at in at most this many directory entries; past it, what it
# may match is not known, and a read of its matches is denied (TooManyMatches).
_MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class TooManyMatches(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = SPECIAL
    message_format = ("`{word.text}` may match more names than the checker looks through ({limit}), "
                      "so it cannot tell whether one is a FIFO or a device")
    hint_format = "name the files, or narrow the pattern to fewer entries"
    word: Word
    limit: int = _MAX_ENTRIES


def glob_pattern(text: str) -> list[str]:
    """A glob word's components as fnmatch patterns matching at least what bash
    matches: quotes dropped (a quoted `*` then matches more), each bracket
    expression any one character, dot files included."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch in "'\"":
            i += 1
            continue
        if ch == "\\":
            out.append(_literal(text[i + 1:i + 2]))
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < len(text) and text[j] in "!^":
                j += 1
            if j < len(text) and text[j] == "]":
                j += 1
            close = text.find("]", j)
            if close > 0:
                out.append("?")
                i = close + 1
                continue
            out.append("[[]")
        else:
            out.append(ch)
        i += 1
    return "".join(out).split("/")


def _literal(ch: str) -> str:
    """A character fnmatch takes literally."""
    return f"[{ch}]" if ch in "*?[" else ch


def glob_matches(directory: str, text: str) -> list[str] | None:
    """The paths a glob word may expand to in `directory` (a superset of bash's
    matches), or None past _MAX_ENTRIES."""
    parts = glob_pattern(text)
    paths = ["/" if parts[0] == "" else directory]  # `"/tmp"/*` is absolute too
    seen = 0
    for part in parts:
        if part in ("", "."):
            continue
        if not any(c in part for c in "*?["):
            paths = [os.path.join(p, part) for p in paths]
            continue
        found = []
        for path in paths:
            try:
                names = os.listdir(path)
            except (OSError, ValueError):
                continue
            seen += len(names)
            if seen > _MAX_ENTRIES:
                return None
            found += [os.path.join(path, n) for n in names if fnmatch.fnmatchcase(n, part)]
        paths = found
    return paths


@dataclass(frozen=True)
class NameInEveryDirectory(Problem):
    code = Code.BP603
    effect = Effect.HANG
    rule = SPECIAL
    message_format = ("`{word.text}` under find -execdir is opened in the directory of every file find "
                      "matches, which the checker cannot look at (a FIFO there blocks)")
    hint_format = "name it by its absolute path, or run the command with -exec from here"
    word: Word


def check_special_operands(positionals, ctx) -> None:
    """Deny each literal or glob operand that resolves to a special file in a
    directory the segment may run in; one that links to /dev/stdin reads
    standard input.  `"$PWD/x"` is read with the directory written in (bash
    sets PWD to it).  The engine calls it for programs whose operands are read;
    a relative path in a directory the checker does not know (no cwd) is not
    looked up, an absolute one always is.  Under `find -execdir` a relative
    name is opened in every directory find matches in: denied (red team RT-I:
    `find dp -name f1 -execdir cat f1 \\;` read a FIFO there)."""
    known = sorted(d for d in ctx.directories() if d is not None)
    if ctx.elsewhere and ctx.cwd is not None:
        for word in positionals:
            if word.value is not None and word.value not in ("-", "") and not word.value.startswith("/"):
                ctx.deny(NameInEveryDirectory(word), word.span)
                return
    for word in positionals:
        absolute = word.value is not None and word.value.startswith("/")
        for directory in (["/"] if absolute else known):
            seen = _in_directory(word, directory)
            if seen is None or seen.value in ("-", "/dev/null"):
                continue
            if seen.value is None:
                denied = _check_glob(word, seen.text, directory, ctx)
            else:
                denied = _check_path(word, os.path.join(directory, seen.value), ctx)
            if denied:
                break


def _in_directory(word, directory: str):
    """The word as bash sees it in `directory`: itself when literal or a plain
    glob; with `$PWD` (or a leading `~+`) replaced by the directory when that
    is its only expansion besides globs; None when its value is not known
    there (`~-` is the harness's OLDPWD: like other computed names, bounded
    only at run time)."""
    if word.value is not None or (word.pathname_only and GLOB in {e.kind for e in word.expansions}):
        return word
    text = word.text
    here = _PWD_TILDE.match(text)  # `~+`, and with pushd denied the stack's only entry `~0`
    if here:
        text = "$PWD" + text[here.end():]
    if not _PLAIN_DIRECTORY.fullmatch(directory) or not _PWD.search(text):
        return None
    try:
        seen = scan_word(_PWD.sub(directory, text))
    except WordSyntaxError:
        return None
    if seen.value is None and not (seen.pathname_only and {e.kind for e in seen.expansions} == {GLOB}):
        return None
    return seen


def _check_path(word, path: str, ctx) -> bool:
    """Deny (True) when `path` is a FIFO, device, socket or kernel file; a link
    to /dev/stdin reads standard input."""
    what = on_disk(path)
    if what == "stdin":
        ctx.reads_stdin = True
    if what in (None, "stdin"):
        return False
    real = resolve(path)
    target = f" (it resolves to {real})" if real != os.path.normpath(path) else ""
    ctx.deny(SpecialOnDisk(word, what, target), word.span)
    return True


def check_own_wildcards(words, ctx) -> None:
    """Operands with `*`, `?` or `[` for a program that expands them itself
    (spec `wildcards`: `unzip -l 'Z/*.zip'` opened a FIFO that matched, red
    team RT-G): each match is looked at as a glob's would be.  Without a
    working directory a relative one is not looked up, as for other names."""
    for word in words:
        value = word.value
        if value is None or not any(c in value for c in "*?["):
            continue
        text = "".join("\\" + c if c in "\\'\"" else c for c in value)  # only the program's wildcards
        directories = ["/"] if value.startswith("/") else sorted(d for d in ctx.directories() if d is not None)
        for directory in directories:
            if _check_glob(word, text, directory, ctx):
                return


def check_around(words, shape: str, ctx, display: str) -> None:
    """What a program opens beyond the file a word names (spec READ_SHAPES):
    for "directory", every file in or under the directory the word names
    (kubectl -f DIR, pip --path DIR, man -M DIR); for "siblings", the files
    beside it that share its name up to the first `.` (7z opens s.7z.002 for
    s.7z.001), or the files in a directory it names (7z l DIR opens each).
    For "suffixed", the names tried in place of a missing one (SUFFIXES).
    One that is a FIFO, socket or device denies, and so does a directory too
    large to look through; a link to /dev/stdin reads standard input."""
    if ctx.cwd is None or shape not in ("directory", "siblings", "suffixed"):
        return
    for word in words:
        for directory in sorted(d for d in ctx.directories() if d is not None):
            seen = _in_directory(word, directory)  # a glob, or `"$PWD/x"`, as bash expands it there
            if seen is None or seen.value in ("-", "/dev/null"):
                continue
            paths = (glob_matches(directory, seen.text) if seen.value is None
                     else [os.path.join(directory, seen.value)])
            found = _around(paths, shape)
            if found is None:
                ctx.deny(TooManyAround(display, word, _MAX_ENTRIES), word.span)
                return
            for entry, what in found:
                if what == "stdin":
                    ctx.reads_stdin = True
                    continue
                where = {"directory": "under", "suffixed": "tried in place of"}.get(shape, "beside")
                ctx.deny(SpecialAround(display, where, word, os.path.relpath(entry, directory), what), word.span)
                return


# What gzip 1.12 (.gz .z -z .Z), unzip 6.0 (.zip .ZIP) and lspci 3.9 (-i X.gz
# falls back to X) try for a name that is missing, tried with each (red team RT-D:
# `zcat -f data` read data.gz -> /dev/urandom); a superset for each of them.
SUFFIXES = (".gz", "-gz", ".z", "-z", "_z", ".Z", ".zip", ".ZIP")


def _suffixed(path: str) -> list[tuple[str, str]]:
    """The names tried in place of `path` when it is missing that are not plain files."""
    if os.path.lexists(path):
        return []
    tried = [path + s for s in SUFFIXES] + [path[:-len(s)] for s in SUFFIXES if path.endswith(s)]
    return [(name, what) for name in tried if (what := on_disk(name)) is not None]


def _around(paths: list[str] | None, shape: str) -> list[tuple[str, str]] | None:
    """What each path makes the program open beyond itself that is not a plain
    file (see check_around); None when there are too many entries to look at."""
    if paths is None:
        return None
    if shape == "suffixed":
        return [found for path in paths for found in _suffixed(path)]
    found: list[tuple[str, str]] = []
    for path in paths:
        more = _under(path) if shape == "directory" or os.path.isdir(path) else _beside(path)
        if more is None:
            return None
        found += more
    return found


def _under(top: str) -> list[tuple[str, str]] | None:
    """The entries in or under directory `top` (links followed, each directory
    once) that are not plain files: (path, what on_disk says); None past
    _MAX_ENTRIES."""
    try:
        if not os.path.isdir(top):
            return []
    except (OSError, ValueError):
        return []
    found: list[tuple[str, str]] = []
    seen_dirs: set[tuple[int, int]] = set()
    count = 0
    for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
        try:
            st = os.stat(dirpath)
        except OSError:
            dirnames[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen_dirs:
            dirnames[:] = []
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        count += len(dirnames) + len(filenames)
        if count > _MAX_ENTRIES:
            return None
        for name in filenames:
            what = on_disk(os.path.join(dirpath, name))
            if what is not None:
                found.append((os.path.join(dirpath, name), what))
    return found


def _beside(path: str) -> list[tuple[str, str]] | None:
    """The entries beside `path` whose names share its name up to the first
    `.`, and `path` itself, that are not plain files; None past _MAX_ENTRIES."""
    parent, name = os.path.split(os.path.normpath(path))
    stem = name.split(".", 1)[0]
    try:
        names = os.listdir(parent or ".")
    except (OSError, ValueError):
        return []
    if len(names) > _MAX_ENTRIES:
        return None
    found = []
    for other in sorted(names):
        if other.startswith(stem):
            what = on_disk(os.path.join(parent, other))
            if what is not None:
                found.append((os.path.join(parent, other), what))
    return found


def check_read_paths(words, ctx, display: str) -> None:
    """Paths a program reads that hide inside a flag's value (`kubectl -o
    jsonpath-file=PATH`), judged as the engine judges a `reads` flag's value:
    `-` or /dev/stdin reads standard input, a device or kernel file denies,
    a FIFO or link to one in the directory denies."""
    on_disk_checked = []
    for word in words:
        if word.value == "-" or stdin_in(word.value, ctx.directories()):
            ctx.reads_stdin = True
        elif special_in(word.value, ctx.directories()):
            ctx.deny(DeviceValue(display, word.value), word.span)
        else:
            on_disk_checked.append(word)
    check_special_operands(on_disk_checked, ctx)


def _check_glob(word, pattern: str, directory: str, ctx) -> bool:
    """`cat ./*` in a directory that holds a FIFO reads it and blocks (True:
    denied); so may a match in a directory too large to look through."""
    matches = glob_matches(directory, pattern)
    if matches is None:
        ctx.deny(TooManyMatches(word), word.span)
        return True
    for path in matches:
        what = on_disk(path)
        if what == "stdin":
            ctx.reads_stdin = True
        elif what is not None:
            ctx.deny(SpecialMatch(word, os.path.relpath(path, directory), what), word.span)
            return True
    return False

