"""Find the repository a git command will use, and judge everything in it that git reads.

A repository's own config can make `git status`, `git diff` or `git log` run
a program (docs/threat-model.md, class 8).  This module finds the repository
exactly as git 2.39 does and reads what git reads, then reports every config
key that is not known to be inert (bash_policy/repo/gitkeys.py), the hook a
read-only command runs, and whether the repository is a partial clone.  It
never runs git, and it never blocks on a FIFO (bash_policy/repo/files.py).

Paths are resolved physically, as the kernel resolves them for git: a
`.git` file's `gitdir: lnk/../x` goes through the symlink `lnk`, and so do
`commondir` and `include.path`.  The rules follow git 2.39's setup.c
(setup_git_directory_gently_1, read_gitfile_gently, is_git_directory,
get_common_dir_noenv), path.c (validate_headref) and config.c
(handle_path_include), and were tried against git 2.39.5 with crafted
repositories (tests/test_gitrepo.py runs real git on each case).
"""

from __future__ import annotations

import os
import stat
import struct
import time
from collections.abc import Iterable

from ..records import dataclass, field
from .files import Unreadable, physical, read_text, special_files
from .gitconfig import ConfigSyntaxError, Entry, parse
from .gitkeys import trusted as _trusted
from .gitkeys import why_not_inert

# Hooks a read-only command can run: `git status` rewrites the index when it
# refreshes stat data, and writing the index runs post-index-change.
READ_HOOKS = ("post-index-change",)
_MAX_INCLUDE_DEPTH = 10   # git's own limit (config.c, MAX_INCLUDE_DEPTH); deeper dies
_MAX_SUBMODULE_DEPTH = 10
_MAX_INDEX_BYTES = 64 << 20
_GITLINK = 0o160000
_FALSE = frozenset({"false", "no", "off", "0", ""})


class RepositoryError(Unreadable):
    """Something git reads that the checker cannot judge; git would die or hang on it."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A reason the repository may run a program: `what` names the key or hook."""

    what: str
    path: str
    value: str | None = None
    kind: str = "key"  # key | hook
    why: str = ""


@dataclass(frozen=True, slots=True)
class Repository:
    git_dir: str
    common_dir: str
    work_tree: str | None


@dataclass
class Report:
    """What a repository (and its submodules) holds that a read-only git command may act on."""

    findings: list[Finding] = field(default_factory=list)
    # Where a promisor remote or promisor pack was found: git fetches missing objects.
    promisor: list[str] = field(default_factory=list)


# -- finding the repository (setup.c) -------------------------------------------

def _validate_headref(path: str) -> bool:
    """path.c validate_headref(): a `refs/` symlink, `ref: refs/…`, or a hex object name."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):
        try:
            return os.readlink(path).startswith("refs/")
        except OSError:
            return False
    if stat.S_ISDIR(st.st_mode):
        return False            # open() works, read() fails: not a HEAD
    text = read_text(path)      # a FIFO here would block git: Unreadable
    if text is None:
        return False
    text = text[:255]
    if text.startswith("ref:") and text[4:].lstrip(" \t\n\v\f\r").startswith("refs/"):
        return True
    head = text[:40]
    return len(head) == 40 and all(c in "0123456789abcdefABCDEF" for c in head)


def common_dir(git_dir: str) -> str:
    """get_common_dir_noenv(): `commondir` (relative to the git dir), resolved physically."""
    path = os.path.join(git_dir, "commondir")
    if not os.path.lexists(path):
        return git_dir
    text = read_text(path)
    if not text:
        raise RepositoryError(f"{path} is empty or unreadable; git stops on it")
    text = text.rstrip("\r\n").split("\0")[0]
    return physical(text if os.path.isabs(text) else os.path.join(git_dir, text))


def is_git_dir(path: str) -> bool:
    """is_git_directory(): a valid HEAD, and objects/ and refs/ in the common dir."""
    if not _validate_headref(os.path.join(path, "HEAD")):
        return False
    common = common_dir(path)
    return (os.access(os.path.join(common, "objects"), os.X_OK)
            and os.access(os.path.join(common, "refs"), os.X_OK))


def read_gitfile(path: str) -> str | None:
    """read_gitfile_gently() as git's setup calls it: None when `path` is not a
    regular file; the physical git dir it names; RepositoryError where git dies."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
    except OSError:
        return None
    text = read_text(path)
    if text is None or not text.startswith("gitdir: "):
        raise RepositoryError(f"{path} is not a valid `gitdir:` file; git stops on it")
    text = text.rstrip("\r\n")
    if len(text) < 9:
        raise RepositoryError(f"{path} names no git directory; git stops on it")
    target = text[8:].split("\0")[0]
    if not os.path.isabs(target):
        target = os.path.join(os.path.dirname(path), target)   # not normalised: the kernel
    if not is_git_dir(target):                                   # resolves `..` after symlinks
        raise RepositoryError(f"{path} points at {target}, which is not a git directory; "
                              "git stops on it")
    return physical(target)


