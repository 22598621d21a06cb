"""The repository git config keys known to be inert, and the values that keep them so.

A repository's own config is untrusted (docs/threat-model.md, class 8), so it
is read with an allowlist: a key listed here, with a value its check accepts,
makes no read-only git subcommand that the git spec allows run a program,
open the network or write outside git's own index bookkeeping.  Every other
key denies (BP601), so a key nobody listed, or one a later git adds, can
never run a program.  A policy may trust more keys (`trusted_repo_keys`,
docs/config.md).

How each key was checked (git 2.39.5, Debian bookworm):
- its entry in git-config(1) of git-man 2.39.5 and `git help --config`;
- tests/test_gitkeys_probe.py sets every key listed here, with the riskiest
  value its check accepts (a canary script path, a local URL, `true`), in a
  fixture repository (modified, staged and renamed files, tags, a signed
  commit, a stash, notes, a remote-tracking branch, .gitattributes naming
  drivers) and runs every read-only subcommand the spec allows under
  `strace -f`: no program beyond git's own, no connect() to an inet
  address, no write outside .git/index, compared with a run without the key.
Keys read only by subcommands the git spec denies (commit, fetch, push,
merge, rebase, submodule, difftool, gc...) are listed when ordinary
repositories carry them, because no allowed command reaches them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from .files import special_file

# A check returns None when the value keeps the key inert, else why not.
Check = Callable[[str | None, tuple[str, ...]], str | None]

_FALSE = frozenset({"false", "no", "off", "0", ""})
_TRUE = frozenset({"true", "yes", "on", "1"})
_BUILTIN_PRETTY = frozenset({"oneline", "short", "medium", "full", "fuller", "reference",
                             "email", "raw", "mboxrd"})
# `%G?`, `%GS`, `%GK`... verify the commit's signature with gpg (git-log(1) PRETTY FORMATS);
# `%%` is a literal percent sign.
# A `+`, `-` or space may sit between `%` and the placeholder (`%+G?`: a line
# feed before it when non-empty), and still runs gpg.
SIGNATURE_PLACEHOLDER = re.compile(r"(?<!%)(?:%%)*%[-+ ]?G")


def _any(value, bases):
    return None


def _false(value, bases):
    if value is not None and value.lower() in _FALSE:
        return None
    return "only false is inert"


def _bool(value, bases):
    if value is None or value.lower() in _FALSE | _TRUE:
        return None
    return "a value other than a boolean names a program"


def _pager(value, bases):
    if value is not None and value.strip() in ("", "cat"):
        return None
    return "a pager is a program git runs when output goes to a terminal"


def _no_bang(value, bases):
    if value is None or not value.lstrip().startswith("!"):
        return None
    return "a value starting with `!` is a shell command"


def _format(value, bases):
    """format.pretty: a built-in format name or a format string without %G."""
    if value is None:
        return "not a format"
    if SIGNATURE_PLACEHOLDER.search(value):
        return "a %G placeholder runs gpg to verify signatures"
    if "%" not in value and ":" not in value and value.lower() not in _BUILTIN_PRETTY:
        return f"`{value}` names a format defined elsewhere in config (pretty.{value})"
    return None


def _no_signature(value, bases):
    if value is not None and SIGNATURE_PLACEHOLDER.search(value):
        return "a %G placeholder runs gpg to verify signatures"
    return None


def _path(value, bases):
    """A file git reads: not a FIFO or device, which would block or never end."""
    if not value:
        return None
    if value.startswith("~") and not value.startswith("~/"):
        return "a path in another user's home directory cannot be checked"
    path = os.path.expanduser(value)
    for base in bases if not os.path.isabs(path) else ("/",):
        what = special_file(os.path.join(base, path))
        if what is not None:
            return f"`{value}` is {what}, which git would read until it ends"
    return None


# key shape (section.key, or section.*.key for any subsection) -> check.
INERT: dict[str, Check] = {
    # -- core: repository layout, index and object storage --------------------
    "core.repositoryformatversion": _any, "core.filemode": _any, "core.bare": _any,
    "core.logallrefupdates": _any, "core.ignorecase": _any, "core.precomposeunicode": _any,
    "core.symlinks": _any, "core.autocrlf": _any, "core.eol": _any, "core.safecrlf": _any,
    "core.checkroundtripencoding": _any, "core.protecthfs": _any, "core.protectntfs": _any,
    "core.trustctime": _any, "core.checkstat": _any, "core.quotepath": _any,
    "core.abbrev": _any, "core.compression": _any, "core.loosecompression": _any,
    "core.packedgitwindowsize": _any, "core.packedgitlimit": _any,
    "core.deltabasecachelimit": _any, "core.bigfilethreshold": _any, "core.whitespace": _any,
    "core.fsync": _any, "core.fsyncmethod": _any, "core.fsyncobjectfiles": _any,
    "core.createobject": _any, "core.notesref": _any, "core.sparsecheckout": _any,
    "core.sparsecheckoutcone": _any, "core.untrackedcache": _any,
    "core.multipackindex": _any, "core.commitgraph": _any, "core.usereplacerefs": _any,
    "core.commentchar": _any, "core.filesreflocktimeout": _any, "core.packedrefstimeout": _any,
    "core.warnambiguousrefs": _any, "core.preloadindex": _any, "core.ignorestat": _any,
    "core.sharedrepository": _any, "core.prefersymlinkrefs": _any,
    "core.alternaterefsprefixes": _any, "core.fsmonitorhookversion": _any,
    # Git for Windows keys, ignored by git on Linux.
    "core.longpaths": _any, "core.fscache": _any, "core.hidedotfiles": _any,
    # Where the working tree is (submodules' configs set it); git reads, never runs, there.
    "core.worktree": _any,
    # Hooks are judged where they are: the one a read-only command runs (gitrepo.READ_HOOKS)
    # is looked for in this directory (husky and the like set it).
    "core.hookspath": _any,
    # Run only by commit, tag -e, rebase -i, config -e: subcommands the spec denies.
    "core.editor": _any, "sequence.editor": _any,
    # Program-valued core keys, inert only with these values.
    "core.fsmonitor": _false,          # true starts the fsmonitor daemon; a path is a hook
    "core.pager": _pager,
    # Files git reads: a FIFO or device there would hang it.
    "core.excludesfile": _path, "core.attributesfile": _path,
    "index.version": _any, "index.sparse": _any, "index.threads": _any,
    "index.recordendofindexentries": _any, "index.recordoffsettable": _any,
    "feature.manyfiles": _any,
    "commitgraph.generationversion": _any, "commitgraph.maxnewfilters": _any,
    "commitgraph.readchangedpaths": _any,
    "extensions.objectformat": _any, "extensions.worktreeconfig": _any,
    "extensions.preciousobjects": _any, "extensions.noop": _any,
    # Partial clones: the keys run nothing, but lazy fetches are judged by git_promisor.
    "extensions.partialclone": _any,
    "include.path": _any, "includeif.*.path": _any,   # followed, and their files judged
    # -- who, and how commits are made (commit and tag are denied) ------------
    "user.name": _any, "user.email": _any, "user.signingkey": _any, "user.useconfigonly": _any,
    "author.name": _any, "author.email": _any, "committer.name": _any, "committer.email": _any,
    "commit.gpgsign": _any, "commit.cleanup": _any, "commit.status": _any,
    "commit.verbose": _any, "commit.template": _path,
    "tag.gpgsign": _any, "tag.forcesignannotated": _any, "tag.sort": _any,
    "gpg.format": _any, "gpg.mintrustlevel": _any,
    "gpg.ssh.allowedsignersfile": _path, "gpg.ssh.revocationfile": _path,
    "i18n.commitencoding": _any, "i18n.logoutputencoding": _any,
    "init.defaultbranch": _any,
    # -- remotes and branches: used by fetch and push, which are denied ---------
    "remote.*.url": _any, "remote.*.pushurl": _any, "remote.*.fetch": _any,
    "remote.*.push": _any, "remote.*.mirror": _any, "remote.*.tagopt": _any,
    "remote.*.prune": _any, "remote.*.prunetags": _any, "remote.*.skipdefaultupdate": _any,
    "remote.*.skipfetchall": _any, "remote.*.proxy": _any, "remote.*.proxyauthmethod": _any,
    "remote.*.promisor": _any, "remote.*.partialclonefilter": _any,
    "remote.*.gh-resolved": _any,     # written by the GitHub CLI; git does not read it
    "remote.pushdefault": _any,
    "branch.*.remote": _any, "branch.*.pushremote": _any, "branch.*.merge": _any,
    "branch.*.mergeoptions": _any, "branch.*.rebase": _any, "branch.*.description": _any,
    "branch.*.vscode-merge-base": _any,       # written by VS Code; git does not read it
    "branch.*.github-pr-owner-number": _any,  # written by the GitHub PR extension
    "branch.autosetupmerge": _any, "branch.autosetuprebase": _any, "branch.sort": _any,
    "pull.rebase": _any, "pull.ff": _any, "pull.twohead": _any, "pull.octopus": _any,
    "push.default": _any, "push.autosetupremote": _any, "push.followtags": _any,
    "push.recursesubmodules": _any, "push.gpgsign": _any, "push.usebitmaps": _any,
    "push.useforceifincludes": _any, "push.negotiate": _any,
    "fetch.prune": _any, "fetch.prunetags": _any, "fetch.recursesubmodules": _any,
    "fetch.parallel": _any, "fetch.writecommitgraph": _any, "fetch.showforcedupdates": _any,
    "fetch.fsckobjects": _any, "fetch.output": _any, "fetch.negotiationalgorithm": _any,
    "fetch.unpacklimit": _any, "transfer.fsckobjects": _any, "protocol.version": _any,
    "url.*.insteadof": _any, "url.*.pushinsteadof": _any,
    "http.extraheader": _any, "http.*.extraheader": _any, "http.sslverify": _any,
    "http.*.sslverify": _any, "http.postbuffer": _any, "http.version": _any,
    "clone.defaultremotename": _any, "checkout.defaultremote": _any, "checkout.guess": _any,
    "checkout.workers": _any, "checkout.thresholdforparallelism": _any,
    "worktree.guessremote": _any,
    # Served repositories (bare upstreams): read by upload-pack and receive-pack only.
    "uploadpack.allowfilter": _any, "uploadpack.allowanysha1inwant": _any,
    "uploadpack.allowreachablesha1inwant": _any, "uploadpack.allowtipsha1inwant": _any,
    "uploadpack.allowrefinwant": _any, "receive.denycurrentbranch": _any,
    "receive.denynonfastforwards": _any, "receive.denydeletes": _any,
    # -- submodules: each populated submodule's own config is judged too -------
    "submodule.*.url": _any, "submodule.*.active": _any, "submodule.*.branch": _any,
    "submodule.*.ignore": _any, "submodule.*.fetchrecursesubmodules": _any,
    "submodule.*.update": _no_bang,   # `!command` is run by `git submodule update`
    "submodule.active": _any, "submodule.recurse": _any, "submodule.fetchjobs": _any,
    "submodule.alternatelocation": _any, "submodule.alternateerrorstrategy": _any,
    "submodule.propagatebranches": _any,
    # -- how read-only subcommands show things ---------------------------------
    "log.abbrevcommit": _any, "log.date": _any, "log.decorate": _any, "log.diffmerges": _any,
    "log.excludedecoration": _any, "log.follow": _any, "log.graphcolors": _any,
    "log.initialdecorationset": _any, "log.mailmap": _any, "log.showroot": _any,
    "log.showsignature": _false,     # true runs gpg for every signed commit
    "format.pretty": _format, "pretty.*": _no_signature,
    "notes.displayref": _any, "notes.rewriteref": _any, "notes.rewritemode": _any,
    "status.aheadbehind": _any, "status.branch": _any, "status.displaycommentprefix": _any,
    "status.relativepaths": _any, "status.renamelimit": _any, "status.renames": _any,
    "status.short": _any, "status.showstash": _any, "status.showuntrackedfiles": _any,
    "diff.algorithm": _any, "diff.autorefreshindex": _any, "diff.colormoved": _any,
    "diff.colormovedws": _any, "diff.context": _any, "diff.dirstat": _any,
    "diff.ignoresubmodules": _any, "diff.indentheuristic": _any, "diff.interhunkcontext": _any,
    "diff.mnemonicprefix": _any, "diff.noprefix": _any, "diff.relative": _any,
    "diff.renamelimit": _any, "diff.renames": _any, "diff.statgraphwidth": _any,
    "diff.submodule": _any, "diff.suppressblankempty": _any, "diff.wordregex": _any,
    "diff.wserrorhighlight": _any, "diff.orderfile": _path,
    "diff.tool": _any, "diff.guitool": _any, "merge.tool": _any, "merge.guitool": _any,
    # Driver attributes that run nothing (command and textconv do).
    "diff.*.xfuncname": _any, "diff.*.funcname": _any, "diff.*.wordregex": _any,
    "diff.*.binary": _any, "diff.*.cachetextconv": _any,
    "merge.*.name": _any, "merge.*.recursive": _any, "filter.*.required": _any,
    "merge.conflictstyle": _any, "merge.ff": _any, "merge.log": _any, "merge.renames": _any,
    "merge.renamelimit": _any, "merge.directoryrenames": _any, "merge.stat": _any,
    "merge.autostash": _any, "merge.defaulttoupstream": _any, "merge.verbosity": _any,
    "grep.linenumber": _any, "grep.column": _any, "grep.patterntype": _any,
    "grep.extendedregexp": _any, "grep.threads": _any, "grep.fullname": _any,
    "grep.fallbacktonoindex": _any,
    "blame.blankboundary": _any, "blame.coloring": _any, "blame.date": _any,
    "blame.showemail": _any, "blame.showroot": _any, "blame.markunblamablelines": _any,
    "blame.markignoredlines": _any, "blame.ignorerevsfile": _path,
    "mailmap.file": _path, "mailmap.blob": _any,
    "column.ui": _any, "column.branch": _any, "column.status": _any, "column.tag": _any,
    "showbranch.default": _any, "versionsort.suffix": _any,
    "stash.showpatch": _any, "stash.showstat": _any, "stash.showincludeuntracked": _any,
    "pager.*": _bool,                 # a string is a pager program for that command
    "alias.*": _no_bang,              # `!` runs a shell; other aliases cannot shadow a builtin
    "rebase.autosquash": _any, "rebase.autostash": _any, "rebase.updaterefs": _any,
    "rebase.stat": _any, "rebase.abbreviatecommands": _any, "rebase.missingcommitscheck": _any,
    "rebase.instructionformat": _any, "rebase.forkpoint": _any, "rebase.backend": _any,
    "rerere.enabled": _any, "rerere.autoupdate": _any,
    "apply.whitespace": _any, "apply.ignorewhitespace": _any, "am.threeway": _any,
    "am.keepcr": _any,
    "gc.auto": _any, "gc.autodetach": _any, "gc.autopacklimit": _any, "gc.writecommitgraph": _any,
    "gc.reflogexpire": _any, "gc.reflogexpireunreachable": _any, "gc.pruneexpire": _any,
    "maintenance.auto": _any, "maintenance.strategy": _any,
    "maintenance.*.enabled": _any, "maintenance.*.schedule": _any,
    "pack.threads": _any, "pack.windowmemory": _any, "pack.packsizelimit": _any,
    "repack.writebitmaps": _any, "repack.usedeltabaseoffset": _any,
    "sparse.expectfilesoutsideofpatterns": _any,
    # git-lfs records its format version; its filter and transfer keys are programs.
    "lfs.repositoryformatversion": _any,
}
# Whole sections whose every key, with or without subsection, only chooses
# colours or hint messages.
INERT_SECTIONS = frozenset({"color", "advice"})


def shape(section: str, subsection: str | None, key: str) -> str:
    """The table form of a key: `section.key`, or `section.*.key` with a subsection."""
    return f"{section}.{key}" if subsection is None else f"{section}.*.{key}"


def trusted(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether a user-trusted pattern (`remote.*.uploadpack`, `core.sshcommand`) covers `name`."""
    from fnmatch import fnmatchcase

    lowered = name.lower()
    return any(fnmatchcase(lowered, p.lower()) for p in patterns)


def why_not_inert(section: str, subsection: str | None, key: str, value: str | None,
                  bases: tuple[str, ...]) -> str | None:
    """None when the key and value are known to be inert, else the reason."""
    if section in INERT_SECTIONS:
        return None
    check = INERT.get(shape(section, subsection, key))
    if check is None and subsection is None:
        check = INERT.get(f"{section}.*")   # pager.CMD, alias.NAME, pretty.NAME
    if check is None:
        return "the key is not on the list of keys known to run nothing"
    return check(value, bases)
