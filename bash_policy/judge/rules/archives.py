"""Archive listers: tar's old-style options and remote archives, unzip's and zip's modes, gzip and xz.

GNU tar reads a first word without a dash as a cluster of option letters
(`tar xzf a.tgz` extracts), and an archive name with a colon before any slash
as HOST:FILE on a remote tape server reached through rsh or ssh, unless
--force-local.  unzip extracts unless a listing mode is given, and zip
changes an archive unless it only shows files (-sf); gzip and xz replace their files
unless they write to standard output, list or test.
"""

from __future__ import annotations

from ..codes import Code, Effect
from ..special import stdin_in
from . import rule

_ZIP_INFO = {"-v", "-h", "-h2", "--help", "-L", "--license"}


def _remote(value: str) -> bool:
    """GNU tar's test (rmt): a colon with no slash before it names HOST:FILE."""
    colon = value.find(":")
    return colon > 0 and "/" not in value[:colon]


def _deny_remote(ctx, word, value: str) -> None:
    ctx.deny(Code.BP403, word.span,
             f"`tar -f {value}` names a remote archive (HOST:FILE), which tar reaches by running rsh "
             "or ssh", f"add --force-local if it is a local file, or write it as ./{value}",
             Effect.NETWORK)


@rule("tar_archive", codes=[Code.BP400, Code.BP401, Code.BP403],
      deny=["tar xzf a.tgz", "tar -tf host:/srv/a.tar", "tar tf host:a.tar"],
      allow=["tar tzf a.tgz", "tar -tf ./a:b.tar", "tar --force-local -tf a:b.tar"])
def tar_archive(inv, ctx) -> None:
    """tar's old-style first word (`tar xzf`), read letter by letter, and remote archives.
    The first word's letters are options, so `xzf` extracts; `-f HOST:FILE` runs rsh or ssh.
    Without an archive tar reads one from standard input."""
    spec, local = inv.spec, inv.has("--force-local")
    archives = [(use.value_word or use.word, use.value) for use in inv.uses("-f")]
    first = inv.words[1] if len(inv.words) > 1 else None
    if first is not None and inv.positionals and inv.positionals[0] is first:
        if first.value is None:
            ctx.deny(Code.BP401, first.span,
                     f"`tar {first.text}`: tar reads its first word as option letters, and this one "
                     "expands", "write the options with a dash first: tar -tf ARCHIVE ...")
            return
        values = iter(inv.positionals[1:])
        for letter in first.value:
            flag = spec.flags.get("-" + letter)
            shown = f"`tar {first.value}`"
            if flag is None:
                ctx.deny(Code.BP401, first.span,
                         f"{shown}: `{letter}` is not an allowed option letter of tar",
                         "write the options with a dash, e.g. tar -tzf ARCHIVE")
                return
            if flag.denied is not None:
                ctx.deny(Code.BP400, first.span,
                         f"{shown}: `{letter}` (tar {flag.display}) {flag.denied.why}",
                         flag.denied.fix or "drop it", flag.denied.effect)
                return
            if flag.value == "required":
                holder = next(values, None)
                if holder is not None and "-f" in flag.names:
                    archives.append((holder, holder.value))
    if not local:
        for word, value in archives:
            if value is not None and _remote(value):
                _deny_remote(ctx, word, value)
    if not archives or any(value in (None, "-") or stdin_in(value, ctx.directories()) for _, value in archives):
        ctx.reads_stdin = True  # no -f (Debian's default archive is `-`), or -f -


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
        ctx.deny(Code.BP406, inv.positionals[0].span,
                 "`unzip` without -l, -v, -Z, -t, -z, -p or -c extracts the archive's files to disk",
                 f"list the members instead: unzip -l {inv.positionals[0].text}", Effect.WRITE)
        return
    zipinfo = names.index("-Z") if "-Z" in names else len(names)
    if "-T" in names[:zipinfo]:
        ctx.deny(Code.BP400, inv.words[0].span,
                 "`unzip -T` sets each archive's modification time to its newest member's",
                 "drop -T (after -Z it is zipinfo's time format)", Effect.WRITE)


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
    ctx.deny(Code.BP406, at, "`zip` without -sf creates or changes an archive",
             "list what it holds or would take: zip -sf ARCHIVE [FILES], or unzip -l ARCHIVE",
             Effect.WRITE)


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
        name = inv.spec.display
        ctx.deny(Code.BP406, files[0].span,
                 f"`{name} {files[0].text}` replaces the file with its "
                 f"{'uncompressed' if '-d' in inv.modes() else 'compressed'} copy",
                 f"print it with `{name} -c`, list it with -l or test it with -t", Effect.WRITE)
