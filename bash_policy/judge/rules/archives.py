"""Archive listers: tar's old-style options and remote archives, unzip's and zip's modes, gzip and xz.

GNU tar reads a first word without a dash as a cluster of option letters
(`tar xzf a.tgz` extracts), and an archive name with a colon before any slash
as HOST:FILE on a remote tape server reached through rsh or ssh, unless
--force-local.  unzip extracts unless a listing mode is given, and zip
changes an archive unless it only shows files (-sf); gzip and xz replace their files
unless they write to standard output, list or test.
"""

from __future__ import annotations

import os

from ...read.model import Word
from ...records import dataclass
from ..codes import Code, Effect
from ..problems import Problem
from ..spec import Flag
from ..special import stdin_in
from . import rule

_ZIP_INFO = {"-v", "-h", "-h2", "--help", "-L", "--license"}


def _remote(value: str) -> bool:
    """GNU tar's test (rmt): a colon with no slash before it names HOST:FILE."""
    colon = value.find(":")
    return colon > 0 and "/" not in value[:colon]


@dataclass(frozen=True)
class RemoteArchive(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = "`tar -f {value}` names a remote archive (HOST:FILE), which tar reaches by running rsh or ssh"
    hint_format = "add --force-local if it is a local file, or write it as ./{value}"
    value: str


@dataclass(frozen=True)
class OldOptionsExpand(Problem):
    code = Code.BP401
    message_format = "`tar {word.text}`: tar reads its first word as option letters, and this one expands"
    hint_format = "write the options with a dash first: tar -tf ARCHIVE ..."
    word: Word


@dataclass(frozen=True)
class UnknownOptionLetter(Problem):
    code = Code.BP401
    message_format = "`tar {cluster}`: `{letter}` is not an allowed option letter of tar"
    hint_format = "write the options with a dash, e.g. tar -tzf ARCHIVE"
    cluster: str
    letter: str


@dataclass(frozen=True)
class DeniedOptionLetter(Problem):
    code = Code.BP400
    cluster: str
    letter: str
    flag: Flag

    @property
    def reason(self):
        assert self.flag.denied is not None
        return self.flag.denied

    def message(self) -> str:
        return f"`tar {self.cluster}`: `{self.letter}` (tar {self.flag.display}) {self.reason.why}"

    def hint(self) -> str:
        return self.reason.fix or "drop it"

    def consequence(self):
        return self.reason.effect


@dataclass(frozen=True)
class ArchiveNameExpands(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = ("`tar {letters} {word.text}`: bash expands the archive's name, and a name with a colon "
                      "(HOST:FILE) makes tar run rsh or ssh")
    hint_format = "write the archive's name, or add --force-local"
    letters: str
    word: Word


def _deny_remote(ctx, word, value: str) -> None:
    ctx.deny(RemoteArchive(value), word.span)


@rule("tar_archive", codes=[Code.BP400, Code.BP401, Code.BP403],
      deny=["tar czf a.tgz src", "tar -tf host:/srv/a.tar", "tar tf host:a.tar", "tar tf l*",
            "tar tf host:dir/*.tar"],
      allow=["tar tzf a.tgz", "tar -tf ./a:b.tar", "tar --force-local -tf a:b.tar", "tar tf ./*.tar"])
def tar_archive(inv, ctx) -> None:
    """tar's old-style first word (`tar xzf`), read letter by letter, and remote archives.
    The first word's letters are options, so `xzf` extracts; `-f HOST:FILE` runs rsh or ssh.
    Without an archive tar reads one from standard input."""
    spec, local = inv.spec, inv.has("--force-local")
    archives = [(use.value_word or use.word, use.value) for use in inv.uses("-f")]
    first = inv.words[1] if len(inv.words) > 1 else None
    if first is not None and inv.positionals and inv.positionals[0] is first:
        if first.value is None:
            ctx.deny(OldOptionsExpand(first), first.span)
            return
        values = iter(inv.positionals[1:])
        for letter in first.value:
            flag = spec.flags.get("-" + letter)
            if flag is None:
                ctx.deny(UnknownOptionLetter(first.value, letter), first.span)
                return
            if flag.denied is not None:
                ctx.deny(DeniedOptionLetter(first.value, letter, flag), first.span)
                return
            if flag.value == "required":
                holder = next(values, None)
                if holder is not None and "-f" in flag.names:
                    # A glob: `tar tf l*` met `localhost:x.tar`; a slash before any colon
                    # (`./*.tar`) is local, a colon before it (`host:dir/*`) never is.
                    if holder.value is None and not local and ("/" not in holder.prefix
                                                               or _remote(holder.prefix)):
                        ctx.deny(ArchiveNameExpands(first.value, holder), holder.span)
                        return
                    archives.append((holder, holder.value))
    if not local:
        for word, value in archives:
            if value is not None and _remote(value):
                _deny_remote(ctx, word, value)
    if not archives or any(value in (None, "-") or stdin_in(value, ctx.directories()) for _, value in archives):
        ctx.reads_stdin = True  # no -f (Debian's default archive is `-`), or -f -


@dataclass(frozen=True)
class TarExtracts(Problem):
    code = Code.BP400
    effect = Effect.WRITE
    message_format = "`tar {option}` extracts the archive's files to disk (only with -O do they go to standard output)"
    hint_format = "print a member with -O: tar -xOf ARCHIVE MEMBER, or list them: tar -tvf ARCHIVE"
    option: str


@rule("tar_extract_to_stdout", codes=[Code.BP400],
      deny=["tar -xzf a.tgz", "tar xvf a.tar", "tar --extract -f a.tar -C out"],
      allow=["tar -xOf a.tar f.txt", "tar xOf a.tar", "tar -x --to-stdout -zf a.tgz", "tar -tf a.tar"])
def tar_extract_to_stdout(inv, ctx) -> None:
    """tar extracting without -O, which writes the members to disk.
    With -O (--to-stdout) GNU tar 1.34 writes each file member's data to standard
    output and nothing to disk: under strace an archive of a directory, a file,
    a symbolic and a hard link, a FIFO and a device created, linked, changed and
    removed nothing; bsdtar's -O is the same."""
    letters = ""
    first = inv.words[1] if len(inv.words) > 1 else None
    if first is not None and inv.positionals and inv.positionals[0] is first and first.value is not None:
        letters = first.value   # the old-style first word: `tar xOf`
    extract = inv.has("-x") or "x" in letters
    if extract and not (inv.has("-O") or "O" in letters):
        uses = inv.uses("-x")
        if uses:
            ctx.deny(TarExtracts(uses[0].name), uses[0].word.span)
        elif first is not None:
            ctx.deny(TarExtracts(letters), first.span)


@dataclass(frozen=True)
class UnzipExtracts(Problem):
    code = Code.BP406
    effect = Effect.WRITE
    message_format = "`unzip` without -l, -v, -Z, -t, -z, -p or -c extracts the archive's files to disk"
    hint_format = "list the members instead: unzip -l {archive.text}"
    archive: Word


@dataclass(frozen=True)
class UnzipSetsTime(Problem):
    code = Code.BP400
    effect = Effect.WRITE
    message_format = "`unzip -T` sets each archive's modification time to its newest member's"
    hint_format = "drop -T (after -Z it is zipinfo's time format)"


@dataclass(frozen=True)
class ZipWrites(Problem):
    code = Code.BP406
    effect = Effect.WRITE
    message_format = "`zip` without -sf creates or changes an archive"
    hint_format = "list what it holds or would take: zip -sf ARCHIVE [FILES], or unzip -l ARCHIVE"


@dataclass(frozen=True)
class ReplacesFile(Problem):
    code = Code.BP406
    effect = Effect.WRITE
    message_format = "`{program} {file.text}` replaces the file with its {copy} copy"
    hint_format = "print it with `{program} -c`, list it with -l or test it with -t"
    program: str
    file: Word
    copy: str  # "compressed" or "uncompressed"


@rule("unzip_mode", codes=[Code.BP406, Code.BP400],
      deny=["unzip a.zip", "unzip -q a.zip", "unzip -T -l a.zip"],
      allow=["unzip -l a.zip", "unzip -Z -T a.zip", "unzip"])
def unzip_mode(inv, ctx) -> None:
    """unzip without a listing, testing or printing mode, which extracts.
    unzip extracts by default (its spec's `modes` are the others, which
    combine); -T outside zipinfo mode (-Z) sets the archive's time."""
    if not inv.positionals:
        return  # unzip alone prints its help
    names = [use.name for use in inv.flags]
    if not inv.modes():
        ctx.deny(UnzipExtracts(inv.positionals[0]), inv.positionals[0].span)
        return
    zipinfo = names.index("-Z") if "-Z" in names else len(names)
    if "-T" in names[:zipinfo]:
        ctx.deny(UnzipSetsTime(), inv.words[0].span)


@dataclass(frozen=True)
class UnzipPasswordPrompt(Problem):
    code = Code.BP406
    effect = Effect.INTERACTIVE
    message_format = ("`unzip {mode}` on {archive}: {why}; unzip asks for a password on the terminal "
                      "(it opens /dev/tty itself), which waits for a person")
    hint_format = "list the members instead (unzip -l ARCHIVE), or give the password with -P"
    mode: str
    archive: str
    why: str


# The modes that read members' data, which an encrypted member's password guards.
_DECRYPTING = ("-t", "-p", "-c")


@rule("unzip_encrypted", codes=[Code.BP406],
      deny=["unzip -t dist-*.zip", "unzip -p 'dist-*.zip' a.txt"],
      allow=["unzip -l a.zip", "unzip -p a.zip", "unzip -P secret -t a.zip", "unzip -Z -t a.zip"])
def unzip_encrypted(inv, ctx) -> None:
    """unzip testing or printing members of an archive that may hold encrypted
    ones: without -P it opens /dev/tty and waits for the password there, in a
    client whose commands share its terminal (red team RT-A: `unzip -t
    enc.zip` prompted; -l, -v, -z and zipinfo read no member's data).  With a
    working directory the archive is looked at; unzip's own wildcards and
    names the checker cannot know are denied; without one, as for the other
    files a command opens, a relative name is not looked up."""
    modes = inv.modes()
    names = {use.name for use in inv.flags}
    decrypting = [m for m in _DECRYPTING if m in modes]
    if not decrypting or "-Z" in modes or "-P" in names or not inv.positionals:
        return
    word = inv.positionals[0]
    mode = " ".join(decrypting)
    if word.value is None or any(c in word.value for c in "*?["):
        ctx.deny(UnzipPasswordPrompt(mode, word.text, "the checker cannot see which archives it names "
                                                      "(unzip expands its own wildcards)"), word.span)
        return
    absolute = word.value.startswith("/")
    for directory in (["/"] if absolute else sorted(d for d in ctx.directories() if d is not None)):
        why = _encrypted_members(os.path.join(directory, word.value))
        if why is not None:
            ctx.deny(UnzipPasswordPrompt(mode, word.text, why), word.span)
            return


def _encrypted_members(path: str) -> str | None:
    """Why the archive unzip opens for `path` may ask for a password, or None.
    unzip tries the name, then with .zip and .ZIP added; a name that is
    missing makes it fail at once, and one that is not a regular file is
    another rule's (special files)."""
    import stat
    import zipfile

    for candidate in (path, path + ".zip", path + ".ZIP"):
        try:
            mode = os.stat(candidate).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            return None
        try:
            with zipfile.ZipFile(candidate) as archive:
                members = archive.infolist()
        except (OSError, zipfile.BadZipFile, ValueError, NotImplementedError) as error:
            return f"the checker cannot read it as a zip archive ({type(error).__name__})"
        if any(info.flag_bits & 1 for info in members):
            return "it holds encrypted members"
        return None
    return None


@rule("zip_show", codes=[Code.BP406],
      deny=["zip out.zip a.txt", "zip -r out.zip src"], allow=["zip -sf a.zip", "zip -v"])
def zip_show(inv, ctx) -> None:
    """zip without -sf (show files and exit), which creates or changes an archive.
    Only the show modes (-sf, -su, -sU, -sc: the spec's `modes`) exit before
    writing; -v alone prints the version."""
    names = {use.name for use in inv.flags}
    if inv.modes() or (not inv.positionals and names <= _ZIP_INFO):
        return
    at = inv.positionals[0].span if inv.positionals else inv.words[0].span
    ctx.deny(ZipWrites(), at)


@rule("compressor_to_stdout", codes=[Code.BP406],
      deny=["gzip notes.txt", "gunzip a.gz", "gzip -dk a.gz", "gzip -f -- *.log", "xz -d a.xz", "unxz a.xz",
            "xz -t -z notes.txt", "xz -l -d a.xz"],
      allow=["gzip -l a.gz", "gzip -t a.gz", "gzip -dc a.gz", "gzip", "gzip -c -", "gunzip -c a.gz",
             "xz -l a.xz", "unxz -c a.xz", "xz -z -t a.xz", "gzip -t -d a.gz"])
def compressor_to_stdout(inv, ctx) -> None:
    """gzip, xz and their uncompressing names on files without -c, or in a mode other than list or test.
    Each FILE is replaced by its compressed or uncompressed copy (-k only keeps
    the original beside it); -c writes to standard output, the -l and -t modes
    list and test, and without FILE (or with `-`) it filters standard input.
    The mode is the one that results (spec `modes`): xz obeys the last of
    -z -d -t -l, so `xz -t -z f` compresses f, while gzip's -t and -l win
    wherever they stand."""
    if inv.has("-c") or inv.modes() & {"-t", "-l"}:
        return
    files = [w for w in inv.positionals if w.value != "-"]
    if files:
        copy = "uncompressed" if "-d" in inv.modes() else "compressed"
        ctx.deny(ReplacesFile(inv.spec.display, files[0], copy), files[0].span)