def discover(start: str) -> Repository | None:
    """The repository git uses when run in `start` (setup_git_directory_gently_1)."""
    here = physical(start)    # git works from getcwd(), a physical path
    while True:
        dotgit = os.path.join(here, ".git")
        target = read_gitfile(dotgit)
        if target is None and os.path.isdir(dotgit) and is_git_dir(dotgit):
            target = dotgit
        if target is not None:
            return _with_config_worktree(Repository(target, common_dir(target), here))
        if is_git_dir(here):  # bare: git 2.39 accepts it unless safe.bareRepository=explicit
            return Repository(here, common_dir(here), None)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def open_git_dir(git_dir: str, work_tree: str | None = None) -> Repository:
    """The repository named by `--git-dir` (git does not search for it)."""
    git_dir = read_gitfile(git_dir) or physical(git_dir)
    return Repository(git_dir, common_dir(git_dir), work_tree)


def _with_config_worktree(repo: Repository) -> Repository:
    """core.worktree moves the working tree; a relative value is relative to the git dir."""
    try:
        entries = repository_entries(repo)
    except (Unreadable, ConfigSyntaxError):
        return repo     # judged, and denied, when the config is read for findings
    values = [e.value for _, e in entries if e.name.lower() == "core.worktree" and e.value]
    if not values:
        return repo
    return Repository(repo.git_dir, repo.common_dir,
                      physical(os.path.join(repo.git_dir, values[-1])))


# -- reading config (config.c) --------------------------------------------------

def config_entries(path: str, depth: int = 0) -> list[tuple[str, Entry]]:
    """Entries of one config file and, recursively, of every file it may include.

    includeIf conditions are not evaluated: every included file is read, as if
    every condition held.  A relative include is relative to the including
    file's directory, joined without normalising, so `..` follows symlinks
    as the kernel resolves it for git.
    """
    if depth > _MAX_INCLUDE_DEPTH:
        raise RepositoryError(f"{path}: includes nest deeper than git's limit of "
                              f"{_MAX_INCLUDE_DEPTH}")
    text = read_text(path)
    if text is None:
        return []
    try:
        entries = parse(text)
    except ConfigSyntaxError as error:
        raise ConfigSyntaxError(f"{path}: {error}") from None
    result: list[tuple[str, Entry]] = []
    for entry in entries:
        result.append((path, entry))
        if entry.key == "path" and entry.section in ("include", "includeif") and entry.value:
            included = entry.value
            if included.startswith("~"):
                if not included.startswith("~/"):
                    raise RepositoryError(f"{path}: include.path `{included}` names another "
                                          "user's home directory")
                included = os.path.expanduser(included)
            if not os.path.isabs(included):
                included = os.path.join(os.path.dirname(path), included)
            physical(included)  # under /proc/self: the file git opens is not the checker's
            result.extend(config_entries(included, depth + 1))
    return result


def repository_entries(repo: Repository) -> list[tuple[str, Entry]]:
    """The local config of `repo`: config, config.worktree when enabled, includes."""
    entries = config_entries(os.path.join(repo.common_dir, "config"))
    enabled = [(e.value or "true").lower() not in _FALSE
               for _, e in entries if e.name.lower() == "extensions.worktreeconfig"]
    if enabled and enabled[-1]:
        entries += config_entries(os.path.join(repo.git_dir, "config.worktree"))
    return entries


# -- submodules ------------------------------------------------------------------

