"""git subcommands whose operands decide between reading and writing.

`git branch NAME` creates a branch and `git branch --list NAME` lists; `git
config NAME` reads and `git config NAME VALUE` writes; `git stash` alone saves
and resets the working tree.  Formats matter too: the pretty-format
placeholders `%G?`, `%GS`... run gpg.  Checked against git-man 2.39.5.
"""

from __future__ import annotations

from ...read.model import Word
from ...records import dataclass
from ...repo.gitkeys import SIGNATURE_PLACEHOLDER, why_not_inert
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .repository import git_repo_config

_BUILTIN_PRETTY = frozenset({"oneline", "short", "medium", "full", "fuller", "reference",
                             "email", "raw", "mboxrd"})
# Flags that put `git branch` / `git tag` in list mode, where operands are patterns.
# Not --verbose: `git branch -v NAME` creates NAME (git 2.39.5, tried).
_BRANCH_LISTING = frozenset({"--list", "--contains", "--no-contains", "--merged",
                             "--no-merged", "--points-at"})
_TAG_LISTING = frozenset({"--list", "-n", "--contains", "--no-contains", "--merged",
                          "--no-merged", "--points-at"})
_CONFIG_WRITES = frozenset({"set", "unset", "rename-section", "remove-section", "edit"})
_STASH_READS = frozenset({"list", "show"})
_REFLOG_WRITES = frozenset({"expire", "delete", "drop"})
_DELETES = {"clean": "deletes untracked files", "prune": "deletes unreachable objects"}


@dataclass(frozen=True)
class ExecPathValue(Problem):
    code = Code.BP400
    effect = Effect.EXEC
    message_format = "`git --exec-path=PATH` runs git's subcommands from the programs in PATH"
    hint_format = "drop the value: `git --exec-path` prints the directory"


@dataclass(frozen=True)
class CommandLineKey(Problem):
    code = Code.BP400
    effect = Effect.EXEC
    message_format = ("`git -c {setting}`: {reason}, and config such as core.pager, core.fsmonitor or "
                      "diff.external names programs git runs")
    hint_format = "drop -c, or set only keys that run nothing (color.ui=never, core.pager=cat)"
    setting: str | None
    reason: str


@rule("git_global", codes=[Code.BP400, Code.BP601],
      deny=["git --exec-path=/tmp status", "git -c core.pager=less log", "git -c core.fsmonitor=./x status",
            "git -c alias.x=!sh status", "git -c include.path=/tmp/x.cfg status",
            "git -c core.hooksPath=./hooks status"],
      allow=["git --exec-path", "git -C src status", "git -c color.ui=never log -1",
             "git -c core.pager=cat log", "git -c core.quotepath=false status"])
def git_global(inv, ctx) -> None:
    """`git --exec-path=PATH`, `-c` keys not known to be inert, and repositories whose config is not.
    With a value git runs its subcommands from PATH; `-c NAME=VALUE` is judged
    by the same allowlist of inert keys and values as the repository's config
    (bash_policy/repo/gitkeys.py), which is read as git would read it
    (bash_policy/repo/gitrepo.py); a partial clone denies commands that fetch."""
    for use in inv.uses("--exec-path"):
        if use.value is not None:
            ctx.deny(ExecPathValue(), use.word.span)
    bases = tuple(d for d in ctx.directories() if d is not None)
    for use in inv.uses("-c"):
        reason = _command_line_key(use.value or "", bases)
        if reason is not None:
            ctx.deny(CommandLineKey(use.value, reason), (use.value_word or use.word).span)
    git_repo_config(inv, ctx)


# Config sections whose inert keys only change how git displays and reads: the
# ones `-c` may set.
_COMMAND_LINE_SECTIONS = frozenset({"core", "color", "advice", "log", "diff", "pager", "format", "pretty",
                                    "column", "i18n", "grep", "status", "blame", "branch", "tag", "user"})


# Inert in a repository's config only because the checker looks at what they
# name there (the hooks in core.hooksPath, the work tree) or hardening overrides them.
_COMMAND_LINE_UNCHECKED = frozenset({"core.hookspath", "core.worktree", "core.editor"})


