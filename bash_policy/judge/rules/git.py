"""git subcommands whose operands decide between reading and writing.

`git branch NAME` creates a branch and `git branch --list NAME` lists; `git
config NAME` reads and `git config NAME VALUE` writes; `git stash` alone saves
and resets the working tree.  Formats matter too: the pretty-format
placeholders `%G?`, `%GS`... run gpg.  Checked against git-man 2.39.5.
"""

from __future__ import annotations

from . import repository

_BUILTIN_PRETTY = frozenset({"oneline", "short", "medium", "full", "fuller", "reference",
                             "email", "raw", "mboxrd"})
# Flags that put `git branch` / `git tag` in list mode, where operands are patterns.
# Not --verbose: `git branch -v NAME` creates NAME (git 2.39.5, tried).
_BRANCH_LISTING = frozenset({"--list", "--contains", "--no-contains", "--merged",
                             "--no-merged", "--points-at"})
_TAG_LISTING = frozenset({"--list", "-n", "--contains", "--no-contains", "--merged",
                          "--no-merged", "--points-at"})
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list",
                           "--get-color", "--get-colorbool"})
_CONFIG_WRITES = frozenset({"set", "unset", "rename-section", "remove-section", "edit"})
_STASH_READS = frozenset({"list", "show"})
_REFLOG_WRITES = frozenset({"expire", "delete", "drop"})


def _named(inv, names) -> list:
    """The (flag, value, word) entries whose flag has one of `names`."""
    return [entry for entry in inv.flags if set(entry[0].names) & names]


def git_global(inv, ctx) -> None:
    """`--exec-path` alone prints a directory; with a value git runs its programs from there."""
    for flag, value, word in _named(inv, {"--exec-path"}):
        if value is not None:
            ctx.deny("BP400", word.span,
                     "`git --exec-path=PATH` runs git's subcommands from the programs in PATH",
                     "drop the value: `git --exec-path` prints the directory", "exec")
    repository.git_repo_config(inv, ctx)  # the repository's own config (hooks/repository.py)


def git_log(inv, ctx) -> None:
    """Check --pretty/--format values: signature placeholders run gpg."""
    for flag, value, word in _named(inv, {"--pretty", "--format"}):
        if not value:
            continue  # bare --pretty is `medium`; an empty format prints no header
        if inv.spec.name in ("for-each-ref", "branch", "tag"):
            _check_ref_format(value, word, ctx)
        else:
            _check_pretty(value, word, ctx)


def _check_pretty(value: str, word, ctx) -> None:
    body = value
    for prefix in ("format:", "tformat:"):
        if value.startswith(prefix):
            body = value[len(prefix):]
            break
    else:
        if "%" not in value:
            if value not in _BUILTIN_PRETTY:
                ctx.deny("BP403", word.span,
                         f"`{value}` is not a built-in format, so git looks it up as `pretty.{value}` "
                         "in config, which the checker cannot read",
                         f"use one of {', '.join(sorted(_BUILTIN_PRETTY))}, or write the format "
                         "itself: --format='%h %s'")
            return
    i = 0
    while i < len(body) - 1:
        if body[i] == "%":
            if body[i + 1] == "G":
                ctx.deny("BP400", word.span,
                         f"the placeholder `%{body[i + 1:i + 3]}` in `{value}` runs gpg to verify "
                         "the commit's signature",
                         "drop the %G… placeholders; verifying signatures needs leaving plan mode",
                         "exec")
                return
            i += 2
            continue
        i += 1


def _check_ref_format(value: str, word, ctx) -> None:
    if "%(signature" in value:
        ctx.deny("BP400", word.span,
                 f"the atom `%(signature…)` in `{value}` runs gpg to verify signatures",
                 "drop the %(signature) atoms", "exec")


def _listing_operands(inv, ctx, listing: frozenset[str], what: str) -> None:
    git_log(inv, ctx)
    if not inv.positionals or _named(inv, listing):
        return
    name = inv.positionals[0]
    ctx.deny("BP406", name.span, f"`git {what} {name.text}` creates a {what} named `{name.text}`",
             f"to list {what}es matching a pattern, write `git {what} --list '{name.text}'`"
             if what == "branch" else
             f"to list tags matching a pattern, write `git tag -l '{name.text}'`", "state")


def git_branch(inv, ctx) -> None:
    """Operands are patterns only in list mode; otherwise they name a new branch."""
    _listing_operands(inv, ctx, _BRANCH_LISTING, "branch")


def git_tag(inv, ctx) -> None:
    """Operands are patterns only in list mode; otherwise they name a new tag."""
    _listing_operands(inv, ctx, _TAG_LISTING, "tag")


def git_config(inv, ctx) -> None:
    """Allow the reading forms of `git config`; a NAME VALUE pair sets a value."""
    if _named(inv, _CONFIG_READS):
        return
    pos = inv.positionals
    if not pos:
        return
    first = pos[0].value
    if first in _CONFIG_WRITES:
        ctx.deny("BP405", pos[0].span, f"`git config {first}` changes the config",
                 "read with `git config --get NAME` or `git config --list`", "state")
    elif first == "list" and len(pos) == 1:
        return
    elif first == "get" and len(pos) == 2:
        return
    elif len(pos) > 1:
        ctx.deny("BP406", pos[1].span,
                 f"`git config {pos[0].text} {pos[1].text}` sets `{pos[0].text}` in the config",
                 f"read the value with `git config --get {pos[0].text}`", "state")
    elif first is None:
        ctx.deny("BP203", pos[0].span, f"`{pos[0].text}` may expand to a name and a value, which sets config",
                 "write the config name literally")


def git_stash(inv, ctx) -> None:
    """Only `git stash list` and `git stash show`, with the subcommand first."""
    git_log(inv, ctx)
    pos = inv.positionals
    first_flag = min((word.span.start for _, _, word in inv.flags), default=None)
    if not pos or (first_flag is not None and first_flag < pos[0].span.start):
        anchor = inv.flags[0][2].span if inv.flags else inv.words[0].span
        ctx.deny("BP405", anchor,
                 "`git stash` without `list` or `show` first is `git stash push`: it saves your "
                 "changes and resets the working tree",
                 "use `git stash list` or `git stash show -p stash@{0}`", "state")
        return
    if pos[0].value not in _STASH_READS:
        ctx.deny("BP405", pos[0].span,
                 f"`git stash` with `{pos[0].text}` instead of `list` or `show` saves, applies or "
                 "drops stashes",
                 "use `git stash list` or `git stash show -p stash@{0}`", "state")


def git_reflog(inv, ctx) -> None:
    """`git reflog [show]` reads; expire, delete and drop rewrite reflogs."""
    git_log(inv, ctx)
    if inv.positionals and inv.positionals[0].value in _REFLOG_WRITES:
        word = inv.positionals[0]
        ctx.deny("BP405", word.span, f"`git reflog {word.value}` deletes reflog entries",
                 "use `git reflog` or `git reflog show REF` to read them", "state")


def git_remote_show(inv, ctx) -> None:
    """`git remote show NAME` asks the remote unless -n is given."""
    if inv.positionals and not _named(inv, {"-n"}):
        word = inv.positionals[0]
        ctx.deny("BP406", word.span,
                 f"`git remote show {word.text}` asks the remote `{word.text}` for its branches "
                 "over the network",
                 f"add -n to show what is known locally: `git remote show -n {word.text}`", "network")