def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset varint (varint.c decode_varint)."""
    byte = data[pos]
    pos += 1
    value = byte & 127
    while byte & 128:
        value += 1
        byte = data[pos]
        pos += 1
        value = (value << 7) + (byte & 127)
    return value, pos


def _index_entries(data: bytes, hash_size: int) -> tuple[list[tuple[int, str]], int]:
    """(mode, path) of each entry of an index file, and where its extensions start."""
    if data[:4] != b"DIRC":
        raise ValueError("no DIRC signature")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    pos, previous, found = 12, b"", []
    for _ in range(count):
        start = pos
        mode = struct.unpack(">I", data[pos + 24:pos + 28])[0]
        pos += 40 + hash_size
        flags = struct.unpack(">H", data[pos:pos + 2])[0]
        pos += 2
        if flags & 0x4000 and version >= 3:
            pos += 2
        if version == 4:
            strip, pos = _varint(data, pos)
            end = data.index(b"\0", pos)
            name = previous[:len(previous) - strip] + data[pos:end]
            pos = end + 1
        else:
            end = data.index(b"\0", pos)
            name = data[pos:end]
            pos = start + ((pos - start + len(name) + 8) & ~7)
        previous = name
        found.append((mode, name.decode("utf-8", "surrogateescape")))
    return found, pos


def _gitlinks(repo: Repository, entries) -> list[str]:
    """Paths of the submodules recorded in the index (mode 160000), split index included."""
    sha256 = any(e.name.lower() == "extensions.objectformat" and (e.value or "").lower() == "sha256"
                 for _, e in entries)
    hash_size = 32 if sha256 else 20
    index = os.path.join(repo.git_dir, "index")
    read = [(index, _signature(index))]
    kept = _INDEXES.get((hash_size, *read[0]))
    if kept is not None and all(_signature(path) == sig for path, sig in kept[1]):
        return list(kept[0])
    try:
        data = read_text(index, _MAX_INDEX_BYTES)
        if data is None:
            return []
        raw = data.encode("utf-8", "surrogateescape")
        found, pos = _index_entries(raw, hash_size)
        end = len(raw) - hash_size
        while pos + 8 <= end:   # extensions: 4-byte signature, 4-byte size
            name, size = raw[pos:pos + 4], struct.unpack(">I", raw[pos + 4:pos + 8])[0]
            if name == b"link":
                shared = raw[pos + 8:pos + 8 + hash_size].hex()
                if shared.strip("0"):
                    path = os.path.join(repo.git_dir, f"sharedindex.{shared}")
                    read.append((path, _signature(path)))
                    text = read_text(path, _MAX_INDEX_BYTES)
                    if text is not None:
                        found += _index_entries(text.encode("utf-8", "surrogateescape"),
                                                hash_size)[0]
            pos += 8 + size
    except (ValueError, IndexError, struct.error) as error:
        raise RepositoryError(f"{index} cannot be read for submodules ({error})") from None
    paths = [path for mode, path in found if mode & 0o170000 == _GITLINK]
    if all(_settled(sig) for _, sig in read):
        if len(_INDEXES) >= _MAX_INDEXES:
            _INDEXES.clear()
        _INDEXES[(hash_size, *read[0])] = (tuple(paths), tuple(read[1:]))
    return paths


# The gitlinks of index files already read (the index can be megabytes, read
# for every git command), by the stat of each file read.  Only files whose
# last change is older than their timestamps' granularity are kept: a later
# write changes their ctime, so a kept answer is never stale.
_INDEXES: dict[tuple, tuple[tuple[str, ...], tuple]] = {}
_MAX_INDEXES = 16
_SETTLED_NS = 2_000_000_000


def _signature(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _settled(signature: tuple | None) -> bool:
    return signature is not None and time.time_ns() - max(signature[3:]) > _SETTLED_NS


def _submodule_at(path: str) -> Repository | None:
    """The repository of a populated submodule at `path` (its `.git` file or directory)."""
    dotgit = os.path.join(path, ".git")
    target = read_gitfile(dotgit)
    if target is None and os.path.isdir(dotgit) and is_git_dir(dotgit):
        target = dotgit
    if target is None:
        return None
    return _with_config_worktree(Repository(target, common_dir(target), physical(path)))


def _submodules(repo: Repository, entries) -> list[Repository]:
    """Submodule repositories `git status` can recurse into: the gitlinks of the index
    and .gitmodules paths that are populated, and every repository under modules/."""
    found: list[Repository] = []
    modules = os.path.join(repo.common_dir, "modules")
    for root, dirs, _files in os.walk(modules):
        if is_git_dir(root):
            found.append(_with_config_worktree(Repository(root, common_dir(root), None)))
            dirs[:] = [d for d in dirs if d == "modules"]
    if repo.work_tree:
        paths = _gitlinks(repo, entries)
        gitmodules = read_text(os.path.join(repo.work_tree, ".gitmodules"))
        try:
            paths += [e.value for e in parse(gitmodules or "")
                      if e.section == "submodule" and e.key == "path" and e.value]
        except ConfigSyntaxError:
            pass   # git ignores a .gitmodules it cannot parse; the index still lists gitlinks
        for path in dict.fromkeys(paths):
            sub = _submodule_at(os.path.join(repo.work_tree, path))
            if sub is not None:
                found.append(sub)
    return found


# -- judging ---------------------------------------------------------------------

def _hook_findings(repo: Repository, entries) -> list[Finding]:
    hooks_path = None
    for _, entry in entries:
        if entry.name.lower() == "core.hookspath":
            hooks_path = entry.value
    if hooks_path:
        base = repo.work_tree or repo.git_dir
        hooks_dir = os.path.join(base, os.path.expanduser(hooks_path))
    else:
        hooks_dir = os.path.join(repo.common_dir, "hooks")
    findings = []
    for name in READ_HOOKS:
        path = os.path.join(hooks_dir, name)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) and mode & 0o111:
            findings.append(Finding(f"the {name} hook", path, kind="hook"))
    return findings


def _promisor(repo: Repository, entries) -> list[str]:
    """Where this repository says it is a partial clone (git fetches missing objects)."""
    found = [f"{path}: {e.name} = {e.value if e.value is not None else 'true'}"
             for path, e in entries
             if (e.section == "remote" and e.subsection is not None and e.key == "promisor"
                 and (e.value is None or e.value.lower() not in _FALSE))
             or e.name.lower() == "extensions.partialclone"]
    pack = os.path.join(repo.common_dir, "objects", "pack")
    try:
        found += [os.path.join(pack, n) for n in sorted(os.listdir(pack)) if n.endswith(".promisor")]
    except OSError:
        pass
    return found


def key_findings(entries: Iterable[tuple[str, Entry]], bases: tuple[str, ...],
                 trusted: tuple[str, ...] = ()) -> list[Finding]:
    """Every entry that is neither known to be inert nor trusted by the user."""
    result = []
    for path, entry in entries:
        why = ("a key outside any section" if entry.section is None
               else why_not_inert(entry.section, entry.subsection, entry.key, entry.value, bases))
        if why is not None and not _trusted(entry.name, trusted):
            result.append(Finding(entry.name, path, entry.value, "key", why))
    return result


# Files git opens by itself while reading, in the common dir, the git dir and the
# top of the work tree: a FIFO there blocks git, a link to /dev/stdin reads the
# script (red team RT4: objects/info/alternates, commit-graph, MERGE_RR).
_COMMON_FILES = ("objects/info/alternates", "objects/info/http-alternates", "objects/info/commit-graph",
                 "objects/info/commit-graphs/commit-graph-chain", "objects/info/packs", "info/grafts",
                 "info/exclude", "info/attributes", "info/sparse-checkout", "shallow", "packed-refs",
                 "MERGE_RR", "rr-cache", "FETCH_HEAD")
_GIT_DIR_FILES = ("index", "ORIG_HEAD", "MERGE_HEAD", "MERGE_MSG", "CHERRY_PICK_HEAD", "REVERT_HEAD",
                  "logs/HEAD", "sparse-checkout")   # BISECT_*: only git bisect reads them (its rule)
_WORK_TREE_FILES = (".gitattributes", ".gitignore", ".mailmap", ".gitmodules")


def _special_files_git_reads(repo: Repository) -> None:
    """RepositoryError when a file git reads by itself is a FIFO, device or
    kernel file (through links too)."""
    places = [(repo.common_dir, _COMMON_FILES), (repo.git_dir, _GIT_DIR_FILES)]
    if repo.work_tree:
        places.append((repo.work_tree, _WORK_TREE_FILES))
    for base, names in places:
        for name, what in special_files(base, names):
            if what is not None:
                raise RepositoryError(f"{os.path.join(base, name)} is {what}; git reads it and would "
                                      "block or read the script")


def inspect(repo: Repository, trusted: tuple[str, ...] = (), depth: int = 0) -> Report:
    """Everything in `repo` (and its submodules) that a read-only command may act on.

    Raises ConfigSyntaxError for config text git would reject, and
    RepositoryError (an Unreadable) for files git would die or hang on.
    """
    _special_files_git_reads(repo)
    entries = repository_entries(repo)
    bases = tuple(dict.fromkeys(b for b in (repo.work_tree, repo.git_dir) if b))
    report = Report(key_findings(entries, bases, trusted) + _hook_findings(repo, entries),
                    _promisor(repo, entries))
    for sub in _submodules(repo, entries):
        if sub.git_dir == repo.git_dir:
            continue
        if depth >= _MAX_SUBMODULE_DEPTH:  # git recurses further; the checker does not look
            raise RepositoryError(f"submodules nest deeper than {_MAX_SUBMODULE_DEPTH} levels "
                                  f"(at {sub.work_tree or sub.git_dir})")
        inner = inspect(sub, trusted, depth + 1)
        report.findings += inner.findings
        report.promisor += inner.promisor
    return report


def findings(repo: Repository, trusted: tuple[str, ...] = ()) -> list[Finding]:
    """The keys and hooks of `repo` and its submodules that are not known to be inert."""
    return inspect(repo, trusted).findings
