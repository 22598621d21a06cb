"""What a word can become at run time, when its value is not known.

The engine allows a word whose value it cannot know only where no value it
can take does harm (issue 11): a read operand of a program whose every flag is
harmless, or a word that is one word and cannot start with `-`.  This module
computes those two facts from the word's expansions and what the script itself
says about its variables (a `for` loop's words, a `while read` loop's input):

- `single`: bash passes exactly one word.  Quoted expansions, a tilde and a
  process substitution are one word; an unquoted expansion is split at blanks
  and globbed, a glob or brace expansion may be many.
- `dash_safe`: no word it becomes starts with `-`, so no program reads it as
  a flag: a literal prefix that does not start with `-` (`src/*.py`,
  `"./$f"`), a tilde or `"$PWD"`/`"$HOME"` (absolute paths from the harness's
  environment), `/dev/fd/N` from a process substitution, or a loop variable
  whose every value is such a word — and no unquoted expansion in it is split
  into further words, which may start with `-` (`./$f` with f='a --pre=sh'
  is `./a --pre=sh`; `$PWD` splits where the directory's name holds a blank).
  Bash never imports IFS, and a prefix `IFS=…` does not change how the
  command's own words split, so words split at blanks only.
"""

from __future__ import annotations

import re

from ..read.model import (
    ANSI_C,
    ARITHMETIC,
    BRACE,
    COMMAND_SUB,
    EXTGLOB,
    FOUND,
    FOUND_PATHS,
    GLOB,
    LOCALE,
    PARAMETER,
    PROCESS_SUB,
    TILDE,
    Expansion,
    Word,
)
from ..records import dataclass

# Variables whose value is an absolute path whenever bash runs: PWD is set by
# bash itself; HOME is the harness's, the same trust as a tilde.
_ABSOLUTE = frozenset({"PWD", "HOME"})
_NAME = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\Z")
_IFS_OR_GLOB = re.compile(r"[ \t\n*?\[]")
_LOCAL_NAME = re.compile(r"[a-z][a-z0-9_]*")
# Lower-case names programs read from the environment: the proxy variables,
# and the package managers' configuration (a harness started by npx or `npm
# exec` exports npm_config_userconfig, _globalconfig, _cache and more).
_READ_BY_PROGRAMS = re.compile(r".*_proxy|(?:npm|pnpm|yarn)_.*")


def local_name(name: str) -> bool:
    """Whether a loop or `read` may assign `name`: a shell-local name.  A
    variable the harness exported (PAGER, GIT_*, LD_PRELOAD, http_proxy,
    npm_config_userconfig) would change what every later program runs with,
    so upper-case names and the lower-case ones programs read are not local.  Nor are
    names that start with `_`, which harnesses use for the shell code they
    wrap around the command: Gemini CLI 0.61.0 runs
    `_bgpids_file=TMP ( trap 'jobs -p > "$_bgpids_file"' EXIT ⏎ CMD ⏎ )`, so
    `for _bgpids_file in keep.txt; do :; done` truncated keep.txt."""
    return bool(_LOCAL_NAME.fullmatch(name)) and not _READ_BY_PROGRAMS.fullmatch(name)


@dataclass(frozen=True)
class Variable:
    """What the script lets a variable hold: `dash_safe` when no value can start
    with `-` (or be empty), `splits_safe` when an unquoted use stays one word,
    `words` when the loop's words say every value (`for f in a.txt ./*`)."""

    dash_safe: bool
    splits_safe: bool
    words: tuple[Word, ...] | None = None


def loop_variable(words) -> Variable:
    """The variable of `for NAME in WORDS`: each word's value (or the files a
    glob matches, which start with its literal prefix)."""
    words = tuple(words)
    dash_safe = splits_safe = True
    known: tuple[Word, ...] | None = words
    for word in words:
        if word.value is not None:
            dash_safe &= word.value != "" and not word.value.startswith("-")
            splits_safe &= not _IFS_OR_GLOB.search(word.value)
        elif word.pathname_only and GLOB in {e.kind for e in word.expansions} \
                and TILDE not in {e.kind for e in word.expansions}:
            dash_safe &= word.cannot_start_with_dash  # each match starts with the prefix
            splits_safe = False  # a file name may hold blanks
        else:
            dash_safe = splits_safe = False
            known = None
    return Variable(dash_safe, splits_safe, known)


UNKNOWN = Variable(False, False)


def working_directory(directories) -> Variable:
    """`$PWD` where the command runs: an absolute path, which stays one word
    unquoted only when each directory it may be is known and holds no blank
    or glob character."""
    return Variable(True, all(d is not None and not _IFS_OR_GLOB.search(d) for d in directories))


def _name(source: str, expansion) -> str | None:
    match = _NAME.match(source[expansion.span.start:expansion.span.end])
    return match[1] if match else None


def single(word: Word, source: str, variables: dict[str, Variable]) -> bool:
    """Whether bash passes exactly one word for `word`."""
    if word.value is not None:
        return True
    for e in word.expansions:
        if e.kind in (GLOB, BRACE, EXTGLOB):
            return False
        if e.kind in (TILDE, PROCESS_SUB, FOUND, ANSI_C, LOCALE, ARITHMETIC) or e.quoted:
            continue
        if e.kind == PARAMETER and variables.get(_name(source, e) or "", UNKNOWN).splits_safe:
            continue
        return False
    return True


