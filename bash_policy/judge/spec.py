"""Program specs: the effect whitelist, as data.

A spec is a TOML table (one file per program in `bash_policy/judge/specs/`, or a
`[programs.NAME]` table in the user's config, in the same format).  This
module turns such a table into typed, immutable objects and rejects malformed
ones with the key that is wrong.  See docs/spec-format.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

from ..records import dataclass, field
from .codes import Code, Effect

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

EFFECTS = tuple(e.value for e in Effect)
ROLES = ("read", "none", "command", "hook")
STYLES = ("gnu", "posix", "single", "text")

# "-A/--after-context=NUM{...}", "--color[=WHEN]", or lsof's "+D=DIR" (compiled
# on first use, as the patterns below: a start with cached specs builds none)
_FLAG_SYNTAX = (
    r"(?P<names>[-+][^=\[{/\s]+(?:/[-+][^=\[{/\s]+)*)"
    r"(?:(?P<opt>\[=(?P<ometa>[^\]]+)\])|=(?P<meta>[^{]+))?"
    r"(?:\{(?P<choices>[^}]*)\})?"
)


class SpecError(ValueError):
    """A spec table is malformed; the message names the key."""


def unknown_key(where: str, key: str, known, what: str = "key") -> str:
    """`where: unknown key 'x'`, with the nearest known key when one is close
    (a misspelt key would otherwise be read as missing)."""
    import difflib

    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    return f"{where}: unknown {what} {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


@dataclass(frozen=True, slots=True)
class Reason:
    """Why something is denied: what it would do, the reason, and the way around."""

    effect: Effect
    why: str
    fix: str = ""


# How a flag takes its value, as getopt_long and git's parse-options read it:
#   none      -x, --x                  (--x=V is a usage error)
#   required  -xV, -x V, --x=V, --x V  (the next word is the value)
#   optional  -xV, --x=V, or nothing   (the next word is never the value)
#   attached  -xV, --x=V only          (bare --x is a usage error; git's --max-parents=N)
#   lastarg   as required, but nothing when it is the last word (git's
#             PARSE_OPT_LASTARG_DEFAULT: `git branch --contains` means HEAD)
#   unless_flag  as required, but nothing when it is the last word or the next
#             word starts with `-` (procps top's `-w [COLUMNS]`)
VALUE_KINDS = ("none", "required", "optional", "attached", "lastarg", "unless_flag")

# What a value or operand that names a file makes the program open (`reads` on a
# flag, `files` on operands): "file" the file named (`reads = true`);
# "file-if-slash" the file named when the value holds a `/`, otherwise it is a
# name (iconv's charmap files); "directory" the files in or under a directory
# named (kubectl -f DIR, pip --path DIR, man -M DIR), or the file named;
# "siblings" the file named and the files beside it that share its name up to
# the first `.` (7z's next volumes: s.7z.001 opens s.7z.002), or the files in a
# directory named (`7z l DIR` opens each as an archive); "suffixed" the file
# named, or, when it is missing, the names gzip, unzip and lspci try instead
# (a compression suffix added or dropped: `zcat data` opens data.gz).
READ_SHAPES = ("file", "file-if-slash", "directory", "siblings", "suffixed")


@dataclass(frozen=True, slots=True)
class Flag:
    names: tuple[str, ...]
    value: str = "none"
    metavar: str = ""
    choices: frozenset[str] | None = None
    denied: Reason | None = None
    reads: str = ""  # the value names a file the program reads (grep -f FILE): its shape, READ_SHAPES
    reads_stdin: bool = False  # the flag makes the program read standard input (`--stdin`)
    # A flag followed by a command the program runs, up to one of these words
    # (`find -exec CMD ;`); `{}` in it is a path the program fills in.
    runs: tuple[str, ...] = ()
    runs_elsewhere: bool = False  # it runs in each found file's directory (-execdir)
    operands_from: bool = False  # its file holds more operands (find -files0-from)
    separator: str = ""  # the value is a list of files to read (`file -m a:b`, `kubectl -f a,b`)

    @property
    def display(self) -> str:
        return "/".join(self.names)

    def paths(self, value: str) -> list[str]:
        """The files a `reads` value names: one, or each item of a list."""
        return value.split(self.separator) if self.separator else [value]


@dataclass(frozen=True, slots=True)
class Positionals:
    role: str = "read"
    max: int | None = None
    over_max: Reason | None = None
    skip: int = 0  # for role "command": operands before the inner command
    appends: bool = False  # role "command": the wrapper appends unknown operands (xargs)
    # role "read": whether operands may name files the program opens and reads
    # (false for names and text it never opens: ls, stat, echo)
    files: bool = True
    shape: str = "file"  # what an operand that may be a file makes it open (READ_SHAPES)
    # The first operand is a pattern or program, not a file, unless one of
    # these flags gives it (grep's -e and -f); None: every operand may be a file.
    pattern: tuple[str, ...] | None = None
    # The program expands `*`, `?` and `[...]` in its operands itself (unzip,
    # zipinfo, 7z): a quoted pattern opens every file it matches.
    wildcards: bool = False


@dataclass(frozen=True, slots=True)
class Obsolete:
    """A program's obsolete first-argument syntax (`tail -5f`, `head -5c`):
    a first word matching `form` is read by it, not as options.  Named groups
    of `form` that match mean the flags `flags` maps them to (tail's `f` is
    -f); `max_operands` limits the operands that may follow (tail takes the
    form only when at most one file follows, after an optional `--`);
    `starts` are the characters a word of the form starts with, so that a
    glob that could expand to one is denied."""

    form: re.Pattern[str]
    flags: Mapping[str, str]
    starts: str
    max_operands: int | None = None


# How a program combines several options that select its mode (`modes` in a spec).
COMBINE = ("last", "first", "error", "all")


@dataclass(frozen=True, slots=True)
class Modes:
    """Options that select what the program does, and how it combines them
    when several are given: "last" (the last one wins: xz obeys the last of
    -z -d -t -l), "first", "error" (it refuses two different ones: git's
    command modes), "all" (each takes effect: gzip's -t and -l, unzip's
    listing modes).  `default` is the mode without any of them; a `reset`
    flag drops the modes given before it (man -D).  Flags are named by the
    first name of each (`-z` for `-z/--compress`)."""

    flags: tuple[str, ...]
    combine: str
    default: str | None = None
    reset: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommandSpec:
    """One program or subcommand."""

    name: str
    path: tuple[str, ...]
    summary: str = ""
    checked: str = ""
    style: str = "gnu"
    # Whether options may follow operands (GNU permutation) or end at the first
    # operand (POSIX getopt, xxd, awk); style "posix" never permutes.
    permute: bool = True
    flags: Mapping[str, Flag] = field(default_factory=dict)
    positionals: Positionals = Positionals()
    subcommands: Mapping[str, CommandSpec] = field(default_factory=dict)
    # Other names of this subcommand (`gh pr ls` is `gh pr list`), and, on its
    # parent, each alias with the name it stands for.
    aliases: tuple[str, ...] = ()
    sub_aliases: Mapping[str, str] = field(default_factory=dict)
    subcommand_required: bool = False
    denied: Reason | None = None
    # The program rules the engine calls after its own checks, in order (`hooks`).
    hooks: tuple[str, ...] = ()
    numeric_flag: bool = False
    # Words starting with `+` are options too (lsof's `+D DIR`, `+r`): the spec
    # names such flags, allowed or denied.
    plus_options: bool = False
    # A word starting with `@` names a file of further arguments (binutils,
    # clap's and argparse's argument files, 7-Zip list files): judged for the
    # whole command line, subcommands included.
    response_files: bool = False
    # Project files the program reads by itself from the directory it runs in
    # or any above it (cargo's Cargo.toml): a FIFO or device there never ends.
    project_files: tuple[str, ...] = ()
    # Directories besides the policy's trusted ones where the program's own
    # copies live, as absolute patterns whose `*` stands for one directory
    # name (the JDK's `/usr/lib/jvm/*/bin`): `/usr/lib/jvm/jdk-17/bin/java`
    # is this spec's java.  Root owns them; a name elsewhere stays denied.
    installed_in: tuple[str, ...] = ()
    # Options matched as iproute2 matches them: a word (`--x` read as `-x`)
    # names the first of `order` it is a prefix of (`-stat` is -stats, `-b`
    # is -batch, `-br` -brief), or, for a name in `exact`, only itself.
    abbreviations: tuple[tuple[str, bool], ...] = ()
    obsolete: Obsolete | None = None
    modes: Modes | None = None
    double_dash: bool = True
    # Whether it reads standard input: "always" (may, the default), "never", or
    # "no-files": only without file operands (after `stdin_skip` others) or with `-`.
    stdin: str = "always"
    stdin_skip: int = 0
    # Every option the program has (per its manual, and its --help where installed:
    # tests/test_harmless.py) only shapes output or reads (at worst waits on a
    # FIFO, which the run-time timeout bounds), so an operand whose value is
    # unknown cannot do harm even if it turns out to be a flag.
    harmless: bool = False
    # The library it reads its arguments with, where that matters (PARSERS); "" when not stated.
    parser: str = ""
    # Variables the command must set to stay read-only, with their allowed values.
    requires_env: Mapping[str, tuple[tuple[str, ...], Reason]] = field(default_factory=dict)
    # Commands that must pass and must be denied (with a code): run by the test suite.
    examples_allow: tuple[str, ...] = ()
    examples_deny: tuple[tuple[str, str], ...] = ()

    @property
    def display(self) -> str:
        return " ".join(self.path)

    def unique_flags(self) -> list[Flag]:
        seen: dict[int, Flag] = {}
        for flag in self.flags.values():
            seen.setdefault(id(flag), flag)
        return list(seen.values())


_FLAG_TABLE_KEYS = ("attached", "lastarg", "unless_flag", "stdin", "elsewhere", "operands_from")


def parse_flag(entry: Any, where: str, denied: Reason | None = None) -> Flag:
    """A flag from its text (`-A/--after-context=NUM`) or from a table that
    adds how it takes its value: `{flag = "--max-parents=N", attached = true}`
    (only attached), `lastarg = true` (none when last), `unless_flag = true`
    (none when last or before a word starting with `-`), `reads = true` (the
    value names a file the program reads; a shape of READ_SHAPES says more:
    `reads = "directory"`), `stdin = true` (it reads standard
    input), `runs = [";", "+"]` (a command follows, up to one of these words),
    `elsewhere = true` (that command runs in directories of its own) and
    `operands_from = true` (the file it names holds more operands: find's
    starting points in -files0-from, which may start with `-`) and, with
    `reads`, `separator = ":"` (the value is a list of files: `file -m a:b`)."""
    options = dict.fromkeys(_FLAG_TABLE_KEYS, False)
    runs: tuple[str, ...] = ()
    separator = reads = ""
    if isinstance(entry, Mapping):
        unknown = set(entry) - {"flag", "runs", "separator", "reads", *_FLAG_TABLE_KEYS}
        if unknown or not isinstance(entry.get("flag"), str):
            raise SpecError(f"{where}: a flag table has `flag` (its text) and optionally `runs`, "
                            f"`reads`, {', '.join(f'`{k}`' for k in _FLAG_TABLE_KEYS)}")
        reads = _read_shape(entry.get("reads", False), f"{where}.reads")
        for key in _FLAG_TABLE_KEYS:
            options[key] = entry.get(key, False)
            if not isinstance(options[key], bool):
                raise SpecError(f"{where}: `{key}` must be true or false")
        if options["attached"] + options["lastarg"] + options["unless_flag"] > 1:
            raise SpecError(f"{where}: a flag is one of `attached`, `lastarg` and `unless_flag`")
        runs = tuple(_list_of_str(entry.get("runs", []), f"{where}.runs"))
        separator = entry.get("separator", "")
        if not isinstance(separator, str) or len(separator) > 1 or (separator and not reads):
            raise SpecError(f"{where}: `separator` is one character, with `reads = true`")
        if options["elsewhere"] and not runs:
            raise SpecError(f"{where}: `elsewhere` goes with `runs`")
        text = entry["flag"]
    elif isinstance(entry, str):
        text = entry
    else:
        raise SpecError(f"{where}: expected a flag string or table")
    match = re.fullmatch(_FLAG_SYNTAX, text.strip())
    if not match:
        raise SpecError(f"{where}: cannot read flag {text!r} (expected like '-A/--after-context=NUM')")
    names = tuple(match["names"].split("/"))
    if match["opt"]:
        value, metavar = "optional", match["ometa"]
    elif match["meta"]:
        value, metavar = "required", match["meta"]
    else:
        value, metavar = "none", ""
    choices = None
    if match["choices"] is not None:
        choices = frozenset(c.strip() for c in match["choices"].split(",") if c.strip())
        if value == "none":
            raise SpecError(f"{where}: flag {text!r} lists choices but takes no value")
    for kind in ("attached", "lastarg", "unless_flag"):
        if options[kind]:
            if value != "required":
                raise SpecError(f"{where}: `{kind}` needs a flag written with =VALUE: {text!r}")
            value = kind
    if reads and value == "none":
        raise SpecError(f"{where}: `reads` needs a flag that takes a value: {text!r}")
    if runs and value != "none":
        raise SpecError(f"{where}: a flag that runs a command takes no value: {text!r}")
    return Flag(names, value, metavar, choices, denied, reads, options["stdin"], runs,
                options["elsewhere"], options["operands_from"], separator)


def _read_shape(value: Any, where: str) -> str:
    """`true` (a file), `false` (nothing read: "") or a shape of READ_SHAPES."""
    if value is True:
        return "file"
    if value is False:
        return ""
    if value not in READ_SHAPES:
        raise SpecError(f"{where}: must be true, false or one of {', '.join(READ_SHAPES)}")
    return value


def _effect(table: Any, where: str) -> Reason:
    if not isinstance(table, Mapping):
        raise SpecError(f"{where}: expected a table with 'effect' and 'why'")
    unknown = set(table) - {"effect", "why", "fix"}
    if unknown:
        raise SpecError(unknown_key(where, sorted(unknown)[0], {"effect", "why", "fix"}))
    category = table.get("effect")
    if category not in EFFECTS:
        raise SpecError(f"{where}.effect: must be one of {', '.join(EFFECTS)}")
    effect = Effect(category)
    why = table.get("why")
    if not isinstance(why, str) or not why:
        raise SpecError(f"{where}.why: a reason is required")
    fix = table.get("fix", "")
    if not isinstance(fix, str):
        raise SpecError(f"{where}.fix: must be a string")
    return Reason(effect, why, fix)


_COMMAND_KEYS = {
    "summary", "checked", "style", "flags", "deny", "positionals", "sub", "subcommand_required",
    "denied", "hook", "hooks", "numeric_flag", "double_dash", "use", "fragment", "replace", "name",
    "requires_env", "examples", "permute", "obsolete", "stdin", "stdin_skip", "harmless", "aliases",
    "response_files", "project_files", "installed_in", "abbreviations", "modes", "parser",
}
STDIN_MODES = ("always", "never", "no-files")
# The library a program reads its arguments with, where that matters beyond
# `style`: clap (ripgrep 13, fd 8) refuses a separate value that starts with
# `-` unless the flag allows it, Go's pflag (gh) lists every flag and its
# value kind in --help.  A subcommand inherits its program's.
PARSERS = ("clap", "pflag")


def build_spec(name: str, table: Mapping[str, Any], where: str,
               path: tuple[str, ...] = (), fragments: Mapping[str, Any] | None = None,
               rule_exists: Callable[[str], bool] | None = None,
               inherited: Mapping[str, Any] | None = None) -> CommandSpec:
    """Build a `CommandSpec` from its TOML table; `where` names it in errors.
    `rule_exists` validates rule names, so a spec naming an unknown rule fails
    here, at load, and never in the middle of a check.  `inherited` holds the
    keys a subcommand takes from its program unless it says otherwise
    (`stdin`, `parser`).  Each key is read by a helper of its own below."""
    if not isinstance(table, Mapping):
        raise SpecError(f"{where}: expected a table")
    unknown = set(table) - _COMMAND_KEYS
    if unknown:
        raise SpecError(unknown_key(where, sorted(unknown)[0], _COMMAND_KEYS))
    path = path + (name,)
    if fragments is None:
        fragments = table.get("fragment", {})
    inherited = {key: table.get(key, value)
                 for key, value in {"stdin": "always", "parser": "", **(inherited or {})}.items()}
    flags = _flags(table, fragments, where)
    style, permute = _style(table, where)
    stdin, stdin_skip = _stdin(table, inherited["stdin"], where)
    subs, sub_aliases = _subcommands(table, path, fragments, rule_exists, inherited, where)
    denied = _effect(table["denied"], f"{where}.denied") if "denied" in table else None
    positionals = _operands(table, flags, subs, denied, where)
    examples_allow, examples_deny = _examples(table.get("examples", {}), f"{where}.examples")
    return CommandSpec(
        name=name,
        path=path,
        summary=_text(table, "summary", where),
        checked=_text(table, "checked", where),
        style=style,
        flags=MappingProxyType(flags),
        positionals=positionals,
        subcommands=MappingProxyType(subs),
        aliases=_aliases(table, path, where),
        sub_aliases=MappingProxyType(sub_aliases),
        subcommand_required=_flag_key(table, "subcommand_required", bool(subs), where),
        denied=denied,
        hooks=_hooks(table, rule_exists, where),
        numeric_flag=_flag_key(table, "numeric_flag", False, where),
        plus_options=any(n.startswith("+") for n in flags),
        response_files=_flag_key(table, "response_files", False, where),
        project_files=_names(table.get("project_files", []), f"{where}.project_files"),
        installed_in=_directories(table.get("installed_in", []), f"{where}.installed_in"),
        abbreviations=_abbreviations(table.get("abbreviations"), f"{where}.abbreviations"),
        obsolete=_obsolete(table["obsolete"], f"{where}.obsolete", flags) if "obsolete" in table
        else None,
        modes=_modes(table["modes"], f"{where}.modes", flags) if "modes" in table else None,
        permute=permute,
        requires_env=MappingProxyType(_requires_env(table, where)),
        double_dash=_flag_key(table, "double_dash", True, where),
        stdin=stdin,
        stdin_skip=stdin_skip,
        harmless=_harmless(table, flags, positionals, where),
        parser=_parser(inherited["parser"], where),
        examples_allow=examples_allow,
        examples_deny=examples_deny,
    )


def _flag_key(table: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    """A key that is true or false (`double_dash = false`)."""
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{where}.{key}: must be true or false")
    return value


def _text(table: Mapping[str, Any], key: str, where: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise SpecError(f"{where}.{key}: must be a string")
    return value


def _flags(table: Mapping[str, Any], fragments: Mapping[str, Any], where: str) -> dict[str, Flag]:
    """Every flag by each of its names: `flags`, then `deny`, with the shared
    lists of the fragments it `use`s spliced in first.  A denial always wins
    over an allowance of the same name."""
    flag_texts = list(_list_of_flags(table.get("flags", []), f"{where}.flags"))
    deny_table = dict(table.get("deny", {}))
    for used in _list_of_str(table.get("use", []), f"{where}.use"):
        if used not in fragments:
            raise SpecError(f"{where}.use: no fragment named {used!r}")
        fragment = fragments[used]
        flag_texts = list(_list_of_flags(fragment.get("flags", []), f"fragment.{used}.flags")) + flag_texts
        deny_table = {**fragment.get("deny", {}), **deny_table}
    flags: dict[str, Flag] = {}
    for text in flag_texts:
        allowed = parse_flag(text, f"{where}.flags")
        for n in allowed.names:
            flags[n] = allowed
    for text, reason in deny_table.items():
        denied = parse_flag(text, f"{where}.deny", _effect(reason, f"{where}.deny.{text!r}"))
        for n in denied.names:
            flags[n] = denied
    return flags


def _style(table: Mapping[str, Any], where: str) -> tuple[str, bool]:
    """The option grammar, and whether options may follow operands."""
    style = table.get("style", "gnu")
    if style not in STYLES:
        raise SpecError(f"{where}.style: must be one of {', '.join(STYLES)}")
    permute = table.get("permute", style != "posix")
    if not isinstance(permute, bool) or (permute and style == "posix"):
        raise SpecError(f"{where}.permute: must be true or false (and false for style posix)")
    return style, permute


def _stdin(table: Mapping[str, Any], inherited: str, where: str) -> tuple[str, int]:
    """Whether it reads standard input (a subcommand inherits its program's),
    and the operands before the files."""
    stdin = table.get("stdin", inherited)
    if stdin not in STDIN_MODES:
        raise SpecError(f"{where}.stdin: must be one of {', '.join(STDIN_MODES)}")
    stdin_skip = table.get("stdin_skip", 0)
    if not isinstance(stdin_skip, int) or isinstance(stdin_skip, bool) or stdin_skip < 0:
        raise SpecError(f"{where}.stdin_skip: must be a non-negative integer")
    return stdin, stdin_skip


def _parser(parser: Any, where: str) -> str:
    if parser != "" and parser not in PARSERS:
        raise SpecError(f"{where}.parser: must be one of {', '.join(PARSERS)}")
    return parser


def _aliases(table: Mapping[str, Any], path: tuple[str, ...], where: str) -> tuple[str, ...]:
    aliases = tuple(_list_of_str(table.get("aliases", []), f"{where}.aliases"))
    if aliases and not path[:-1]:
        raise SpecError(f"{where}.aliases: only a subcommand has aliases (a program uses alias_of)")
    return aliases


def _subcommands(table: Mapping[str, Any], path: tuple[str, ...], fragments: Mapping[str, Any],
                 rule_exists: Callable[[str], bool] | None, inherited: Mapping[str, Any],
                 where: str) -> tuple[dict[str, CommandSpec], dict[str, str]]:
    """The subcommands, each a spec of its own, and each alias with the
    subcommand it names."""
    subs: dict[str, CommandSpec] = {}
    sub_aliases: dict[str, str] = {}
    for sub_name, sub_table in dict(table.get("sub", {})).items():
        subs[sub_name] = build_spec(sub_name, sub_table, f"{where}.sub.{sub_name}", path, fragments,
                                    rule_exists, inherited)
        for alias in subs[sub_name].aliases:
            if alias in table["sub"] or alias in sub_aliases:
                raise SpecError(f"{where}.sub.{sub_name}.aliases: {alias!r} already names a subcommand")
            sub_aliases[alias] = sub_name
    return subs, sub_aliases


def _operands(table: Mapping[str, Any], flags: Mapping[str, Flag], subs: Mapping[str, Any],
              denied: Reason | None, where: str) -> Positionals:
    """No default that allows: a spec must say what its operands are.  Only a
    program that is denied whole, or whose first operand picks a subcommand,
    may leave it out, and then it takes no other operands."""
    if "positionals" not in table and not subs and denied is None:
        raise SpecError(f"{where}.positionals: required: say what the operands are "
                        f"(\"read\", \"none\", \"command\" or \"hook\")")
    positionals = _positionals(table.get("positionals", "none"), f"{where}.positionals")
    for flag_name in positionals.pattern or ():
        if flag_name not in flags:
            raise SpecError(f"{where}.positionals.pattern: {flag_name!r} is not a flag of this spec")
    return positionals


def _requires_env(table: Mapping[str, Any], where: str) -> dict[str, tuple[tuple[str, ...], Reason]]:
    """Variables the command must set to stay read-only, with their allowed values."""
    requires_env = {}
    for var, req in dict(table.get("requires_env", {})).items():
        here = f"{where}.requires_env.{var}"
        if not isinstance(req, Mapping):
            raise SpecError(f"{here}: expected a table with values, effect, why")
        values = tuple(_list_of_str(req.get("values"), f"{here}.values"))
        if not values:
            raise SpecError(f"{here}.values: list at least one value")
        requires_env[var] = (values, _effect({k: v for k, v in req.items() if k != "values"}, here))
    return requires_env


def _hooks(table: Mapping[str, Any], rule_exists: Callable[[str], bool] | None,
           where: str) -> tuple[str, ...]:
    """The program rules the engine calls after its own checks, in order:
    `hooks = ["a", "b"]`, or `hook = "a"` for one."""
    if "hook" in table and "hooks" in table:
        raise SpecError(f"{where}: `hook` names one rule, `hooks` several; give one of them")
    if "hook" in table:
        key, hooks = "hook", table["hook"]
        if not isinstance(hooks, str):
            raise SpecError(f"{where}.hook: must be a string")
        hooks = [hooks]
    else:
        key, hooks = "hooks", _list_of_str(table.get("hooks", []), f"{where}.hooks")
    if len(set(hooks)) != len(hooks):
        raise SpecError(f"{where}.{key}: names a rule twice")
    for hook in hooks:
        if rule_exists is not None and not rule_exists(hook):
            raise SpecError(f"{where}.{key}: no rule named {hook!r} (`bash-policy rules` lists them)")
    return tuple(hooks)


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
            isinstance(v, str) and v and not v.startswith("/") and ".." not in v.split("/") for v in value):
        raise SpecError(f"{where}: must be a list of relative file paths")
    return tuple(value)


_DIRECTORY_PATTERN = r"(?:/(?:[A-Za-z0-9_+-][A-Za-z0-9_.+-]*|\*))+"


def _directories(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
            isinstance(v, str) and re.fullmatch(_DIRECTORY_PATTERN, v) for v in value):
        raise SpecError(f"{where}: must be a list of absolute directories (`*` for one name)")
    return tuple(value)


def _abbreviations(value: Any, where: str) -> tuple[tuple[str, bool], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or set(value) - {"order", "exact"}:
        raise SpecError(f"{where}: expected {{ order = [names], exact = [names] }}")
    order = _list_of_str(value.get("order", []), f"{where}.order")
    exact = set(_list_of_str(value.get("exact", []), f"{where}.exact"))
    if not order or not exact <= set(order) or not all(n.startswith("-") and len(n) > 1 for n in order):
        raise SpecError(f"{where}: `order` lists every option name (`exact` ones among them)")
    return tuple((name, name in exact) for name in order)


def abbreviated(spec: CommandSpec, name: str) -> str | None:
    """The option a word names under the spec's `abbreviations`, or None."""
    if name.startswith("--"):
        name = name[1:]
    for option, exact in spec.abbreviations:
        if name == option or (not exact and option.startswith(name)):
            return option
    return None


def installed_in(spec: CommandSpec, directory: str) -> bool:
    """Whether `directory` (of an absolute program path) is one of the spec's
    own: each component matches, `*` any one name but `.` and `..`."""
    parts = directory.split("/")
    for pattern in spec.installed_in:
        wanted = pattern.split("/")
        if len(wanted) == len(parts) and all(
                w == p or (w == "*" and p not in ("", ".", "..")) for w, p in zip(wanted, parts)):
            return True
    return False


def _harmless(table: Mapping[str, Any], flags: Mapping[str, Flag], positionals: Positionals,
              where: str) -> bool:
    """`harmless = true` holds only for a program whose operands are all read and
    whose denied flags, if any, can at worst wait (wc --files0-from naming a
    FIFO): a run-time timeout bounds that (docs/threat-model.md), while a flag
    that runs, writes, uses the network or changes state never may."""
    harmless = table.get("harmless", False)
    if not isinstance(harmless, bool):
        raise SpecError(f"{where}.harmless: must be true or false")
    if harmless and (any(f.denied and f.denied.effect is not Effect.HANG for f in flags.values())
                     or positionals.role != "read" or positionals.max is not None):
        raise SpecError(f"{where}.harmless: a harmless program reads any number of operands and "
                        "has no flag that runs, writes, uses the network or changes state")
    return harmless


def _examples(value: Any, where: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """`examples = {allow = ["cmd", ...], deny = [{cmd = "...", code = "BP400"}, ...]}`."""
    if not isinstance(value, Mapping) or set(value) - {"allow", "deny"}:
        raise SpecError(f"{where}: expected a table with `allow` and `deny` lists")
    allow = tuple(_list_of_str(value.get("allow", []), f"{where}.allow"))
    deny = []
    for entry in value.get("deny", []):
        if not (isinstance(entry, Mapping) and set(entry) == {"cmd", "code"}
                and isinstance(entry["cmd"], str) and entry["code"] in {c.value for c in Code}):
            raise SpecError(f"{where}.deny: each entry is {{cmd = \"...\", code = \"BPnnn\"}} "
                            "with a known code")
        deny.append((entry["cmd"], entry["code"]))
    return allow, tuple(deny)


def _obsolete(value: Any, where: str, flags: Mapping[str, Flag]) -> Obsolete:
    """`obsolete = { form = 'REGEX', starts = "-+", flags = { group = "-f" }, max_operands = 1 }`."""
    if not isinstance(value, Mapping) or set(value) - {"form", "starts", "flags", "max_operands"}:
        raise SpecError(f"{where}: expected a table with `form`, `starts`, `flags` and "
                        "`max_operands`")
    starts = value.get("starts")
    if not isinstance(starts, str) or not starts:
        raise SpecError(f"{where}.starts: the characters a word of the form starts with")
    try:
        form = re.compile(value.get("form", ""))
    except (re.error, TypeError) as error:
        raise SpecError(f"{where}.form: not a regular expression: {error}") from None
    if not value.get("form"):
        raise SpecError(f"{where}.form: required")
    meaning = value.get("flags", {})
    if not isinstance(meaning, Mapping) or not all(isinstance(v, str) for v in meaning.values()):
        raise SpecError(f"{where}.flags: expected a table of group = \"-flag\"")
    for group, flag in meaning.items():
        if group not in form.groupindex:
            raise SpecError(f"{where}.flags: `form` has no group named {group!r}")
        if flag not in flags:
            raise SpecError(f"{where}.flags: {flag!r} is not a flag of this spec")
    limit = value.get("max_operands")
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise SpecError(f"{where}.max_operands: must be a non-negative integer")
    return Obsolete(form, MappingProxyType(dict(meaning)), starts, limit)


def _modes(value: Any, where: str, flags: Mapping[str, Flag]) -> Modes:
    """`modes = { flags = ["-z", "-d"], combine = "last", default = "-z", reset = ["-D"] }`."""
    if not isinstance(value, Mapping) or set(value) - {"flags", "combine", "default", "reset"}:
        raise SpecError(f"{where}: expected a table with `flags`, `combine`, `default` and `reset`")
    combine = value.get("combine")
    if combine not in COMBINE:
        raise SpecError(f"{where}.combine: must be one of {', '.join(COMBINE)}")

    def first_names(names: list[str], key: str) -> tuple[str, ...]:
        for name in names:
            if name not in flags:
                raise SpecError(f"{where}.{key}: {name!r} is not a flag of this spec")
        return tuple(dict.fromkeys(flags[n].names[0] for n in names))

    selecting = first_names(_list_of_str(value.get("flags", []), f"{where}.flags"), "flags")
    if not selecting:
        raise SpecError(f"{where}.flags: name the flags that select a mode")
    default = value.get("default")
    if default is not None:
        if not isinstance(default, str) or default not in flags \
                or flags[default].names[0] not in selecting:
            raise SpecError(f"{where}.default: must be one of the mode flags")
        default = flags[default].names[0]
    reset = first_names(_list_of_str(value.get("reset", []), f"{where}.reset"), "reset")
    return Modes(selecting, combine, default, reset)


def _positionals(value: Any, where: str) -> Positionals:
    if isinstance(value, str):
        value = {"role": value}
    if not isinstance(value, Mapping):
        raise SpecError(f"{where}: expected a role name or a table")
    known = {"role", "max", "over_max", "skip", "appends", "files", "pattern", "wildcards"}
    unknown = set(value) - known
    if unknown:
        raise SpecError(unknown_key(where, sorted(unknown)[0], known))
    role = value.get("role", "read")
    if role not in ROLES:
        raise SpecError(f"{where}.role: must be one of {', '.join(ROLES)}")
    maximum = value.get("max")
    if maximum is not None and (not isinstance(maximum, int) or maximum < 0):
        raise SpecError(f"{where}.max: must be a non-negative integer")
    over = _effect(value["over_max"], f"{where}.over_max") if "over_max" in value else None
    skip = value.get("skip", 0)
    if not isinstance(skip, int) or skip < 0:
        raise SpecError(f"{where}.skip: must be a non-negative integer")
    appends = value.get("appends", False)
    if not isinstance(appends, bool):
        raise SpecError(f"{where}.appends: must be true or false")
    files = value.get("files", True)
    shape = "file"
    if isinstance(files, str):
        files, shape = True, _read_shape(files, f"{where}.files")
    elif not isinstance(files, bool):
        raise SpecError(f"{where}.files: must be true, false or one of {', '.join(READ_SHAPES)}")
    pattern = value.get("pattern")
    if pattern is not None:
        pattern = tuple(_list_of_str(pattern, f"{where}.pattern"))
    wildcards = value.get("wildcards", False)
    if not isinstance(wildcards, bool):
        raise SpecError(f"{where}.wildcards: must be true or false")
    return Positionals(role, maximum, over, skip, appends, files, shape, pattern, wildcards)


def _list_of_flags(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or not all(isinstance(v, (str, Mapping)) for v in value):
        raise SpecError(f"{where}: expected a list of flag strings or tables")
    return value


def _list_of_str(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SpecError(f"{where}: expected a list of strings")
    return value


def merge_tables(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge a user's table into a built-in one: tables merge, lists add up.

    `replace = true` in the override discards the built-in table instead.
    """
    if override.get("replace"):
        return {k: v for k, v in override.items() if k != "replace"}
    merged = dict(base)
    for key, value in override.items():
        if key in merged and isinstance(merged[key], Mapping) and isinstance(value, Mapping):
            merged[key] = merge_tables(merged[key], value)
        elif key in merged and isinstance(merged[key], list) and isinstance(value, list):
            merged[key] = merged[key] + value
        else:
            merged[key] = value
    return merged