def _command_line_key(text: str, bases: tuple[str, ...]) -> str | None:
    """Why `git -c NAME[=VALUE]` may run something (None: inert).  git splits
    NAME at its first and last dots; section and key are case-insensitive, a
    subsection is not, and NAME alone means true."""
    name, eq, value = text.partition("=")
    section, dot, rest = name.partition(".")
    subsection, _, key = rest.rpartition(".")
    if not dot or not key or not section:
        return "git refuses a name without a section and a key"
    if section.lower() not in _COMMAND_LINE_SECTIONS:
        # Keys inert in a repository's config because the checker looks further
        # (include.path is followed, remote.*.promisor makes lazy fetches deny)
        # are not inert on the command line, where nothing looks further.
        return f"only display settings ({', '.join(sorted(_COMMAND_LINE_SECTIONS))}) are allowed with -c"
    if f"{section}.{key}".lower() in _COMMAND_LINE_UNCHECKED:
        return "the repository reader judges what it points at, and on the command line nothing does"
    return why_not_inert(section.lower(), subsection or None, key.lower(), value if eq else "true", bases)


@rule("git_log", codes=[Code.BP400, Code.BP403],
      deny=["git log --format='%G?'", "git log --pretty=mine", "git for-each-ref --format='%(signature)'"],
      allow=["git log --format='%h %s'", "git log --pretty=oneline", 'git log --author="$USER"',
             'git log --oneline -- "$f"'],
      reads=("--pretty", "--format"), unknown_operands=True)
def git_log(inv, ctx) -> None:
    """--pretty/--format values that run gpg or name a format from config.
    Signature placeholders (`%G?`, `%(signature)`) verify signatures with gpg;
    a format name that is not built in is looked up as `pretty.NAME` in config."""
    for use in inv.uses("--pretty", "--format"):
        if not use.value:
            continue  # bare --pretty is `medium`; an empty format prints no header
        if inv.spec.name in ("for-each-ref", "branch", "tag"):
            _check_ref_format(use.value, use.word, ctx)
        else:
            _check_pretty(use.value, use.word, ctx)


@rule("git_shortlog", codes=[Code.BP400, Code.BP403],
      deny=["git shortlog --format='%G?' HEAD --"],
      allow=["git shortlog -sn HEAD --\necho x", "git shortlog -sn", "git shortlog --format='%h %s' HEAD --"],
      reads=("--pretty", "--format"), unknown_operands=True)
def git_shortlog(inv, ctx) -> None:
    """`git shortlog` without a revision, which summarises a log read from standard input.
    git reads stdin whenever no revision is named, even with --all or --glob
    when no ref matches (git 2.39.5, tried); an operand is surely a revision
    only before `--` (otherwise an existing file is a path), so anything else
    counts as reading stdin: the script's later lines when piped into bash
    (corpora/redteam.txt, RT2 F1)."""
    git_log(inv, ctx)
    ends = [w for w in inv.words if w.value == "--"
            and not any(use.value_word is w or use.word is w for use in inv.flags)]
    if not (ends and any(w.span.start < ends[0].span.start for w in inv.positionals)):
        ctx.reads_stdin = True


@dataclass(frozen=True)
class PrettyFromConfig(Problem):
    code = Code.BP403
    message_format = ("`{name}` is not a built-in format, so git looks it up as `pretty.{name}` in "
                      "config, which the checker cannot read")
    hint_format = "use one of {builtin}, or write the format itself: --format='%h %s'"
    name: str
    builtin: str = ", ".join(sorted(_BUILTIN_PRETTY))


@dataclass(frozen=True)
class SignaturePlaceholder(Problem):
    code = Code.BP400
    effect = Effect.EXEC
    message_format = "the placeholder `%{placeholder}` in `{value}` runs gpg to verify the commit's signature"
    hint_format = "drop the %G… placeholders; verifying signatures needs leaving plan mode"
    placeholder: str
    value: str


@dataclass(frozen=True)
class SignatureAtom(Problem):
    code = Code.BP400
    effect = Effect.EXEC
    message_format = "the atom `%(signature…)` in `{value}` runs gpg to verify signatures"
    hint_format = "drop the %(signature) atoms"
    value: str


def _check_pretty(value: str, word, ctx) -> None:
    body = value
    for prefix in ("format:", "tformat:"):
        if value.startswith(prefix):
            body = value[len(prefix):]
            break
    else:
        if "%" not in value:
            if value not in _BUILTIN_PRETTY:
                ctx.deny(PrettyFromConfig(value), word.span)
            return
    found = SIGNATURE_PLACEHOLDER.search(body)
    if found:
        shown = body[found.end() - 2:found.end() + 2].lstrip("%")
        ctx.deny(SignaturePlaceholder(shown, value), word.span)