def _splits(expansion: Expansion, source: str, variables: dict[str, Variable]) -> bool:
    """Whether bash may split the expansion's result into several words (or
    glob it): an unquoted parameter, command substitution or arithmetic."""
    if expansion.quoted or expansion.kind in (TILDE, PROCESS_SUB, FOUND, FOUND_PATHS, GLOB, BRACE, EXTGLOB,
                                              ANSI_C, LOCALE, ARITHMETIC):
        return False  # arithmetic gives digits and `-` only (the reader admits no names)
    if expansion.kind == PARAMETER:
        return not variables.get(_name(source, expansion) or "", UNKNOWN).splits_safe
    return True


def quoted(word: Word) -> Word:
    """The word as if written inside double quotes: its expansions not split."""
    return Word(word.text, word.span, word.value,
                tuple(Expansion(e.kind, e.span, e.body, True) for e in word.expansions), word.prefix)


def dash_safe(word: Word, source: str, variables: dict[str, Variable]) -> bool:
    """Whether no word `word` becomes can start with `-`."""
    if word.value is not None:
        return not word.value.startswith("-")
    if any(_splits(e, source, variables) for e in word.expansions):
        return False
    if word.prefix:
        return not word.prefix.startswith("-")
    first = word.expansions[0]
    if first.kind in (TILDE, PROCESS_SUB, FOUND, FOUND_PATHS):
        return True
    if first.kind == PARAMETER:
        name = _name(source, first)
        return name in _ABSOLUTE or variables.get(name or "", UNKNOWN).dash_safe
    return False


def may_be_empty_after_prefix(word: Word) -> bool:
    """Whether what follows the literal prefix of `word` (`-g` in `-g"$x"`)
    may expand to nothing: no literal text after it, and no expansion that
    always gives something (arithmetic's digits, a process substitution's
    /dev/fd path, a path find fills in).  Quotes and backslashes are not
    counted as text, so an escaped character errs toward empty."""
    if any(e.kind in (ARITHMETIC, PROCESS_SUB, FOUND, FOUND_PATHS) for e in word.expansions):
        return False
    start = word.span.start
    outside = "".join(c for i, c in enumerate(word.text)
                      if not any(e.span.start <= start + i < e.span.end for e in word.expansions))
    return len(outside.replace('"', "").replace("'", "").replace("\\", "")) <= len(word.prefix)


def plus_safe(word: Word, source: str) -> bool:
    """For a program that reads `+X` words as options too (lsof): whether no
    word `word` becomes can start with `+`.  A literal prefix that does not, a
    tilde, `/dev/fd/N` or `$PWD`/`$HOME`; not a loop variable or a path find
    fills in, whose values are not followed that far."""
    if word.value is not None:
        return not word.value.startswith("+")
    if word.prefix:
        return not word.prefix.startswith("+")
    first = word.expansions[0]
    return first.kind in (TILDE, PROCESS_SUB) or (first.kind == PARAMETER
                                                  and _name(source, first) in _ABSOLUTE)


def instances(word: Word, source: str, variables: dict[str, Variable]) -> tuple[Word, ...]:
    """The words of the loop that says what `word` can be: `"$f"` in `for f in
    a ./*` is `a` or a match of `./*`, judged as those (special files,
    standard input).  Otherwise the word itself."""
    if word.value is not None or len(word.expansions) != 1 or word.expansions[0].kind != PARAMETER:
        return (word,)
    name = _name(source, word.expansions[0])
    known = variables.get(name or "", UNKNOWN).words
    if known is None or word.text not in (f"${name}", f"${{{name}}}", f'"${name}"', f'"${{{name}}}"'):
        return (word,)
    if word.expansions[0].quoted:
        return known
    out: list[Word] = []
    for one in known:  # unquoted: a literal value is split at blanks, each piece globbed
        pieces = (one.value or "").split() if one.value is not None else None
        if pieces is None:
            out.append(one)  # a glob's matches (a name with blanks is not followed further)
        elif any(_IFS_OR_GLOB.search(piece) for piece in pieces):
            return (word,)
        else:
            out += [Word(one.text, one.span, piece) for piece in pieces]
    return tuple(out)


def unknown_kinds_allowed(word: Word) -> bool:
    """Expansions the engine can reason about: parameters, command and process
    substitutions whose commands were read, tildes, globs, and arithmetic of
    numbers and operators (the reader denies names, which are evaluated as
    expressions and can run code): its value is a number, possibly negative.
    ANSI-C and locale quoting, brace and extended globs stay denied (BP204,
    BP206, BP207)."""
    return all(e.kind in (PARAMETER, TILDE, GLOB, FOUND, FOUND_PATHS, ARITHMETIC)
               or (e.kind in (COMMAND_SUB, PROCESS_SUB) and e.body is not None)
               for e in word.expansions)


def found_path(word: Word, many: bool = False) -> Word:
    """A word of `find -exec CMD ;` with each `{}` standing for the path find
    fills in: a path under a starting point (or `./NAME` with -execdir), one
    word that never starts with `-`; with `-exec CMD {} +` (`many`), every
    path found so far, as many words."""
    if word.value is None or "{}" not in word.value:
        return word
    prefix = word.value.partition("{}")[0]
    return Word(word.text, word.span, None, (Expansion(FOUND_PATHS if many else FOUND, word.span),),
                prefix)
