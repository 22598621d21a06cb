"""The client's own shell: what it does to a command before and while it runs.

The checker reasons about `bash -c CMD` with default options, no functions
or aliases and stdin closed.  A client that runs the command in a shell of
its own (Claude Code sources a snapshot of the user's login shell before
`eval 'CMD'`; Gemini CLI gives it a terminal in interactive mode) runs
something else there.  A `ShellState`, built by the hook adapter from the
client's execution profile (bash_policy/integrations/profiles/), says what
that shell holds; `Policy.shell` carries it into the check and the engine
calls the functions below at four points:

* `check_script`: state that changes every command (state that cannot be
  read, options bash-policy does not model, aliases named like reserved
  words, a relative PATH entry) and words whose expansion an option changes
  (globstar's `**`, nocaseglob);
* `check_names`: the name the shell looks up for a simple command, when a
  function or an alias defines it: what runs is the body, checked in its
  place (`"$@"` replaced by the call's arguments);
* `check_walks`: programs that read files of their own in every directory
  they walk (ignore files, FIFOs), where the client does not kill a command
  that hangs;
* `stdin_denied`: programs that read standard input the client keeps open
  (its socket, a terminal).

Nothing here names a client or a program: the state and the profile hold them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ..read.model import GLOB, Command, For, Word, walk
from ..records import dataclass, field, replace
from .codes import Code, Effect
from .problems import Problem
from .rules import engine_rule
from .special import on_disk

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .context import Appended, Context

# bash's reserved words: an alias named like one changes how bash reads the
# command (`alias if=…` turns `if true; then …` into a syntax error, tried).
RESERVED = frozenset("! [[ ]] { } case coproc do done elif else esac fi for function if in "
                     "select then time until while".split())

# Shell options (shopt and set -o) and what bash-policy knows of them when on.
# HARMLESS: interactive-only, output-only, or they make fewer commands run.
# Every option not listed here, when on, denies every command (BP701).
HARMLESS_OPTIONS = frozenset({
    # shopt
    "autocd", "assoc_expand_once", "cdspell", "checkhash", "checkjobs", "checkwinsize", "cmdhist",
    "complete_fullquote", "direxpand", "dirspell", "execfail", "extdebug", "extquote",
    "failglob", "force_fignore", "globasciiranges", "globskipdots", "gnu_errfmt", "histappend",
    "histreedit", "histverify", "hostcomplete", "huponexit", "inherit_errexit",
    "interactive_comments", "lithist", "localvar_inherit", "localvar_unset", "login_shell",
    "mailwarn", "no_empty_cmd_completion", "noexpand_translation", "patsub_replacement",
    "progcomp", "progcomp_alias", "promptvars", "restricted_shell", "shift_verbose",
    "sourcepath", "varredir_close", "xpg_echo", "nocasematch", "dotglob", "expand_aliases",
    # set -o
    "allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall",
    "histexpand", "history", "ignoreeof", "interactive-comments", "monitor", "noclobber",
    "noexec", "noglob", "nolog", "notify", "nounset", "onecmd", "pipefail", "privileged",
    "verbose", "vi", "xtrace",
})
# Options bash-policy follows word by word or command by command (below);
# extglob needs nothing: every extended pattern is denied already (a syntax
# error without it).
FOLLOWED_OPTIONS = frozenset({"globstar", "nocaseglob", "nullglob", "cdable_vars", "extglob"})
# Options on in `bash -c` that the checker's reading takes as on, and what turning
# each off changes (red team RT-C: with globskipdots off, `.*/pipe` matched ../pipe).
REQUIRED_OPTIONS = {
    "interactive_comments": "how bash reads `#`",
    "globskipdots": "what `.*` matches (`.` and `..` too)",
    "braceexpand": "whether `{a,b}` expands",
    "globasciiranges": "what a bracket range in a glob matches",
    "patsub_replacement": "what `&` means in ${name/pattern/string}",
    "extquote": "how $'...' and $\"...\" read inside ${...} in double quotes",
}

CLIENT_STATE = engine_rule("client_shell_state", """Commands in a client's shell whose state is unknown or not modelled.
    A client that runs commands in a shell of its own replays the user's
    options, functions and aliases there (Claude Code's shell snapshot); when
    that state cannot be read, or turns on an option that changes how bash
    reads every command, nothing can be judged.""",
    codes=[Code.BP700, Code.BP701], deny=[], allow=["ls"],
    untestable="needs a client's shell state: tests/test_client_shell.py")
CLIENT_NAMES = engine_rule("client_shell_names", """Names the client's shell defines itself, whose body is denied.
    A function or alias named like an allowed program or builtin runs its body
    instead (a common `cd` function activates the directory's .venv): the body
    is checked in the program's place.""",
    codes=[Code.BP700], deny=[], allow=["ls"],
    untestable="needs a client's shell state: tests/test_client_shell.py")
CLIENT_OPTIONS = engine_rule("client_shell_options", """Words whose expansion a shell option of the client changes.
    With globstar `**` matches every depth (a link to /dev/zero deep in the
    tree is read); with nocaseglob globs match more than they say; with
    nullglob a glob that matches nothing vanishes, leaving a program to read
    standard input (a glob operand counts as possibly absent already); with
    cdable_vars `cd NAME` may go to $NAME (CDPATH the engine follows itself).""",
    codes=[Code.BP701], deny=[], allow=["ls"],
    untestable="needs a client's shell state: tests/test_client_shell.py")
CLIENT_STDIN = engine_rule("client_stdin", """Programs that read standard input the client keeps open.
    Claude Code leaves its own socket as standard input when a command has an
    input redirection or here-document, and Gemini CLI gives interactive
    commands a terminal: a program reading it waits for ever.""",
    codes=[Code.BP702], deny=[], allow=["ls"],
    untestable="needs a client's shell state: tests/test_client_shell.py")
CLIENT_WALKS = engine_rule("client_walks", """Walks meeting files that never end, where hung commands are not stopped.
    rg, ugrep, fd and git read the ignore files of every directory they walk,
    and grep -r reads FIFOs; a committed `.gitignore -> /dev/zero` deep in the
    tree never ends, and the client only signals a hung command and moves it
    to the background.""",
    codes=[Code.BP703], deny=[], allow=["ls"],
    untestable="needs a client's shell state and a directory: tests/test_client_shell.py")

@dataclass(frozen=True)
class ShellStateUnknown(Problem):
    """The client's shell state cannot be read (BP700) or turns on what is not modelled (BP701)."""

    code = Code.BP700
    effect = Effect.EXEC
    rule = CLIENT_STATE
    message_format = "{client} runs this in its own shell, and {why}"
    hint_format = "{advice}"
    client: str
    why: str
    advice: str  # the profile's way out (ShellState.fix)


@dataclass(frozen=True)
class ShellStateUnmodelled(ShellStateUnknown):
    code = Code.BP701


@dataclass(frozen=True)
class NoCaseGlob(Problem):
    code = Code.BP701
    effect = Effect.HANG
    rule = CLIENT_OPTIONS
    message_format = ("`{word.text}`: nocaseglob is on in {client}'s shell ({source}), so the pattern also "
                      "matches names in other cases, which the checker does not look at")
    hint_format = "quote the pattern and let the program match it, or name the files"
    word: Word
    client: str
    source: str


@dataclass(frozen=True)
class GlobStar(Problem):
    code = Code.BP701
    effect = Effect.HANG
    rule = CLIENT_OPTIONS
    message_format = ("`{word.text}`: globstar is on in {client}'s shell ({source}), so `**` matches every "
                      "depth of the tree, whose files the checker does not look at (a link to /dev/zero "
                      "deep inside never ends)")
    hint_format = "use `rg --files -g GLOB` or `find DIR -name GLOB` to list them"
    word: Word
    client: str
    source: str


@dataclass(frozen=True)
class NullGlob(Problem):
    code = Code.BP701
    effect = Effect.HANG
    rule = CLIENT_OPTIONS
    message_format = ("`{word.text}`: nullglob is on in {client}'s shell ({source}), so a glob that matches "
                      "nothing vanishes and the words after it move up (a file operand becomes grep's "
                      "pattern, and grep reads standard input); {why}")
    hint_format = "name the files, or quote the pattern and let the program match it"
    word: Word
    client: str
    source: str
    why: str


@dataclass(frozen=True)
class NameUnknown(Problem):
    code = Code.BP700
    effect = Effect.EXEC
    rule = CLIENT_NAMES
    message_format = "`{name}` is not the program in {client}'s shell ({source}): {why}"
    hint_format = "write `command {name} …` to run the program itself, or {advice}"
    name: str
    client: str
    source: str
    why: str
    advice: str


@dataclass(frozen=True)
class NameDefined(Problem):
    code = Code.BP700
    effect = Effect.EXEC
    rule = CLIENT_NAMES
    name: str | None
    defined_as: str  # "alias" or "function"
    client: str
    source: str
    body: str  # as shown: blanks squeezed, cut at 120 characters
    why: str
    advice: str

    def message(self) -> str:
        what = "an alias" if self.defined_as == "alias" else "a function"
        return f"`{self.name}` is {what} in {self.client}'s shell ({self.source}): `{self.body}`; {self.why}"

    def hint(self) -> str:
        skip = (" (`\\" + str(self.name) + "` skips only the alias)") if self.defined_as == "alias" else ""
        return (f"write `command {self.name} …` to run the program itself{skip}, remove the "
                f"{self.defined_as} from your shell's startup files, or {self.advice}")


@dataclass(frozen=True)
class CdableVars(Problem):
    code = Code.BP701
    effect = Effect.STATE
    rule = CLIENT_OPTIONS
    message_format = ("`cd {value}`: cdable_vars is on in {client}'s shell ({source}), so when {value} is "
                      "not a directory cd goes to the directory ${value} names")
    hint_format = "give the directory as a path (./NAME or an absolute path)"
    value: str
    client: str
    source: str


@dataclass(frozen=True)
class WalkHangs(Problem):
    code = Code.BP703
    effect = Effect.HANG
    rule = CLIENT_WALKS
    message_format = "`{program.value}` walks the directory tree, and {why}; {client} {hangs}"
    hint_format = "search a smaller directory or named files, or {advice}"
    program: Word
    why: str
    client: str
    hangs: str | None
    advice: str


@dataclass(frozen=True)
class ClientStdin(Problem):
    code = Code.BP702
    effect = Effect.HANG
    rule = CLIENT_STDIN
    message_format = "`{command}` may read standard input, which in {client} is {stdin} here: it waits for ever"
    hint_format = "give it its input (`< FILE`, a pipe) or name the files it should read"
    command: str
    client: str
    stdin: str | None


_QUOTED_ARGS = ('${1+"$@"}', '"$@"')  # the call's arguments, word for word
# A walk looks at no more directories than this; past it the command is denied.
MAX_WALKED = 20_000


@dataclass(frozen=True)
class Walk:
    """Files a program reads by itself in every directory it walks, and when it walks."""

    files: tuple[str, ...] = ()
    special_entries: bool = False  # it also reads FIFOs and devices it meets
    when: re.Pattern[str] | None = None  # a word that makes it walk (None: always)
    follow: re.Pattern[str] | None = None  # a word that makes it follow links it meets
    from_root: bool = False  # it walks the whole repository, from its top
    special_links: bool = False  # what it runs opens each path it meets, following a link there
    # It walks from every operand, not only those its spec opens as files (find's
    # starting points; its operator words `!`, `(`, `)` and `,` are none).
    from_operands: bool = False


@dataclass(frozen=True)
class ShellState:
    """The client's shell as one command meets it."""

    client: str  # "Claude Code 2.1.332"
    source: str  # where the state was read (a snapshot file), for messages
    functions: Mapping[str, str] = field(default_factory=dict)  # name -> body text
    aliases: Mapping[str, str] = field(default_factory=dict)  # name -> value
    # Names the client defines as programs whose spec checks them (grep -> ugrep).
    replacements: Mapping[str, str] = field(default_factory=dict)  # name -> what runs
    unknown_names: Mapping[str, str] = field(default_factory=dict)  # name -> why it is unknown
    options: frozenset[str] = frozenset()  # shell options on
    stdin: str | None = None  # None: closed; else what it is ("Claude Code's socket")
    stdin_unread: frozenset[str] = frozenset()  # programs that do not read that stdin (rg: a terminal)
    walks: Mapping[str, Walk] = field(default_factory=dict)  # with hangs not stopped
    hangs: str | None = None  # what the client does with a hung command, when it does not kill it
    unknown: str | None = None  # why the state cannot be known: every command depends on it
    path: tuple[str, ...] = ()  # the PATH its commands search
    fix: str = "run it with rewriting on (the hook's default), which runs it under bash-policy run"


def _state(ctx: Context) -> ShellState | None:
    return getattr(ctx.policy, "shell", None)


# -- the whole script -----------------------------------------------------------------------

def check_script(script, ctx: Context) -> bool:
    """Deny what the state does to every command; True when nothing more can be judged."""
    state = _state(ctx)
    if state is None:
        return False
    whole = _span(0, len(ctx.source))
    why = state.unknown or _unmodelled(state) or _repository_path(state, ctx)
    if why:
        kind = ShellStateUnknown if state.unknown else ShellStateUnmodelled
        ctx.deny(kind(state.client, why, state.fix), whole)
        return True
    for node in walk(script.body):
        words: tuple[Word, ...] = ()
        if isinstance(node, Command):
            words = node.words + tuple(r.target for r in node.redirects if r.target is not None)
        elif isinstance(node, For):
            words = node.words or ()
        for word in words:
            _check_glob_options(word, state, ctx)
    return False


def _span(start: int, end: int):
    from ..read.model import Span

    return Span(start, end)


def _unmodelled(state: ShellState) -> str | None:
    """Why no command can be judged in this state, or None."""
    unknown = sorted(state.options - HARMLESS_OPTIONS - FOLLOWED_OPTIONS)
    if unknown:
        return (f"{state.source} turns on the shell option {', '.join(unknown)}, which "
                "bash-policy does not model")
    missing = sorted(set(REQUIRED_OPTIONS) - state.options)
    if missing:
        return f"{state.source} turns off {missing[0]}, which changes {REQUIRED_OPTIONS[missing[0]]}"
    reserved = sorted(set(state.aliases) & RESERVED) if "expand_aliases" in state.options else []
    if reserved:
        return (f"{state.source} defines the alias {reserved[0]!r}, a reserved word: it changes "
                "how bash reads every command")
    relative = [p for p in state.path if not p.startswith("/")]
    if relative:
        return (f"its PATH holds the relative entry {relative[0]!r}, so a bare name may run a "
                "file of the repository")
    return None


def _repository_path(state: ShellState, ctx: Context) -> str | None:
    """A PATH entry inside the repository the command runs in: a bare name
    may then run a file the repository ships (node_modules/.bin)."""
    top = _repository_top(ctx.cwd) if ctx.cwd is not None else None
    if top is None:
        return None
    top = os.path.realpath(top)
    for entry in state.path:
        real = os.path.realpath(entry)
        if real == top or real.startswith(top.rstrip("/") + "/"):
            return (f"its PATH holds {entry}, inside the directory the command runs in, so a bare "
                    "name may run a file of the repository")
    return None


def _check_glob_options(word: Word, state: ShellState, ctx: Context) -> None:
    if GLOB not in {e.kind for e in word.expansions}:
        return
    if "nocaseglob" in state.options:
        ctx.deny(NoCaseGlob(word, state.client, state.source), word.span)
    elif "globstar" in state.options and "**" in word.text.split("/"):
        ctx.deny(GlobStar(word, state.client, state.source), word.span)


# -- the name the shell looks up --------------------------------------------------------------

def check_names(segment: Command, ctx: Context) -> bool:
    """Check what a function or alias runs in place of the command's program.
    Returns True when the segment was judged here (its body was checked, or
    it was denied), False when the program itself runs."""
    state = _state(ctx)
    if state is None or not segment.words:
        return False
    if "nullglob" in state.options:
        _check_nullglob(segment.words[1:], ctx, state)
    words = segment.words
    k = 0
    while k < len(words) and words[k].value == "time" and words[k].text == "time":
        k += 1  # the keyword runs the pipeline after it in this shell: its name is looked up
        while k < len(words) and words[k].value in ("-p", "--"):
            k += 1
    if k >= len(words):
        return False
    word = words[k]
    name = word.value
    if name is None:
        return False
    if ("expand_aliases" in state.options and word.text == name and name in state.aliases):
        return _check_body(segment, k, "alias", state.aliases[name], ctx, state)
    if name in state.unknown_names:
        ctx.deny(NameUnknown(name, state.client, state.source, state.unknown_names[name], state.fix),
                 word.span)
        return True
    if name in state.replacements:
        return False  # the program's own spec reads its arguments (the profile says why)
    if name in state.functions:
        return _check_body(segment, k, "function", state.functions[name], ctx, state)
    if name == "cd" and "cdable_vars" in state.options:
        _check_cdable(segment, k, ctx, state)
    return False


# A glob the checker matches exactly: plain characters, `*` and `?` (no quotes,
# escapes or brackets, whose readings differ between bash and fnmatch).
_PLAIN_GLOB = re.compile(r"[A-Za-z0-9_.,+@%=:~/*?-]+")


def _check_nullglob(words: tuple[Word, ...], ctx: Context, state: ShellState) -> None:
    """With nullglob a glob argument that matches nothing vanishes (red team
    RT-C: `grep a* w.txt` became `grep w.txt`, reading standard input, and
    `rg f* src` searched the whole directory).  One that matches an entry in
    every directory the command may run in stays; any other is denied."""
    for word in words:
        if GLOB not in {e.kind for e in word.expansions}:
            continue
        if not word.pathname_only or not _PLAIN_GLOB.fullmatch(word.text):
            why = "the checker matches only plain `*` and `?` patterns"
        elif None in ctx.directories():
            why = "it runs where the checker cannot look"
        elif all(_matches_something(d, word.text, "dotglob" in state.options) for d in ctx.directories()):
            continue
        else:
            why = "here it matches nothing"
        ctx.deny(NullGlob(word, state.client, state.source, why), word.span)


def _matches_something(directory: str | None, pattern: str, dotglob: bool) -> bool:
    """Whether bash's pathname expansion of `pattern` (plain `*` and `?`) in
    `directory` finds at least one name: a component's wildcard matches a
    leading dot only when the component starts with one, or with dotglob."""
    import fnmatch

    assert directory is not None
    paths = ["/" if pattern.startswith("/") else directory]
    for part in pattern.split("/"):
        if part in ("", "."):
            continue
        if not any(c in part for c in "*?"):
            paths = [os.path.join(p, part) for p in paths if os.path.lexists(os.path.join(p, part))]
            continue
        found = []
        for path in paths:
            try:
                names = os.listdir(path)
            except (OSError, ValueError):
                continue
            found += [os.path.join(path, n) for n in names if fnmatch.fnmatchcase(n, part)
                      and (not n.startswith(".") or part.startswith(".") or dotglob)]
            if len(found) > 1000:
                break
        paths = found
        if not paths:
            return False
    if pattern.endswith("/"):
        paths = [p for p in paths if os.path.isdir(p)]
    return bool(paths)


def _check_body(segment: Command, k: int, kind: str, body: str, ctx: Context,
                state: ShellState) -> bool:
    from .engine import check

    words = segment.words
    word, name = words[k], words[k].value
    assert name is not None
    source = ctx.source
    if body == f"{name} calls itself":
        return _deny_name(word, kind, body, "it calls itself without end", ctx, state)
    if kind == "alias":
        if body[-1:] in (" ", "\t"):
            return _deny_name(word, kind, body, "it ends in a blank, so bash expands the next word "
                              "as an alias too", ctx, state)
        text = body + source[word.span.end:segment.span.end]
        inner = replace(state, aliases={n: v for n, v in state.aliases.items() if n != name})
    else:
        arguments = source[words[k + 1].span.start:words[-1].span.end] if k + 1 < len(words) else ""
        text = _with_arguments(body, arguments)
        # A call of the function from its own body recurses for ever.
        inner = replace(state, functions={**state.functions, name: f"{name} calls itself"})
    directories = ctx.directories()
    if len(directories) != 1 or (None in directories and ctx.cwd is not None):
        return _deny_name(word, kind, body, "it runs where the checker cannot follow", ctx, state)
    if k:  # `time NAME`: the prefix stays
        text = source[segment.span.start:word.span.start] + text
    verdict = check(text, replace(ctx.policy, shell=inner), cwd=next(iter(directories)))
    if verdict.allowed:
        return True
    first = verdict.denials[0]
    return _deny_name(word, kind, body, f"what it runs, `{text.strip()}`, is denied: "
                      f"{first.message}", ctx, state)


def _with_arguments(body: str, arguments: str) -> str:
    """`body` with each unquoted `"$@"` (or `${1+"$@"}`) replaced by the
    call's arguments as written; inside single quotes or a double-quoted
    string it is other text, left for the check to judge."""
    out, i, quote = [], 0, ""
    while i < len(body):
        ch = body[i]
        if not quote:
            found = next((t for t in _QUOTED_ARGS if body.startswith(t, i)), None)
            if found:
                out.append(arguments)
                i += len(found)
                continue
            if ch in "'\"":
                quote = ch
            elif ch == "\\":
                out.append(body[i:i + 2])
                i += 2
                continue
        elif ch == quote:
            quote = ""
        elif ch == "\\" and quote == '"':
            out.append(body[i:i + 2])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _deny_name(word: Word, kind: str, body: str, why: str, ctx: Context, state: ShellState) -> bool:
    shown = " ".join(body.split())
    if len(shown) > 120:
        shown = shown[:117] + "..."
    ctx.deny(NameDefined(word.value, kind, state.client, state.source, shown, why, state.fix), word.span)
    return True


def _check_cdable(segment: Command, k: int, ctx: Context, state: ShellState) -> None:
    """With cdable_vars, `cd NAME` goes to $NAME when NAME is not a directory."""
    for word in segment.words[k + 1:]:
        value = word.value
        if value is None or value.startswith("-"):
            continue
        if value.startswith("/") or all(
                d is not None and os.path.isdir(os.path.join(d, value)) for d in ctx.directories()):
            return
        ctx.deny(CdableVars(value, state.client, state.source), word.span)
        return


# -- walks --------------------------------------------------------------------------------

def check_walks(name: str, words: tuple[Word, ...], opened: list[Word], operands: list[Word],
                ctx: Context, appended: Appended | None) -> None:
    """Deny a walk that would meet a file that never ends.  `opened` are the
    operands the program opens (its spec's reading: no pattern), `operands`
    all of them; without any it walks its working directory."""
    state = _state(ctx)
    spec = state.walks.get(name) if state is not None and state.hangs else None
    if spec is None or state is None or ctx.cwd is None:
        return  # without a working directory no file is looked at (as for operands)
    if spec.from_operands:
        opened = [w for w in operands if w.value not in ("!", "(", ")", ",")]
    if spec.when is not None and not any(w.value and spec.when.search(w.value) for w in words[1:]):
        return
    if appended is not None:
        return _deny_walk(words[0], f"{appended.wrapper} hands it operands the checker cannot "
                          "see, so where it walks is unknown", ctx, state)
    starts: set[str] = set()
    for directory in ctx.directories():
        if directory is None:
            return _deny_walk(words[0], "it runs in a directory the checker cannot follow",
                              ctx, state)
        top = _repository_top(directory) if spec.from_root else None
        if top is not None or not opened:
            starts.add(top or directory)
        for word in opened:
            if word.value is not None:
                paths = [os.path.join(directory, word.value)]
            elif word.pathname_only and GLOB in {e.kind for e in word.expansions}:
                # What a glob matches is named on the command line, so a link among
                # the matches is followed (red team RT-C: `rg foo l*` with lnk -> ../other).
                from .rules.files import glob_matches

                matched = glob_matches(directory, word.text)
                if matched is None:
                    return _deny_walk(words[0], f"`{word.text}` matches too many names to look at",
                                      ctx, state)
                paths = matched
            else:
                return _deny_walk(words[0], f"`{word.text}` names a directory the checker cannot know",
                                  ctx, state)
            starts.update(os.path.realpath(p) for p in paths if os.path.isdir(p))
    follow = spec.follow is not None and any(w.value and spec.follow.search(w.value) for w in words[1:])
    found = _walk(sorted(starts), spec, follow)
    if found is not None:
        _deny_walk(words[0], found, ctx, state)


def _repository_top(directory: str) -> str | None:
    current = directory
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _walk(starts: list[str], spec: Walk, follow: bool) -> str | None:
    """What in these trees never ends when read, or that there are too many
    directories to look at; None when every directory was looked at.  One
    directory listing each: an ignore file or a link is resolved only when
    listed; `follow` descends into links as the program then does."""
    seen = 0
    pending = list(starts)
    visited: set[str] = set()
    wanted = set(spec.files)
    while pending:
        directory = pending.pop()
        if directory in visited:
            continue
        visited.add(directory)
        seen += 1
        if seen > MAX_WALKED:
            return f"the tree holds more than {MAX_WALKED} directories, too many to look at"
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.name in wanted and (what := on_disk(entry.path)) is not None:
                    return f"it reads {entry.path}, which is {_what(what)}"
                if entry.is_symlink():
                    if spec.special_links and (what := on_disk(entry.path)) is not None:
                        return f"it hands on {entry.path}, which is {_what(what)}"
                    if not follow:
                        continue
                    if (what := on_disk(entry.path)) is not None:
                        return f"it reads {entry.path}, which is {_what(what)}"
                    if os.path.isdir(entry.path):
                        pending.append(os.path.realpath(entry.path))
                elif entry.is_dir():
                    if entry.name not in _SKIPPED:
                        pending.append(entry.path)
                elif (spec.special_entries or spec.special_links) and not entry.is_file():
                    return f"it reads {entry.path}, which is {_what(on_disk(entry.path) or 'special')}"
            except OSError:
                continue
    return None


# Directories every walker here skips (ugrep's --exclude-dir as Claude Code gives it, rg, git).
_SKIPPED = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", ".sl"})


def _what(what: str) -> str:
    return "a link to standard input" if what == "stdin" else what


def _deny_walk(program: Word, why: str, ctx: Context, state: ShellState) -> None:
    ctx.deny(WalkHangs(program, why, state.client, state.hangs, state.fix), program.span)


# -- standard input -----------------------------------------------------------------------

def stdin_endless(ctx: Context) -> bool:
    state = _state(ctx)
    return state is not None and state.stdin is not None


def stdin_denied(node: Command, ctx: Context) -> bool:
    """For a command whose standard input is the client's: deny reading it
    (True when denied).  The engine calls this instead of its script-input
    check when the client keeps standard input open."""
    state = _state(ctx)
    if state is None or state.stdin is None or not node.words:
        return False
    program = node.words[0]
    # A program that looks at what standard input is before reading it for want
    # of files (rg and a terminal) still reads it when named (red team RT-C: `rg x -`).
    if ctx.reads_stdin and (ctx.names_stdin or program.value not in state.stdin_unread):
        ctx.deny(ClientStdin(ctx.source[node.span.start:node.span.end], state.client, state.stdin),
                 program.span)
        return True
    return False