def _check_ref_format(value: str, word, ctx) -> None:
    if "%(signature" in value:
        ctx.deny(SignatureAtom(value), word.span)


@dataclass(frozen=True)
class CreatesRef(Problem):
    code = Code.BP406
    effect = Effect.STATE
    message_format = "`git {what} {name.text}` creates a {what} named `{name.text}`"
    what: str  # "branch" or "tag"
    name: Word

    def hint(self) -> str:
        if self.what == "branch":
            return f"to list {self.what}es matching a pattern, write `git {self.what} --list '{self.name.text}'`"
        return f"to list tags matching a pattern, write `git tag -l '{self.name.text}'`"


def _listing_operands(inv, ctx, listing: frozenset[str], what: str) -> None:
    git_log(inv, ctx)
    if not inv.positionals or inv.has(*listing) or inv.modes():
        return  # a mode (`git branch --show-current x` prints the branch) or a listing filter
    name = inv.positionals[0]
    ctx.deny(CreatesRef(what, name), name.span)


@rule("git_branch", codes=[Code.BP406, Code.BP400],
      deny=["git branch new-feature", "git branch -v new"], allow=["git branch --list 'f*'", "git branch -a"])
def git_branch(inv, ctx) -> None:
    """`git branch NAME` outside list mode, which creates a branch.
    Operands are patterns only with --list and the other listing flags."""
    _listing_operands(inv, ctx, _BRANCH_LISTING, "branch")


@rule("git_tag", codes=[Code.BP406],
      deny=["git tag v9"], allow=["git tag -l 'v*'", "git tag"])
def git_tag(inv, ctx) -> None:
    """`git tag NAME` outside list mode, which creates a tag.
    Operands are patterns only with -l/--list and the other listing flags."""
    _listing_operands(inv, ctx, _TAG_LISTING, "tag")


@dataclass(frozen=True)
class ConfigWrites(Problem):
    code = Code.BP405
    effect = Effect.STATE
    message_format = "`git config {subcommand}` changes the config"
    hint_format = "read with `git config --get NAME` or `git config --list`"
    subcommand: str


@dataclass(frozen=True)
class ConfigSets(Problem):
    code = Code.BP406
    effect = Effect.STATE
    message_format = "`git config {name.text} {value.text}` sets `{name.text}` in the config"
    hint_format = "read the value with `git config --get {name.text}`"
    name: Word
    value: Word


@dataclass(frozen=True)
class ConfigNameExpands(Problem):
    code = Code.BP203
    message_format = "`{word.text}` may expand to a name and a value, which sets config"
    hint_format = "write the config name literally"
    word: Word


@rule("git_config", codes=[Code.BP405, Code.BP406, Code.BP203],
      deny=["git config user.name x", "git config unset user.name"],
      allow=["git config --get user.name", "git config user.name", "git config --list"])
def git_config(inv, ctx) -> None:
    """`git config` forms that write: NAME VALUE, and set/unset/edit subcommands.
    A single NAME reads; a second operand is the value to set.  With a reading
    mode (--get, --list …: the spec's `modes`, which git refuses two of) the
    operands are names and patterns."""
    if inv.modes():
        return
    pos = inv.positionals
    if not pos:
        return
    first = pos[0].value
    if first in _CONFIG_WRITES:
        ctx.deny(ConfigWrites(first), pos[0].span)
    elif first == "list" and len(pos) == 1:
        return
    elif first == "get" and len(pos) == 2:
        return
    elif len(pos) > 1:
        ctx.deny(ConfigSets(pos[0], pos[1]), pos[1].span)
    elif first is None:
        ctx.deny(ConfigNameExpands(pos[0]), pos[0].span)


@dataclass(frozen=True)
class StashPushes(Problem):
    code = Code.BP405
    effect = Effect.STATE
    message_format = ("`git stash` without `list` or `show` first is `git stash push`: it saves your "
                      "changes and resets the working tree")
    hint_format = "use `git stash list` or `git stash show -p stash@{{0}}`"


@dataclass(frozen=True)
class StashChanges(Problem):
    code = Code.BP405
    effect = Effect.STATE
    message_format = "`git stash` with `{word.text}` instead of `list` or `show` saves, applies or drops stashes"
    hint_format = "use `git stash list` or `git stash show -p stash@{{0}}`"
    word: Word


@rule("git_stash", codes=[Code.BP405, Code.BP400, Code.BP403],
      deny=["git stash", "git stash pop", "git stash -p list"], allow=["git stash list", "git stash show -p"])
def git_stash(inv, ctx) -> None:
    """`git stash` other than `list` and `show` with the subcommand first.
    Plain `git stash` is `git stash push`: it saves changes and resets the tree."""
    git_log(inv, ctx)
    pos = inv.positionals
    first_flag = min((use.word.span.start for use in inv.flags), default=None)
    if not pos or (first_flag is not None and first_flag < pos[0].span.start):
        anchor = inv.flags[0].word.span if inv.flags else inv.words[0].span
        ctx.deny(StashPushes(), anchor)
        return
    if pos[0].value not in _STASH_READS:
        ctx.deny(StashChanges(pos[0]), pos[0].span)


@dataclass(frozen=True)
class ReflogWrites(Problem):
    code = Code.BP405
    effect = Effect.STATE
    message_format = "`git reflog {subcommand}` deletes reflog entries"
    hint_format = "use `git reflog` or `git reflog show REF` to read them"
    subcommand: str


@rule("git_reflog", codes=[Code.BP405, Code.BP400, Code.BP403],
      deny=["git reflog expire --all"], allow=["git reflog", "git reflog show HEAD"])
def git_reflog(inv, ctx) -> None:
    """`git reflog expire`, `delete` and `drop`, which rewrite reflogs.
    `git reflog [show]` only reads."""
    git_log(inv, ctx)
    if inv.positionals and inv.positionals[0].value in _REFLOG_WRITES:
        word = inv.positionals[0]
        ctx.deny(ReflogWrites(word.value), word.span)


@dataclass(frozen=True)
class DeletesWithoutDryRun(Problem):
    code = Code.BP405
    effect = Effect.STATE
    message_format = "`git {name}` without -n/--dry-run {deletes}"
    hint_format = "add -n to list what it would delete: `git {name} -n`"
    name: str
    deletes: str


@rule("git_dry_run", codes=[Code.BP405],
      deny=["git clean -fd", "git prune"], allow=["git clean -n -d", "git prune --dry-run -v"],
      reads=("--dry-run",))
def git_dry_run(inv, ctx) -> None:
    """`git clean` and `git prune` without -n/--dry-run, which delete.
    With -n they only list what they would delete (git 2.39.5 under strace:
    nothing unlinked, even with -f); --no-dry-run is not an allowed flag."""
    if inv.has("--dry-run"):
        return
    name = inv.spec.name
    word = next((w for w in inv.words if w.value == name), inv.words[0])
    ctx.deny(DeletesWithoutDryRun(name, _DELETES[name]), word.span)


@dataclass(frozen=True)
class HelpOpensManual(Problem):
    code = Code.BP405
    effect = Effect.INTERACTIVE
    message_format = ("`git help {word.text}` opens the manual page of `{word.text}` in man (a pager), "
                      "info or a web browser")
    hint_format = "use `git {word.text} -h` for a usage summary, or `git help -a` to list commands"
    word: Word


@rule("git_help", codes=[Code.BP405],
      deny=["git help log", "git help -a log"], allow=["git help -a", "git help -g", "git help"])
def git_help(inv, ctx) -> None:
    """`git help NAME`, which opens a manual page.
    With a name git runs man (a pager), info or a web browser; without one it
    prints lists of commands, guides or config names."""
    if inv.positionals:
        word = inv.positionals[0]
        ctx.deny(HelpOpensManual(word), word.span)


@dataclass(frozen=True)
class RemoteShowAsks(Problem):
    code = Code.BP406
    effect = Effect.NETWORK
    message_format = "`git remote show {word.text}` asks the remote `{word.text}` for its branches over the network"
    hint_format = "add -n to show what is known locally: `git remote show -n {word.text}`"
    word: Word


@rule("git_remote_show", codes=[Code.BP406],
      deny=["git remote show origin"], allow=["git remote show -n origin"])
def git_remote_show(inv, ctx) -> None:
    """`git remote show NAME` without -n, which asks the remote over the network.
    With -n git shows what it knows locally."""
    if inv.positionals and not inv.has("-n"):
        word = inv.positionals[0]
        ctx.deny(RemoteShowAsks(word), word.span)
