"""The generic engine: a `Script` and a `Policy` in, a `Verdict` out.

It holds no program names.  What a program may do is in its spec; what
needs real logic is a program rule named by the spec (bash_policy/judge/rules/).
Every check here is an engine rule with a name, a doc and examples, so each
denial says which rule produced it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import unicodedata
from collections.abc import Set
from dataclasses import dataclass, field, replace

from ..read import exact, parse_cache
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
    OUTPUT_SUB,
    PARAMETER,
    PROCESS_SUB,
    TILDE,
    ArithFor,
    Assignment,
    Case,
    Command,
    Cond,
    For,
    Group,
    If,
    List,
    Pipeline,
    Span,
    Subshell,
    While,
    Word,
    children,
)
from . import client_shell, descriptors, expand, fixes, later, loops, rules, shapes, values
from .codes import Code, Effect
from .flow import Places, command_directories
from .policy import Policy
from .rules import engine_rule
from .rules.files import check_around, check_special_operands
from .scope import check_scope
from .spec import CommandSpec, Flag, Reason, abbreviated, installed_in
from .special import on_disk, special_in, special_operand_in, stdin_in
from .verdict import SAFE, Denial, Edit, Fix, Verdict

# -- engine rules: what each generic check blocks, why, and its examples ---------

INTERNAL = engine_rule("internal_error", """Any input on which the checker itself fails.
    A checker that raises lets a harness treat the command as unchecked; every
    internal error is a denial instead (fail closed).""",
    codes=[Code.BP107], deny=[], allow=["ls"],
    untestable="no input should reach it; tests/test_hostile.py forces an internal error")
SCREEN = engine_rule("input_screen", """Over-long commands and invisible, control or bidirectional characters.
    They make a command look different to a person, the checker and bash, or
    make the checker slow.""",
    codes=[Code.BP103, Code.BP104], deny=["rg foo\r"], allow=["rg foo"])
SYNTAX = engine_rule("syntax", """Text that does not parse, or constructs outside what the checker models.
    What the checker cannot read exactly, it cannot judge.""",
    codes=[Code.BP100, Code.BP101, Code.BP102],
    deny=['rg "foo', "rg foo &", "f() { rg x; }", "while true; do ls; done"],
    allow=['rg "foo"', "(cd src && rg x)", "for f in a b; do wc -l \"$f\"; done"])
READINGS = engine_rule("readings", """Commands that tree-sitter (or bashlex) reads differently from bash's grammar.
    Published bypasses of read-only checkers are mostly parser differentials:
    the checker read one command and bash ran another.  A command is allowed
    only when the independent readings agree.""",
    codes=[Code.BP106], deny=[], allow=["rg foo | head"],
    untestable="needs a reader bug; tests/test_crosscheck.py feeds the comparison differing trees")
LIMITS = engine_rule("segment_limit", """More simple commands in one line than the policy's limit.
    An unbounded number of commands would make the check slow; past the limit
    it is denied, never skipped.""",
    codes=[Code.BP103], deny=["true" + ";true" * 200], allow=["true;true"])
EXPANSION = engine_rule("expansion", """A word whose value bash computes at run time, where that value matters.
    Command and parameter expansion, arithmetic, globs, braces, tildes and
    `$'…'` quoting turn one written word into text the checker cannot know.""",
    codes=[Code.BP200, Code.BP201, Code.BP202, Code.BP203, Code.BP204, Code.BP205, Code.BP206,
           Code.BP207],
    deny=['cat < "$(ls)"', 'cat < "$F"', "ls {a,b}$(id)", "rg $'\\x2d' x"],
    allow=["rg 'x'", 'echo "$(git branch --show-current)"', 'rg -- "$X" src'])
ASSIGNMENT = engine_rule("assignment", """Assignments outside the harmless list, and assignments without a command.
    Variables change what an allowed program does (PAGER, GIT_*, LD_PRELOAD),
    and a bare assignment changes the shell for every later command.""",
    codes=[Code.BP600, Code.BP303], deny=["PAGER=sh git log", "X=1"], allow=["LC_ALL=C rg x"])
REDIRECTION = engine_rule("redirection", """Redirections that write files, read network devices or expand.
    `>`, `>>`, `&>` and the like create files; `/dev/tcp/…` connects to a host;
    an unquoted here-document runs the substitutions in its body.""",
    codes=[Code.BP500, Code.BP501, Code.BP105],
    deny=["rg x > out", "rg x < /dev/tcp/h/80", "cat <<EOF\n$(id)\nEOF"],
    allow=["rg x 2>/dev/null", "rg x 2>&1"])
PROGRAM = engine_rule("program", """Programs outside the whitelist, denied whole, named by a path or not literally.
    Only programs whose every allowed use was checked against their manual
    may run, and only the trusted copy of each.""",
    codes=[Code.BP300, Code.BP301, Code.BP302, Code.BP304],
    deny=["vim x", "./rg x", "$EDITOR x", "go version"], allow=["/usr/bin/rg x"])
SUBCOMMAND = engine_rule("subcommand", """Subcommands that are not read-only, or missing and unknown ones.
    `git push`, `gh pr merge` and the like change state.""",
    codes=[Code.BP405], deny=["git push"], allow=["git status"])
FLAGS = engine_rule("flags", """Flags that are denied, unknown, abbreviated, or given a wrong value.
    Read-only programs have flags that run programs or write files, and accept
    them in other spellings; only flags checked against the manual pass.""",
    codes=[Code.BP400, Code.BP401, Code.BP402, Code.BP403],
    deny=["rg --pre cat x", "rg --frob x", "sort --out=f x", "rg --color=sometimes x",
          'git log --format="$F"'],
    allow=["rg -n x", 'git log --author="$USER"'])
MODES = engine_rule("modes", """Options that select different modes where the program refuses them together.
    A spec's `modes` say which options select what the program does and how it
    combines several (program rules judge the mode that results: `xz -t -z f`
    compresses f, since xz obeys the last); where the program refuses two, a
    version that took one instead would do what was not judged.""",
    codes=[Code.BP400], deny=["git cat-file -t -p HEAD", "git branch --list --show-current"],
    allow=["git cat-file -t HEAD", "git branch --show-current"])
OPERANDS = engine_rule("operands", """Operands a program writes to or acts on, too many, or words that may be flags.
    Some programs take an output file or a new name as a plain operand; a
    file named `--pre=sh` turns an unanchored glob into a flag.""",
    codes=[Code.BP406, Code.BP203, Code.BP404],
    deny=["rg foo *.py", "pwd x", "ls | xargs rg x"], allow=["rg foo ./*.py"])
SCRIPT_INPUT = engine_rule("script_input", """Commands that may read standard input on a line with more lines after it.
    A harness that pipes the script into bash makes the rest of the script the
    command's input: it reads the later lines and bash never runs them (or runs
    what is left of them), so what runs is not what was checked.""",
    codes=[Code.BP108], deny=["head -c 3\nrg rm x", "rg foo\nls"],
    allow=["head -c 3 f\nls", "git status\ngit diff", "rg foo src\nls", "rg foo; ls",
           "head -c 3 < f\nls"])
SPECIAL = engine_rule("special_files", """Files to read under /dev, /proc and /sys, other than a few harmless ones.
    Reading a device or kernel file may never end (`cat /dev/zero`, `/proc/kmsg`)
    or reach another file (`/proc/self/root/dev/zero`); only /dev/null, the
    standard streams and a short list of /proc files may be read.  This applies
    to operands that may be files and to flags whose value names a file to read.""",
    codes=[Code.BP406, Code.BP403],
    deny=["cat /dev/zero", "wc -c /proc/self/root/dev/zero", "grep -f /dev/zero x"],
    allow=["cat /dev/null", "cat /proc/cpuinfo", "ls /dev", "grep -e /dev/zero x"])
SCOPE = engine_rule("scope", """With `scope_roots` set: paths outside those directories.
    Read-only tools still read secrets outside the project.""",
    codes=[Code.BP602], deny=[], allow=["ls"],
    untestable="needs a policy with scope_roots: tests/test_scope.py")

_EXPANSION_CODES = {
    COMMAND_SUB: (Code.BP200, "runs a command inside the word"),
    PROCESS_SUB: (Code.BP200, "runs a command inside the word"),
    OUTPUT_SUB: (Code.BP200, "gives the program the writing end of a pipe, so a program that reads it "
                 "never ends and one that writes to it feeds the command inside"),
    PARAMETER: (Code.BP201, "expands a variable whose value is unknown until run time"),
    ARITHMETIC: (Code.BP202, "its value is computed by arithmetic at run time"),
    BRACE: (Code.BP204, "brace expansion turns one word into several"),
    ANSI_C: (Code.BP206, "`$'…'` quoting turns escapes into other characters"),
    LOCALE: (Code.BP206, "`$\"…\"` quoting translates the text at run time"),
    EXTGLOB: (Code.BP207, "an extended glob pattern expands to file names"),
    GLOB: (Code.BP203, "an unquoted glob expands to file names"),
    TILDE: (Code.BP205, "`~` expands to a home directory the checker cannot see"),
    FOUND: (Code.BP404, "the program fills in a path it found, which this command must read as it comes"),
    FOUND_PATHS: (Code.BP404, "the program fills in every path it found, as many words"),
}
_EXPANSION_HINTS = {
    Code.BP200: "run the inner command by itself first, then write its output literally",
    Code.BP201: "write the value literally",
    Code.BP202: "write the number literally",
    Code.BP204: "write the words out, or quote the braces",
    Code.BP206: "use plain single quotes around the exact characters",
    Code.BP207: "quote the pattern and let the program match it",
    Code.BP205: "write the absolute path, or put the operand after `--`",
    Code.BP404: "run a program that takes file operands on the found paths, e.g. -exec grep -H x {} +",
}
# ASCII digits only: bash and the programs read no other digits (`>&٣` writes a file named ٣).
_DESCRIPTOR = re.compile(r"[0-9]+-?")
_NUMBER = re.compile(r"[0-9]+")
_PLAIN_VARIABLE = re.compile(r'"?\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})"?', re.ASCII)
_SIMPLE_BRACE = re.compile(r"([^{}'\"\\$`\s]*)\{([^{}'\"\\$`\s]*,[^{}'\"\\$`\s]*)\}([^{}'\"\\$`\s]*)")
_DEFAULT_FIX = {
    Effect.EXEC: "drop it; running other programs needs leaving plan mode",
    Effect.WRITE: "drop it and read the output directly; writing files needs leaving plan mode",
    Effect.NETWORK: "drop it; network calls that change things need leaving plan mode",
    Effect.HANG: "drop it; plan-mode commands must finish on their own",
    Effect.STATE: "drop it; changing state needs leaving plan mode",
    Effect.LEAK: "drop it",
    Effect.INTERACTIVE: "drop it; interactive programs cannot run in plan mode",
}
_BIDI = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
         "\u200e", "\u200f", "\u061c"}


@dataclass(frozen=True, slots=True)
class Appended:
    """Operands a wrapper appends from its input (`xargs`): `dash_safe` when none
    can start with `-` (the NUL-separated paths `find DIR -print0` prints)."""

    wrapper: str
    dash_safe: bool = False


@dataclass(frozen=True, slots=True)
class FlagUse:
    """One flag as the program reads it: the flag, the name as written, its value
    (None when it takes none), the word holding the flag, the word holding the
    value (the same word when attached), and the flag word's index in the argv."""

    flag: Flag
    name: str
    value: str | None
    word: Word
    value_word: Word | None
    index: int
    known: bool = True  # False: the value is computed at run time (`--author="$USER"`)


@dataclass
class Invocation:
    """What the engine read from one program's argv, for program rules to inspect."""

    spec: CommandSpec
    words: tuple[Word, ...]
    flags: list[FlagUse] = field(default_factory=list)
    positionals: list[Word] = field(default_factory=list)
    after_double_dash: bool = False
    # The flags the running rule declared it reads (None: any); see `uses`.
    reads: frozenset[str] | None = None

    def uses(self, *names: str) -> list[FlagUse]:
        """The uses of the flags that have any of `names` (any spelling).  A rule
        may only ask for flags it declared in `reads`: the engine lets other
        flags take values computed at run time, which it must never inspect."""
        wanted = set(names)
        if self.reads is not None and not wanted <= self.reads:
            raise LookupError(f"the rule reads {sorted(wanted - self.reads)} without declaring them")
        return [use for use in self.flags if wanted.intersection(use.flag.names)]

    def has(self, *names: str) -> bool:
        return bool(self.uses(*names))

    def given_modes(self) -> list[FlagUse]:
        """The uses of the spec's mode flags after the last reset, in order."""
        modes = self.spec.modes
        given: list[FlagUse] = []
        if modes is None:
            return given
        for use in self.flags:
            if use.flag.names[0] in modes.reset:
                given = []
            elif use.flag.names[0] in modes.flags:
                given.append(use)
        return given

    def modes(self) -> frozenset[str]:
        """The modes the program runs in, as it combines the mode flags given
        (spec `modes`, by each flag's first name): the last or first one, or
        every one ("error" and "all"); the default when none is given.  A
        rule judges the mode that results, never the flags' mere presence:
        `xz -t -z f` compresses f."""
        modes = self.spec.modes
        given = [use.flag.names[0] for use in self.given_modes()]
        if modes is None or not given:
            return frozenset({modes.default} if modes is not None and modes.default else ())
        if modes.combine == "last":
            return frozenset(given[-1:])
        if modes.combine == "first":
            return frozenset(given[:1])
        return frozenset(given)


class Context:
    """State of one check: the policy, the denials so far, the segment, the rule running."""

    def __init__(self, policy: Policy, source: str, cwd: str | None):
        self.policy = policy
        self.source = source
        self.cwd = cwd
        self.denials: list[Denial] = []
        self.notes: list[str] = []
        self.segment: int | None = None
        # The literal per-command assignments of the command being checked.
        self.assignments: dict[str, str | None] = {}
        self.command: Command | None = None
        # What each descriptor of the command being checked refers to, after its
        # redirections (judge/descriptors.py); and every command's, by id.
        self.fds: descriptors.Table = {}
        self.tables: dict[int, descriptors.Table] = {}
        # The innermost `while` whose test or body is being checked.
        self.loop: While | None = None
        # The node being checked, command or compound, for `directories()`.
        self.at: object | None = None
        # Checking a command a program runs in directories of its own (find -execdir).
        self.elsewhere = False
        # How many times the command being checked may run: the product of its
        # enclosing loops' literal word counts; None when a loop's count is unknown.
        self.repeats: int | None = 1
        # Seconds the script sleeps so far (each sleep times its repeats): bounded as a whole.
        self.slept = 0.0
        self.places = Places()  # where each node runs (flow.py)
        self.rule = SYNTAX
        # Whether a program read so far for this command may read standard input.
        self.reads_stdin = False
        # What the script's loops let each variable hold (judge/shapes.py).
        self.variables: dict[str, shapes.Variable] = {}
        # Why a word's brace expansion was not followed, by the word's id (judge/expand.py).
        self.unexpanded: dict[int, str] = {}
        # The variables the script set, where each command runs (judge/values.py).
        self.known: dict[int, values.Env] = {}
        self.body: List | None = None  # the script's tree

    def deny(self, code: Code | str, span: Span, message: str, hint: str,
             effect: Effect | str | None = None, rule: str | None = None,
             fix: Fix | None = None) -> None:
        """Record a denial; `rule` defaults to the rule running now."""
        self.denials.append(Denial(Code(code).value, message, hint, span, self.segment,
                                   None if effect is None else Effect(effect).value,
                                   rule or self.rule, fix))

    def deny_word(self, word: Word, context: str = "") -> None:
        """Deny the first expansion of a word that is not allowed where it stands
        (its brace expansion, when the engine did not follow it)."""
        expansion = next((e for e in word.expansions if e.kind == BRACE), word.expansions[0]) \
            if id(word) in self.unexpanded else word.expansions[0]
        code, why = _EXPANSION_CODES[expansion.kind]
        shown = word.text
        where = f" {context}" if context else ""
        if code is Code.BP203:
            hint = (f"quote it so the program matches it itself ('{word.value or shown}'), "
                    "give it a fixed prefix such as ./, or put it after `--`")
        elif code is Code.BP201:
            hint = _variable_hint(self.source[expansion.span.start:expansion.span.end])
        elif code is Code.BP204:
            hint = _brace_hint(shown)
            why = self.unexpanded.get(id(word), why)
        else:
            hint = _EXPANSION_HINTS[code]
        at = expansion.span if code in (Code.BP200, Code.BP201, Code.BP202) else word.span
        self.deny(code, at, f"`{shown}`{where}: {why}", hint, rule=EXPANSION)

    def check_inner(self, words: tuple[Word, ...], appended: Appended | None = None,
                    repeated: bool = False) -> None:
        """Check a command a wrapper runs (`env X=1 rg`, `xargs rg`) as if typed
        alone; `appended` when the wrapper appends operands from its input,
        `repeated` when it runs the command for each file (or batch) found.  Either way
        the command runs an unknown number of times (the bounds of `sleep` and
        `seq` count it)."""
        outer = self.repeats
        if appended is not None or repeated:
            self.repeats = None
        try:
            check_argv(words, self, appended)
        finally:
            self.repeats = outer

    def runs_after(self) -> bool:
        """Whether any command may run after the one being checked in the shell
        it runs in, later calls included when the shell persists (judge/later.py)."""
        return later.runs_after(self.body, self.command, self.policy.persistent_shell)

    def check_assignment(self, assignment: Assignment) -> None:
        """Check `NAME=VALUE` against the harmless-variable list, as for the shell."""
        _check_assignment(assignment, self)

    def directories(self) -> set[str | None]:
        """Every directory the command being checked may run in (None: unknown)."""
        if self.elsewhere:
            return {None}  # `find -execdir`: in each found file's directory
        at = self.command if self.command is not None else self.at
        if at is None:
            return {self.cwd}
        return self.places.where.get(id(at), {self.cwd})

    def working_directories(self) -> set[str | None]:
        """Every value `$PWD` may have for the command being checked: the
        shell's logical directory, which `cd -L` keeps (None: unknown)."""
        if self.elsewhere:
            return {None}
        at = self.command if self.command is not None else self.at
        if at is None:
            return {self.cwd}
        return self.places.pwds.get(id(at), {self.cwd})

    def run_rule(self, name: str, inv: Invocation) -> None:
        outer, self.rule = self.rule, name
        rule = rules.get(name)
        assert rule.check is not None, name  # specs name only rules with a check (spec.py)
        inv.reads = rule.reads
        try:
            rule.check(inv, self)
        finally:
            self.rule = outer


def _variable_hint(text: str) -> str:
    """For a plain `$NAME`, say how to learn the value in a command of its own."""
    match = _PLAIN_VARIABLE.fullmatch(text)
    if match is None:
        return _EXPANSION_HINTS[Code.BP201]
    return (f"write the value literally; to learn it, run `printenv {match[1] or match[2]}` "
            "as a command of its own first")


def _brace_hint(text: str) -> str:
    """For one simple `{a,b}`, spell out the words it becomes."""
    match = _SIMPLE_BRACE.fullmatch(text)
    if match is None:
        return _EXPANSION_HINTS[Code.BP204]
    prefix, alternatives, suffix = match.groups()
    words = " ".join(prefix + a + suffix for a in alternatives.split(","))
    return f"write the words out: `{words}`"


def check(command: str, policy: Policy | None = None, *, cwd: str | None = None) -> Verdict:
    """Decide whether `command` may run in plan mode.  Never raises: any
    internal error is a denial (BP107), because a harness may read an
    exception as "go ahead".  A denied verdict carries a `fix` when every
    denial has one and the rewritten command is itself allowed."""
    try:
        return _check(command, policy or Policy.default(), cwd)
    except Exception as error:  # fail closed, whatever went wrong
        text = command if isinstance(command, str) else ""
        denial = Denial(Code.BP107.value, f"the checker failed on this command ({type(error).__name__}: "
                        f"{error}); it is denied because it could not be checked",
                        "rewrite the command more simply; please report this input as a bug",
                        Span(0, len(text)), None, None, INTERNAL)
        return Verdict(text, False, (denial,), ())


def _check(command: str, policy: Policy, cwd: str | None, fix: bool = True) -> Verdict:
    """The check; `fix` false for checking a rewrite, which needs no fixes of its own."""
    if not isinstance(command, str):
        raise TypeError("command must be str")
    if cwd is not None and (not isinstance(cwd, str) or "\0" in cwd):
        raise ValueError("the working directory is not a path")  # no command can run there
    ctx = Context(policy, command, cwd)
    if _screen(command, ctx):
        return Verdict(command, False, tuple(ctx.denials), ())
    script = parse_cache.read(exact.parse, command)
    commands = script.commands
    for code, span, message, hint in script.problems:
        rule = REDIRECTION if code == "BP105" else _PROBLEM_RULES.get(code[:3], SYNTAX)
        ctx.deny(code, span, message, hint or "rewrite it as simple commands", rule=rule)
    if len(commands) > policy.max_segments:
        ctx.deny(Code.BP103, Span(0, len(command)),
                 f"{len(commands)} commands in one line exceed the limit of {policy.max_segments}",
                 "split the work into several commands", rule=LIMITS)
        return Verdict(command, False, tuple(ctx.denials), commands, (), script)
    if script.body is None and not script.problems:
        ctx.notes.append("empty command")
    if client_shell.check_script(script, ctx):
        return Verdict(command, False, tuple(ctx.denials), commands, (), script)
    cdpath = policy.cdpath if policy.cdpath is not None else os.environ.get("CDPATH", "")
    ctx.places = command_directories(script.body, cwd, commands, cdpath=cdpath)
    ctx.body = script.body
    ctx.known = values.known_values(
        script.body, commands, lambda word, env: expand.value(word, command, env, assignment=True),
        lambda word, env: expand.words(word, command, env))
    index = {id(c): k for k, c in enumerate(commands)}
    if script.body is not None:
        at_risk = _lines_at_risk(script.body, command, policy)
        if client_shell.stdin_endless(ctx):  # every command reads the client's input unless redirected
            at_risk = set(range(len(script.body.items)))
        _check_node(script.body, ctx, index, at_risk)
    if not ctx.denials:  # only an allow needs the other readings
        from ..read.crosscheck import cross_check
        cross_check(script, ctx)
    denials, combined = tuple(ctx.denials), None
    if fix and any(d.fix is not None for d in denials):
        denials, combined = _with_fixes(command, ctx.denials, policy, cwd)
    return Verdict(command, not denials, denials, commands, tuple(ctx.notes), script, combined)


def _with_fixes(command: str, denials: list[Denial], policy: Policy,
                cwd: str | None) -> tuple[tuple[Denial, ...], Fix | None]:
    """The denials with only the fixes that are checked to resolve them, and
    their fixes together when the result passes.  A rewrite is checked in
    full, the other readings included (a line continuation that bash reads
    one way can read another once `--` stands before it), so a denial with a
    fix loads the second readers that other denials never need.  A fault
    here loses the fixes, never a denial."""
    try:
        def recheck(rewritten: str) -> Verdict:
            return _check(rewritten, policy, cwd, fix=False)

        if len(denials) == 1:  # its fix is the verdict's: one check tells both
            combined = fixes.combine(command, denials, lambda rewritten: recheck(rewritten).allowed)
            return (tuple(denials) if combined else (replace(denials[0], fix=None),)), combined
        checked = fixes.verified(command, denials, recheck)
        return checked, fixes.combine(command, checked, lambda rewritten: recheck(rewritten).allowed)
    except Exception:
        return tuple(replace(d, fix=None) for d in denials), None


# The rule a problem the reader found belongs to, by its code's family.
_PROBLEM_RULES = {"BP2": EXPANSION, "BP6": ASSIGNMENT}

def _lines_at_risk(body: List, source: str, policy: Policy) -> set[int]:
    """Indices of the top-level pipelines that have a later line after them: when
    the harness pipes the script into bash, their standard input is that line.
    bash runs an and-or list once it has read the line that ends it, so a
    pipeline is at risk when a line break (after `;`, `&`, a comment, or as
    the separator itself) comes between the end of its and-or list and the
    last pipeline."""
    if not policy.stdin_script or len(body.items) < 2:
        return set()
    last = body.items[-1].span.start
    at_risk: set[int] = set()
    pending: list[int] = []
    for k, item in enumerate(body.items[:-1]):
        pending.append(k)
        if body.ops[k] in ("&&", "||"):
            continue  # the and-or list goes on: bash reads it whole before running it
        if "\n" in source[item.span.end:last]:
            at_risk.update(pending)
        pending = []
    return at_risk


def _redirected(node, fds: descriptors.Table, ctx: Context) -> descriptors.Table:
    """Check a node's redirections in order, as bash applies them to the
    descriptors `fds` it inherits, and return the descriptors it runs with."""
    env = ctx.known.get(id(node), {})
    for redirect in node.redirects:
        redirect = _substituted_target(redirect, ctx, env)
        step = descriptors.apply(redirect, fds, ctx.loop, lambda path: _names_stdin(path, ctx))
        _check_redirect(redirect, ctx, step)
        fds = step.after
    return fds


def _names_stdin(path: str, ctx: Context) -> bool:
    """Whether opening `path` opens standard input again: /dev/stdin by its
    name, or a link to it in a directory the command may run in."""
    return stdin_in(path, ctx.directories()) or "stdin" in _on_disk(path, ctx)


def _check_input(fds: descriptors.Table, inherited: descriptors.Table, node, ctx: Context) -> None:
    """Standard input must not be a copy of the caller's standard output or
    error, however the redirection that made it is spelled (`0<&2`, `0>&2`,
    `3>&1 <&3`): those are a terminal or a socket the harness reads, and a
    program reading them waits for ever (Node-based harnesses keep them open).
    Judged where the node's own redirections make it so."""
    origin = fds.get(0)
    if origin is None or not origin.caller_output or origin is inherited.get(0):
        return
    made = next((r for r in reversed(node.redirects)
                 if (r.fd if r.fd is not None else (0 if r.op.startswith("<") else 1)) == 0), None)
    span = made.span if made is not None else node.span
    ctx.deny(Code.BP500, span,
             f"`{ctx.source[span.start:span.end]}` makes standard input a copy of descriptor "
             f"{origin.fd}, the caller's standard {'output' if origin.fd == 1 else 'error'}: a program "
             "reading it waits on a terminal or pipe that never ends",
             "read a file instead: `< FILE`, or `< /dev/null` for no input", Effect.HANG,
             rule=REDIRECTION)


def _check_node(node, ctx: Context, index: dict[int, int], at_risk: Set[int] = frozenset(),
                fds: descriptors.Table | None = None, piped_stderr: bool = False) -> None:
    """Check every command in the tree, as bash would run it.

    Lists, pipelines, subshells, groups and `if`/`case` branches are checked
    command by command; a `for` loop's variable holds what its words say (a
    literal set, file names under a fixed prefix, or anything); `while` loops
    only read lines (`while read -r l; do …; done < f`), since a loop with any
    other test may never end.  Commands inside substitutions run too, so they
    are checked like any other.  `fds`: the descriptors the node inherits
    (judge/descriptors.py); `piped_stderr`: `|&` after it adds `2>&1` after
    its own redirections."""
    fds = descriptors.start() if fds is None else fds
    if isinstance(node, List):
        for item, op in zip(node.items, node.ops):
            if op == "&":
                ctx.segment = None
                ctx.deny(Code.BP102, item.span, "`&` runs the command before it in the background",
                         "drop the `&`; plan mode runs commands in the foreground only", rule=SYNTAX)
        for k, item in enumerate(node.items):
            _check_node(item, ctx, index, fds=descriptors.with_script(fds) if k in at_risk else fds)
        return
    if isinstance(node, Pipeline):
        last = len(node.commands) - 1
        for k, member in enumerate(node.commands):
            inherited = dict(fds)
            if k:
                inherited[0] = descriptors.Origin(descriptors.PIPE_IN, joint=(id(node), k - 1),
                                                  writer=node.commands[k - 1], reader=member)
            if k < last:
                inherited[1] = descriptors.Origin(descriptors.PIPE_OUT, joint=(id(node), k))
            _check_node(member, ctx, index, fds=inherited,
                        piped_stderr=k < last and k < len(node.stderr) and node.stderr[k])
        return
    if isinstance(node, Command):
        # Bash expands a simple command's words, and runs their substitutions,
        # before it applies the command's redirections.
        _check_substitutions(node, ctx, index, fds)
        ctx.segment = index[id(node)]
        ctx.command = ctx.at = node
        own = _redirected(node, fds, ctx)
        if piped_stderr and 1 in own:
            own = {**own, 2: own[1]}
        ctx.tables[id(node)] = own
        _check_input(own, fds, node, ctx)
        _check_command(node, ctx, own)
        return
    _check_substitutions(node, ctx, index, fds)
    ctx.segment = None
    ctx.command = None
    ctx.at = node
    inherited, fds = fds, _redirected(node, fds, ctx)
    if piped_stderr and 1 in fds:
        fds = {**fds, 2: fds[1]}
    _check_input(fds, inherited, node, ctx)
    if isinstance(node, (Subshell, Group)):
        _check_node(node.body, ctx, index, fds=fds)
    elif isinstance(node, If):
        for test, body in node.branches:
            _check_node(test, ctx, index, fds=fds)
            _check_node(body, ctx, index, fds=fds)
        if node.orelse is not None:
            _check_node(node.orelse, ctx, index, fds=fds)
    elif isinstance(node, For):
        if node.words is not None:
            env = ctx.known.get(id(node), {})
            node = dataclasses.replace(node, words=_expanded(node.words, ctx, program=False, env=env))
        _check_loop_words(node, ctx)
        shape = shapes.loop_variable(node.words or ())
        if node.name in values.assigned(node.body):  # `read f` or `f=…` in the body: any value
            shape = shapes.UNKNOWN
        literal = node.words is not None and all(w.value is not None for w in node.words)
        with _binding(ctx, (node.name,), shape, node.span, len(node.words or ()) if literal else None):
            _check_node(node.body, ctx, index, fds=fds)
    elif isinstance(node, ArithFor):
        counted = loops.counting_passes(node)
        if isinstance(counted, str):
            ctx.deny(Code.BP101, node.span, f"`for (( {node.init}; {node.test}; {node.update} ))`: "
                     f"{counted}, so the checker cannot see it end",
                     "count with literal bounds: for ((i = 0; i < 3; i++)), or loop over words",
                     Effect.HANG, rule=SYNTAX)
            counted = ("", [])
        name, passes = counted
        if name and name in values.assigned(node.body):
            ctx.deny(Code.BP101, node.span, f"the loop's body assigns `{name}`, so its passes are not "
                     "the ones counted", "use another name in the body", Effect.HANG, rule=SYNTAX)
        counts = tuple(Word(str(v), node.span, str(v)) for v in passes)
        with _binding(ctx, (name,) if name else (), shapes.loop_variable(counts), node.span,
                      len(passes)):
            _check_node(node.body, ctx, index, fds=fds)
    elif isinstance(node, While):
        endless = loops.endless_test(node.test, node.until)
        if endless and not loops.always_breaks(node.body):
            ctx.deny(Code.BP101, node.body.span,
                     f"`{ctx.source[node.test.span.start:node.test.span.end]}` never ends the loop, and "
                     "some way through its body does not reach `break`", "end every path of the body "
                     "with `break`, or loop over words with `for`", Effect.HANG, rule=SYNTAX)
        names = () if endless else _read_loop(node, ctx)
        outer, ctx.loop = ctx.loop, node
        try:  # the test runs each time too; an endless loop's body once
            with _binding(ctx, names, shapes.UNKNOWN, node.span, 1 if endless else None):
                _check_node(node.test, ctx, index, fds=fds)
                _check_node(node.body, ctx, index, fds=fds)
        finally:
            ctx.loop = outer
        if names:
            _check_read_input(node, ctx)
    elif isinstance(node, Case):
        for arm in node.arms:
            if arm.body is not None:
                _check_node(arm.body, ctx, index, fds=fds)
    elif isinstance(node, Cond):
        _check_cond(node, ctx)
    # Arith: the reader admits only numbers and operators, which change nothing.


def _check_substitutions(node, ctx: Context, index: dict[int, int], fds: descriptors.Table) -> None:
    """The commands inside a node's own words (not its bodies): bash runs them
    first, with their output captured."""
    captured = None
    for child in children(node):
        if isinstance(child, List) and not _is_body(node, child):
            captured = captured or {**fds, 1: descriptors.Origin(descriptors.CAPTURED)}
            _check_node(child, ctx, index, fds=captured)


def _check_read_input(node: While, ctx: Context) -> None:
    """`while read …` ends only when `read` reaches the end of input it
    consumes: one opened once, on the loop or around it, or a pipe into it.
    A redirection on `read` itself, or anywhere else inside the loop, is
    opened again on every pass, so `read` gets its first line for ever
    (`while read -r l < f`, a here-string or here-document on `read`)."""
    command = node.test.items[0].commands[0]
    origin = ctx.tables.get(id(command), {}).get(0)
    if descriptors.reopened_each_pass(origin, node):
        redirect = origin.redirect if origin is not None else None
        span = redirect.span if redirect is not None else command.span
        ctx.segment = None
        ctx.deny(Code.BP101, span,
                 f"`{ctx.source[span.start:span.end]}` is opened again on every pass of the loop, so "
                 "`read` gets the same first line each time and the loop never ends",
                 "redirect the whole loop: `while read -r line; do …; done < FILE`", Effect.HANG,
                 rule=SYNTAX)


def _is_body(node, child) -> bool:
    """Whether `child` is one of a compound command's own command lists (checked
    in order below) rather than a substitution inside one of its words."""
    if isinstance(node, (Subshell, Group)):
        return child is node.body
    if isinstance(node, If):
        return any(child is t or child is b for t, b in node.branches) or child is node.orelse
    if isinstance(node, (For, ArithFor)):
        return child is node.body
    if isinstance(node, While):
        return child is node.test or child is node.body
    if isinstance(node, Case):
        return any(child is arm.body for arm in node.arms)
    return False


def _check_command(node: Command, ctx: Context, fds: descriptors.Table) -> None:
    ctx.fds = fds
    ctx.reads_stdin = False
    ctx.variables["PWD"] = shapes.working_directory(ctx.working_directories())
    try:
        check_segment(node, ctx)
    finally:
        del ctx.variables["PWD"]
    origin = fds.get(0)
    if origin is not None and origin.is_script and client_shell.stdin_endless(ctx):
        client_shell.stdin_denied(node, ctx)  # the client's own stdin: its socket, a terminal
    elif origin is not None and origin.is_script and ctx.reads_stdin and node.words:
        line = ctx.source.count("\n", 0, node.span.start) + 1
        ctx.deny(Code.BP108, node.words[0].span,
                 f"`{ctx.source[node.span.start:node.span.end]}` on line {line} may read standard "
                 "input; a harness that pipes the script into bash gives it the lines after it, "
                 "which bash then never runs as checked",
                 "write the whole script on one line (join the lines with `;` or `&&`), or "
                 "give it its input (`< FILE`); for a harness that runs commands with "
                 "`bash -c`, set stdin_script = false",
                 Effect.EXEC, rule=SCRIPT_INPUT)


class _binding:
    """Give loop variables their shape inside the body, count how often the body
    runs (`runs`, None: unknown), and deny names that are not shell-local
    (shapes.local_name)."""

    def __init__(self, ctx: Context, names, shape, span: Span, runs: int | None):
        self.ctx, self.names, self.shape, self.runs = ctx, tuple(names), shape, runs
        for name in self.names:
            if not shapes.local_name(name):
                ctx.deny(Code.BP600, span,
                         f"the loop assigns `{name}`, which may be a variable the harness exported: "
                         "every program after it would run with the loop's value",
                         "name the loop variable in lower case, e.g. `for f in …`", rule=ASSIGNMENT)

    def __enter__(self):
        self.saved_repeats = self.ctx.repeats
        if self.ctx.repeats is not None:
            self.ctx.repeats = None if self.runs is None else self.ctx.repeats * self.runs
        self.saved = {n: self.ctx.variables.get(n) for n in self.names}
        for name in self.names:
            self.ctx.variables[name] = self.shape

    def __exit__(self, *exc):
        self.ctx.repeats = self.saved_repeats
        for name, shape in self.saved.items():
            if shape is None:
                self.ctx.variables.pop(name, None)
            else:
                self.ctx.variables[name] = shape


def _check_loop_words(node: For, ctx: Context) -> None:
    """A `for` loop's words: globs, variables and substitutions are fine (their
    values become the variable's, judged where it is used); brace expansion and
    `$'…'` stay denied."""
    if node.words is None:
        ctx.deny(Code.BP101, node.span, "`for NAME; do` loops over the script's arguments, which "
                 "the checker cannot see", "list the words: for f in a b c; do …; done", rule=SYNTAX)
        return
    for word in node.words:
        if word.value is None and not shapes.unknown_kinds_allowed(word):
            ctx.deny_word(word, "in the loop's words")


def _read_loop(node: While, ctx: Context) -> tuple[str, ...]:
    """The variables of `while read NAME…; do`; any other loop may never end."""
    items = node.test.items
    command = items[0].commands[0] if len(items) == 1 and len(items[0].commands) == 1 else None
    if node.until or not isinstance(command, Command) or not command.words \
            or command.words[0].value != "read" or items[0].negated:
        ctx.deny(Code.BP101, node.test.span,
                 "only `while read …` loops are checked: a loop with another test may never end",
                 "read lines: `while read -r line; do …; done < FILE`, or loop over words with `for`",
                 Effect.HANG, rule=SYNTAX)
        return ()
    # Every identifier-like word, option values included: binding one too many is harmless.
    return tuple(w.value for w in command.words[1:]
                 if w.value and w.value.isascii() and w.value.isidentifier())


_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _check_cond(node: Cond, ctx: Context) -> None:
    """`[[ … ]]`: `-v`/`-R` evaluate the subscript of the name they test, and the
    arithmetic tests evaluate their operands as expressions (a name is looked
    up and its value evaluated), so their operands must be literal numbers."""
    words = node.words
    for k, word in enumerate(words):
        if word.value in ("-v", "-R"):
            ctx.deny(Code.BP400, word.span, f"`[[ {word.value} NAME ]]` evaluates the array subscript "
                     "in NAME, which can run commands", "test files and strings: -f, -d, -n, -z, ==",
                     Effect.EXEC, rule=FLAGS)
        elif word.value in _ARITHMETIC_TESTS:
            for operand in (words[k - 1] if k else None, words[k + 1] if k + 1 < len(words) else None):
                if operand is None or not (operand.value and _SIGNED_NUMBER.fullmatch(operand.value)):
                    ctx.deny(Code.BP202, (operand or word).span,
                             f"`{word.value}` inside `[[ ]]` evaluates its operands as arithmetic; a "
                             "name or expansion there is evaluated as an expression",
                             "compare literal numbers, or use `[ A -eq B ]`", rule=EXPANSION)
                    break
        elif word.value is None and not shapes.unknown_kinds_allowed(word):
            ctx.deny_word(word, "inside [[ ]]")


_SIGNED_NUMBER = re.compile(r"[-+]?[0-9]+")
_PLAIN_TEXT = re.compile(r"[\t\n -~]*")  # what the loop below lets pass without a look-up


def _screen(command: str, ctx: Context) -> bool:
    """Deny input that no parser should see: too long, NUL, control, bidi."""
    if len(command) > ctx.policy.max_length:
        ctx.deny(Code.BP103, Span(0, len(command)),
                 f"the command is {len(command)} characters long; the limit is {ctx.policy.max_length}",
                 "split the work into smaller commands", rule=SCREEN)
        return True
    if _PLAIN_TEXT.fullmatch(command):
        return False
    for index, ch in enumerate(command):
        if ch in "\n\t" or " " <= ch < "\x7f":
            continue
        if ch == "\x00":
            what = "a NUL byte"
        elif "\ud800" <= ch <= "\udfff":
            what = "invalid UTF-8"
        elif ch < " " or ch == "\x7f" or "\x80" <= ch < "\xa0":
            what = f"the control character U+{ord(ch):04X}"
        elif ch in _BIDI:
            what = f"the bidirectional control U+{ord(ch):04X}"
        elif unicodedata.category(ch) in ("Cf", "Co", "Cn", "Zl", "Zp"):
            what = f"the invisible or unassigned character U+{ord(ch):04X}"
        else:
            continue
        ctx.deny(Code.BP104, Span(index, index + 1), f"the command contains {what}",
                 "retype the command with plain characters", rule=SCREEN)
        return True
    return False


def check_segment(segment: Command, ctx: Context) -> None:
    env = ctx.known.get(id(segment), {})
    segment = dataclasses.replace(segment, words=_expanded(segment.words, ctx, env=env))
    ctx.assignments = {a.name: a.value.value for a in segment.assignments}
    bare = not segment.words
    for assignment in segment.assignments:
        if bare and values.tracked(assignment.name):
            _check_local_assignment(assignment, ctx)
        else:
            _check_assignment(assignment, ctx)
    if ctx.policy.scope_roots:
        outer, ctx.rule = ctx.rule, SCOPE
        check_scope(segment, ctx)
        ctx.rule = outer
    if not segment.words:
        if any(not values.tracked(a.name) for a in segment.assignments):
            ctx.deny(Code.BP303, segment.span,
                     "an assignment without a command changes the shell for every later command",
                     "drop the assignment", rule=ASSIGNMENT)
        return
    if client_shell.check_names(segment, ctx):
        return  # a function or alias of the client's shell runs instead, and was checked
    check_argv(segment.words, ctx)


def _expanded(words: tuple[Word, ...], ctx: Context, program: bool = True,
              env: values.Env | None = None) -> tuple[Word, ...]:
    """The words bash makes of written words by brace expansion, then of the
    parameters the script set (judge/expand.py).  A program name is left as
    written (denied when it expands: BP302), and so is every word of
    `command …`, whose operand may name the cd builtin that judge/flow.py
    must see written."""
    out: list[Word] = []
    substitute = bool(env) and not (program and words and words[0].value in ("command", "builtin"))
    for k, word in enumerate(words):
        if k == 0 and program:
            out.append(word)
            continue
        made, refused = expand.brace_words(word)
        if refused is not None:
            ctx.unexpanded[id(word)] = refused
        declaration = program and words[0].value == "export" and _ASSIGNMENT_WORD.match(word.text)
        if substitute and made == (word,):
            known: tuple[Word, ...] | None
            if declaration:
                value = expand.value(word, ctx.source, env or {})  # expanded as an assignment
                known = None if value is None else (Word(word.text, word.span, value),)
            else:
                known = expand.substituted(word, ctx.source, env or {})
            if known is not None:
                made = known
        if declaration and made == (word,) and word.value is None:
            made = (shapes.quoted(word),)  # `export A=$x` is neither split nor globbed
        out += made
    return tuple(out)


def _substituted_target(redirect, ctx: Context, env: values.Env):
    """A redirection whose target is parameters the script set, with the value
    bash opens (one word: more is bash's "ambiguous redirect"; a here-string
    is neither split nor globbed)."""
    target = redirect.target
    if not env or target is None or target.value is not None or redirect.op in ("<<", "<<-"):
        return redirect
    made: tuple[Word, ...] | None
    if redirect.op == "<<<":
        text = expand.value(target, ctx.source, env)
        made = None if text is None else (Word(target.text, target.span, text),)
    else:
        made = expand.substituted(target, ctx.source, env)
    if made is None or len(made) != 1:
        return redirect
    return dataclasses.replace(redirect, target=made[0])


_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_ASSIGNED_KINDS = frozenset({PARAMETER, ARITHMETIC, GLOB, BRACE, TILDE})


def _check_local_assignment(assignment: Assignment, ctx: Context) -> None:
    """`name=VALUE` or `name=(WORDS)` without a command, for a shell-local
    name: it sets a variable that only this script's later commands expand,
    and the checker follows its value where it can (judge/values.py).  The
    value's substitutions are commands checked like any other; `$'…'` and the
    like stay denied."""
    for word in assignment.elements if assignment.elements is not None else (assignment.value,):
        if word.value is None and not all(
                e.kind in _ASSIGNED_KINDS or (e.kind in (COMMAND_SUB, PROCESS_SUB) and e.body is not None)
                for e in word.expansions):
            ctx.deny_word(word, f"in the value of {assignment.name}")


def _check_assignment(assignment: Assignment, ctx: Context) -> None:
    allowed = ctx.policy.env.get(assignment.name)
    value = assignment.value
    if allowed is None:
        ctx.deny(Code.BP600, assignment.span,
                 f"`{assignment.name}=` changes what the program runs or reads; only harmless "
                 "variables may be set",
                 f"drop `{assignment.name}=…`; harmless ones such as LC_ALL, TZ or NO_COLOR are "
                 "allowed (docs/config.md)", rule=ASSIGNMENT)
        return
    if value.value is None:
        ctx.deny_word(value, f"in the value of {assignment.name}")
        return
    if isinstance(allowed, re.Pattern):
        if not allowed.fullmatch(value.value):
            ctx.deny(Code.BP600, assignment.span,
                     f"`{assignment.name}={value.value}` is not a plain name for it (a path "
                     "makes the program load files from there)",
                     "name an installed one (LC_ALL=C, TZ=UTC) or drop it", rule=ASSIGNMENT)
    elif allowed != "*" and value.value not in allowed:
        ctx.deny(Code.BP600, assignment.span,
                 f"`{assignment.name}` may only be set to {', '.join(allowed)}",
                 f"write {assignment.name}={allowed[0]} or drop it", rule=ASSIGNMENT)


def _check_redirect(redirect, ctx: Context, step: descriptors.Step) -> None:
    """One redirection; `step` is what it does to the descriptors."""
    op, target = redirect.op, redirect.target
    if op in ("<<", "<<-"):
        body = redirect.body or ""
        if not redirect.quoted and any(ch in body for ch in "$`\\"):
            ctx.deny(Code.BP105, redirect.span,
                     "the here-document's delimiter is unquoted, so `$`, backquotes and `\\` in its "
                     "body are expanded", "quote the delimiter: <<'EOF'", rule=REDIRECTION)
        return
    if op in (">&-", "<&-"):
        return
    if target is None:
        ctx.deny(Code.BP500, redirect.span, f"unsupported redirection `{op}`", "drop the redirection",
                 rule=REDIRECTION)
        return
    if target.value is None:
        if op == "<<<" or not target.pathname_only:
            ctx.deny_word(target, "in a here-string" if op == "<<<" else "as a redirection target")
        else:
            ctx.deny(Code.BP501, target.span,
                     f"the redirection target `{target.text}` is not a literal path",
                     "write the file name literally, in quotes if needed", rule=REDIRECTION)
        return
    path = target.value
    if op in (">&", "<&") and _DESCRIPTOR.fullmatch(path):
        # Copying or moving a descriptor opens nothing; what the copy is
        # judged as is decided by the descriptor that results (_check_input).
        if step.unknown_source and op == ">&":
            # Another descriptor may be a file the harness holds open for writing.
            ctx.deny(Code.BP500, redirect.span,
                     f"`{ctx.source[redirect.span.start:redirect.span.end]}` writes to descriptor "
                     f"{step.source}, which this command did not open: it may be a file the caller "
                     "holds open", "redirect to the standard streams only (2>&1, >&2) or to /dev/null",
                     Effect.WRITE, rule=REDIRECTION)
        elif step.unknown_source:
            # Reading another descriptor reads whatever the harness holds open
            # there: a pipe may never end, a terminal waits for a person.
            ctx.deny(Code.BP500, redirect.span,
                     f"`{ctx.source[redirect.span.start:redirect.span.end]}` reads descriptor "
                     f"{step.source}, which this command did not open: it may be a pipe or terminal "
                     "that never ends", "read a file instead: `< FILE`", Effect.HANG,
                     rule=REDIRECTION)
        return
    if op == "<<<":
        return
    if op in ("<", "<&"):
        if any(path.startswith(p) for p in ctx.policy.network_paths):
            ctx.deny(Code.BP501, target.span, f"reading `{path}` makes bash open a network connection",
                     "read a local file instead", Effect.NETWORK, rule=REDIRECTION)
        elif op == "<" and (special_in(path, ctx.directories())
                            or _on_disk(path, ctx) - {None, "stdin"}):
            ctx.deny(Code.BP501, target.span, f"`<{path}` reads a device, FIFO or kernel file, "
                     "which may never end", "read a regular file", Effect.HANG, rule=REDIRECTION)
        elif op == "<&":
            ctx.deny(Code.BP500, redirect.span, f"`<&{path}` is not a descriptor number",
                     "use <file to read a file", rule=REDIRECTION)
        return
    if op in (">", ">>", "&>", "&>>", ">|", ">&") and path in ctx.policy.write_targets:
        return
    written = f"{'' if redirect.fd is None else redirect.fd}{op}{target.text}"
    span = Span(redirect.span.start, target.span.end)
    ctx.deny(Code.BP500, span, f"`{written}` opens `{path}` for writing",
             "drop the redirection and read the output directly, or redirect to /dev/null",
             Effect.WRITE, rule=REDIRECTION, fix=fixes.drop(ctx.source, span))


def _on_disk(path: str, ctx: Context) -> set[str | None]:
    """With a working directory: what `path` is in each directory the command
    may run in (special.on_disk: None for a plain file)."""
    if path.startswith("/"):
        return {on_disk(path)}
    return {on_disk(os.path.join(d, path)) for d in ctx.directories() if d is not None}


def check_argv(words: tuple[Word, ...], ctx: Context, appended: Appended | None = None) -> None:
    """Check one program's argv (the program word first).  `appended` names
    the wrapper that appends operands from standard input, if any."""
    program = words[0]
    if program.value is None:
        expansion = program.expansions[0]
        ctx.deny(Code.BP302, program.span,
                 f"the program name `{program.text}` holds {expansion.kind.replace('-', ' ')}",
                 "name the program literally", rule=PROGRAM)
        return
    name = program.value
    if "/" in name:
        directory, _, base = name.rpartition("/")
        own = ctx.policy.spec(base) if base and name.startswith("/") else None
        if not name.startswith("/") or not base or (
                directory not in ctx.policy.trusted_dirs and not (own and installed_in(own, directory))):
            ctx.deny(Code.BP301, program.span,
                     f"`{name}` is a path, not a trusted program"
                     + ("" if name.startswith("/") else " (relative paths run whatever file is there)"),
                     f"call it by its bare name: `{base or name}`", rule=PROGRAM)
            return
        name = base
    spec = ctx.policy.spec(name) if name else None
    if spec is None:
        ctx.deny(Code.BP300, program.span, f"`{name}` is not in the read-only whitelist",
                 "use a whitelisted program (`bash-policy programs`), add a spec in bash-policy.toml, "
                 "or leave plan mode", rule=PROGRAM)
        return
    if spec.denied is not None:
        ctx.deny(Code.BP300, program.span, f"`{name}` {spec.denied.why}",
                 spec.denied.fix or _DEFAULT_FIX[spec.denied.effect], spec.denied.effect, rule=PROGRAM)
        return
    if spec.response_files and _response_file(spec, words, appended, ctx):
        return
    if spec.project_files and _special_project_file(spec, program, ctx):
        return
    reader = ArgvReader(spec, words, 1, ctx, appended)
    reader.read()
    if ctx.policy.shell is not None and not ctx.denials:  # what it walks by itself, in the client's shell
        reader.inv.reads = None
        client_shell.check_walks(name, words, reader.opened(), ctx, appended)


PROJECT_FILES = engine_rule("project_files", """Project files a program reads by itself that are FIFOs or devices.
    cargo reads Cargo.toml, npm package.json, go go.mod in the directory it
    runs in or above it; a committed `Cargo.toml -> /dev/zero` or a FIFO
    from an archive never ends (red team RT3: cargo metadata hung).""",
    codes=[Code.BP601], deny=[], allow=["cargo --version"],
    untestable="needs a directory holding a special project file: tests/test_special_files.py")


def _special_project_file(spec: CommandSpec, program: Word, ctx: Context) -> bool:
    """Deny (True) when a project file in a directory the command may run in,
    or above it, is not a regular file (a link to /dev/stdin reads the script)."""
    for directory in sorted(d for d in ctx.directories() if d is not None):
        while True:
            for name in spec.project_files:
                what = on_disk(os.path.join(directory, name))
                if what is None:
                    continue
                ctx.deny(Code.BP601, program.span,
                         f"`{spec.display}` reads {os.path.join(directory, name)}, which is "
                         f"{'a link to standard input' if what == 'stdin' else what}: reading it "
                         "blocks or never ends", "make it a regular file, or leave plan mode",
                         Effect.HANG, rule=PROJECT_FILES)
                return True
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return False


RESPONSE_FILE = engine_rule("response_file", """Words that are or may be `@FILE` where arguments are read from FILE.
    binutils (strings, readelf), ruff, mypy and 7-Zip read further
    options and file names from FILE, even after `--`: a FIFO or a listed
    /dev/zero never ends, a listed /dev/stdin reads the script, and the
    options are ones the checker never saw.""",
    codes=[Code.BP406], deny=["strings @args", "ruff rule @args", "7z l x.zip @list", "readelf -h *"],
    allow=["strings -n 8 data.bin", "readelf -h src/*.o", "strings ~/x", "7z l x.zip"])


def _response_file(spec: CommandSpec, words: tuple[Word, ...], appended: Appended | None,
                   ctx: Context) -> bool:
    """Deny (True) a word that is or may become `@FILE`: a literal one, or one
    whose start is not a fixed literal or a tilde; operands xargs appends may
    be anything."""
    for word in words[1:]:
        if word.value is not None:
            risky = word.value.startswith("@")
        else:
            risky = not (word.text.startswith("~") or (word.prefix and not word.prefix.startswith("@")))
        if risky:
            ctx.deny(Code.BP406, word.span,
                     f"`{spec.display}` reads options and file names from a word starting with `@`, "
                     f"and `{word.text}` is or may become one",
                     "name the files literally, or with a glob that starts with a directory (`./*.o`)",
                     Effect.HANG, rule=RESPONSE_FILE)
            return True
    if appended is not None:
        ctx.deny(Code.BP406, words[0].span,
                 f"`{spec.display}` reads options and file names from an operand starting with `@`, "
                 f"and {appended.wrapper} appends operands it cannot see", f"run {spec.display} on named files",
                 Effect.HANG, rule=RESPONSE_FILE)
        return True
    return False


class ArgvReader:
    """Reads `words[start:]` with one spec's option grammar, as the program does
    (getopt_long or git's parse-options: clusters, attached and separate values,
    `--`, permutation or the POSIX stop at the first operand), then judges it.
    A subcommand hands the rest of the words to a reader of its own."""

    def __init__(self, spec: CommandSpec, words: tuple[Word, ...], start: int, ctx: Context,
                 appended: Appended | None):
        self.spec = spec
        self.words = words
        self.named_by = words[start - 1]  # the program or subcommand word
        self.i = start
        self.ctx = ctx
        self.appended = appended
        self.inv = Invocation(spec, words)
        self.options_done = False
        self.double_dash: Fix | None = None  # the `--` that fixes this command's operands, once found

    def deny(self, code: Code, span: Span, message: str, hint: str,
             effect: Effect | None = None, rule: str = FLAGS, fix: Fix | None = None) -> None:
        self.ctx.deny(code, span, message, hint, effect, rule=rule, fix=fix)

    def read(self) -> None:
        spec, ctx = self.spec, self.ctx
        for name, (required, reason) in spec.requires_env.items():
            if ctx.assignments.get(name) not in required:
                ctx.deny(Code.BP304, self.words[self.i - 1].span, f"`{spec.display}` {reason.why}",
                         reason.fix or f"prefix the command with {name}={required[0]}", reason.effect,
                         rule=PROGRAM)
        if spec.obsolete is not None and self.i < len(self.words):
            self.obsolete_form()
        while self.i < len(self.words):
            word = self.words[self.i]
            self.i += 1
            if word.value is None:
                self.expanding_word(word)
            elif self.is_operand(word.value):
                if spec.subcommands and not self.inv.positionals and not self.options_done:
                    self.subcommand(word, word.value)
                    return
                self.inv.positionals.append(word)
                if not spec.permute:
                    self.options_done = True
            elif word.value == "--" and spec.double_dash and not (spec.subcommands
                                                                 and not self.inv.positionals):
                # Before a subcommand `--` means something else to each program
                # (git rejects it); it falls through to be denied as a flag.
                self.options_done = True
                self.inv.after_double_dash = True
            elif spec.style == "single" or word.value.startswith("--"):
                self.long_option(word, word.value)
            else:
                self.short_cluster(word, word.value)
        self.finish(has_sub=False)

    def is_operand(self, value: str) -> bool:
        spec = self.spec
        if spec.style == "text" and value not in spec.flags:
            self.options_done = True  # echo-like: the first word that is not a flag starts the text
        starts = ("-", "+") if spec.plus_options else ("-",)
        return self.options_done or value in ("-", "+") or not value.startswith(starts)

    def expanding_word(self, word: Word) -> None:
        """A word whose value bash computes: allowed where no value it can take
        does harm (judge/shapes.py) — after `--`, or one word that cannot start
        with `-`, or any word for a program whose every flag is harmless."""
        spec, inv, ctx = self.spec, self.inv, self.ctx
        if spec.subcommands and not inv.positionals and not self.options_done:
            if word.pathname_only:
                self.deny(Code.BP405, word.span, f"`{spec.display}` needs a literal subcommand",
                          "write the subcommand literally", rule=SUBCOMMAND)
            else:
                ctx.deny_word(word)
            return
        if not self.options_done and self.flag_with_unknown_value(word):
            return
        if not shapes.unknown_kinds_allowed(word):
            ctx.deny_word(word)
            return
        single = shapes.single(word, ctx.source, ctx.variables)
        safe = shapes.dash_safe(word, ctx.source, ctx.variables)
        sign = "`-`"
        if spec.plus_options:
            safe, sign = safe and shapes.plus_safe(word, ctx.source), "`-` or `+`"
        if not word.pathname_only and spec.hook and not rules.get(spec.hook).unknown_operands:
            ctx.deny_word(word)  # the program's rule reads its operands: they must be known
        elif (self.options_done or safe or (spec.harmless and spec.positionals.role == "read")
              or (spec.style == "text" and not spec.flags)):  # test: every word is its expression
            inv.positionals.append(word)
        elif GLOB in {e.kind for e in word.expansions}:
            self.deny(Code.BP203, word.span,
                      f"`{word.text}` expands to file names, and one starting with {sign} "
                      f"would be read by {spec.display} as a flag", _glob_hint(word.text),
                      rule=OPERANDS, fix=self.operand_fix(word) or fixes.dot_slash(word))
        elif not single and shapes.dash_safe(shapes.quoted(word), ctx.source, ctx.variables):
            self.deny(Code.BP404, word.span,
                      f"unquoted, `{word.text}` is split at blanks into words, and one may start "
                      f"with {sign}, which {spec.display} would read as a flag",
                      _quote_hint(word, self.rewritten), rule=OPERANDS, fix=self.operand_fix(word))
        else:
            kind = "is split into words; one" if not single else "is a word that"
            self.deny(Code.BP404, word.span,
                      f"`{word.text}` {kind} may start with {sign}, which {spec.display} would read "
                      "as a flag", self.double_dash_hint(word), rule=OPERANDS,
                      fix=self.operand_fix(word))
        if not spec.permute and inv.positionals:
            self.options_done = True

    def operand_fix(self, word: Word) -> Fix | None:
        """`--` before the first operand of this command that may become a
        flag; every later one is covered by the same `--`."""
        if self.double_dash is None and self.spec.double_dash:
            at = next(k for k, w in enumerate(self.words) if w is word)
            self.double_dash = fixes.double_dash(self.words, at, ("-", "+") if self.spec.plus_options
                                                 else ("-",))
        return self.double_dash

    def appended_fix(self) -> Fix | None:
        """`--` before the operands a wrapper's command is given (`xargs rg
        foo` -> `xargs rg -- foo`), or after its last word when it has none:
        what the wrapper appends then stays operands."""
        if not self.spec.double_dash:
            return None
        words, pos = self.inv.words, self.inv.positionals
        if pos:
            at = next(k for k, w in enumerate(words) if w is pos[0])
            return fixes.double_dash(words, at, ("-", "+") if self.spec.plus_options else ("-",))
        end = words[-1].span.end
        return Fix((Edit(Span(end, end), " --"),), SAFE)

    def drop_flag(self, word: Word, flag: Flag, with_next: bool) -> Fix | None:
        """Dropping a denied flag (and its separate value), where its spec's
        fix says to (`drop -i and read the edited text on standard output`):
        unsafe, since what the flag did no longer happens.  A flag whose spec
        says something else is a mode of its own (`md5sum -c`, `tar
        --delete`), and dropping it would mean another command."""
        reason = flag.denied
        if reason is None or not any(reason.fix == f"drop {name}" or reason.fix.startswith(f"drop {name} ")
                                     or reason.fix.startswith(f"drop {name};")
                                     for name in ("it", *flag.names)):
            return None
        at = next(k for k, w in enumerate(self.words) if w is word)
        end = self.words[at + 1] if with_next and at + 1 < len(self.words) else word
        return fixes.drop(self.ctx.source, Span(word.span.start, end.span.end))

    def double_dash_hint(self, word: Word) -> str:
        """The command with `--` before `word`, when no flag follows it.  A
        variable is quoted (one value); a command substitution is not (it is
        usually a list of files)."""
        words = self.words
        at = next(k for k, w in enumerate(words) if w is word)
        if any(w.value is None or w.value.startswith("-") for w in words[at + 1:]):
            return "put it after `--`, or give it a fixed prefix such as `./`"
        listing = word.text.startswith(("$(", "`"))
        text = word.text if word.text.startswith('"') or listing else f'"{word.text}"'
        return f"put it after `--`: `{self.rewritten(word, '-- ' + text)}`"

    def rewritten(self, word: Word, replacement: str) -> str:
        """The command's words with `word` replaced."""
        return " ".join(replacement if w is word else w.text for w in self.words)

    def flag_with_unknown_value(self, word: Word) -> bool:
        """`--author="$USER"` or `-n"$N"`: a known flag whose attached value is
        computed at run time.  True when the word was judged here."""
        prefix = word.prefix
        if prefix.startswith("--"):
            name, eq, _ = prefix.partition("=")
            if not eq:
                return False
        elif prefix[:1] == "-" or (prefix[:1] == "+" and self.spec.plus_options):
            if len(prefix) != 2:
                return False
            name = prefix
        else:
            return False
        flag = self.spec.flags.get(name)
        if flag is None or flag.denied is not None or flag.value == "none":
            return False
        self.unknown_value(flag, name, word, word)
        return True

    def unknown_value(self, flag: Flag, name: str, word: Word, holder: Word) -> None:
        """A value computed at run time: fine for a flag whose values all only
        shape output (no choices, not read by the program's rule), when it
        stays one word."""
        ctx = self.ctx
        rule = rules.get(self.spec.hook) if self.spec.hook else None
        read = rule is not None and (rule.reads is None or bool(rule.reads & set(flag.names)))
        if GLOB in {e.kind for e in holder.expansions}:
            flag_text = holder.prefix[:len(name) + (holder.prefix[len(name):len(name) + 1] == "=")]
            self.deny(Code.BP203, holder.span,
                      f"`{holder.text}` expands to file names, which become the value of {name} "
                      "and further words", _glob_hint(holder.text), rule=EXPANSION,
                      fix=fixes.quote_pattern(holder, flag_text if holder is word else "",
                                              flag.metavar))
        elif not shapes.unknown_kinds_allowed(holder) or not shapes.single(holder, ctx.source,
                                                                           ctx.variables):
            ctx.deny_word(holder, f"as the value of {name}")
        elif flag.choices is not None or read:
            self.deny(Code.BP403, holder.span,
                      f"the value of `{self.spec.display} {name}` is computed at run time, and "
                      f"{'only some values are allowed' if flag.choices else 'its value is checked'}",
                      f"write the value of {name} literally")
        else:
            self.record(flag, name, None, word, holder, known=False)

    def obsolete_form(self) -> None:
        """The program's obsolete first-argument syntax (`tail -cf FILE` is
        `tail -c 10 -f FILE`): the letters it names are judged as their flags.
        Where the form depends on operands the checker cannot count (a glob),
        it is taken to apply."""
        form, word = self.spec.obsolete, self.words[self.i]
        if form is None:
            return
        if word.value is None:
            if word.pathname_only and (not word.prefix or word.prefix[0] in form.starts):
                self.i += 1
                self.deny(Code.BP203, word.span,
                          f"`{word.text}` may expand to a file name that {self.spec.display} reads "
                          "as its obsolete option syntax", _glob_hint(word.text), rule=OPERANDS)
            return
        match = form.form.fullmatch(word.value)
        if match is None:
            return
        if form.max_operands is not None:
            rest = list(self.words[self.i + 1:])
            if rest and rest[0].value == "--":
                rest.pop(0)
            known = all(w.value is not None for w in rest)
            dashed = any(w.value is not None and w.value.startswith("-") and w.value != "-"
                         for w in rest)
            if known and (len(rest) > form.max_operands or dashed):
                return
        self.i += 1
        for group, name in form.flags.items():
            if match[group]:
                flag = self.spec.flags[name]
                if flag.denied is not None:
                    alone = len(word.value) == 2 and word.text == word.value  # `-f`, nothing else
                    self.denied_flag(flag.denied, f"{name} (in {word.value})", word, consumes_next=False,
                                     fix=self.drop_flag(word, flag, False) if alone else None)
                else:
                    self.record(flag, name, None, word, None)

    def subcommand(self, word: Word, value: str) -> None:
        spec = self.spec
        sub = spec.subcommands.get(spec.sub_aliases.get(value, value))
        if sub is None:
            allowed = sorted(name for name, s in spec.subcommands.items() if s.denied is None)
            self.deny(Code.BP405, word.span, f"`{spec.display} {value}` is not a read-only subcommand",
                      f"use one of: {', '.join(allowed)}; other subcommands need leaving plan mode",
                      rule=SUBCOMMAND)
            return
        if sub.denied is not None:
            self.deny(Code.BP405, word.span, f"`{sub.display}` {sub.denied.why}",
                      sub.denied.fix or _DEFAULT_FIX[sub.denied.effect], sub.denied.effect,
                      rule=SUBCOMMAND)
            return
        self.finish(has_sub=True)
        ArgvReader(sub, self.words, self.i, self.ctx, self.appended).read()

    # -- options -------------------------------------------------------------
    def long_option(self, word: Word, text: str) -> None:
        spec = self.spec
        name, eq, attached = text.partition("=")
        if spec.abbreviations:
            name = abbreviated(spec, name) or name
        flag = spec.flags.get(name)
        if flag is None and spec.style == "single" and text in spec.flags:
            flag, name, eq, attached = spec.flags[text], text, "", ""
        if flag is None:
            self.unknown_flag(name, word)
            return
        if flag.denied is not None:
            consumes = flag.value in ("required", "lastarg", "unless_flag") and not eq
            self.denied_flag(flag.denied, name, word, consumes_next=consumes,
                             fix=self.drop_flag(word, flag, consumes))
            return
        if flag.value == "none":
            if eq:
                self.deny(Code.BP403, word.span, f"`{spec.display} {name}` takes no value",
                          f"write `{name}` alone")
                return
            self.record(flag, name, None, word, None)
            if flag.runs:
                self.inner_command(flag, name, word)
            return
        self.with_value(flag, name, word, attached if eq else None)

    def inner_command(self, flag: Flag, name: str, word: Word) -> None:
        """`find -exec CMD ;`: the words up to the terminator are a command the
        program runs, checked like any other; each `{}` in it is a path the
        program fills in, which never starts with `-` (judge/shapes.py)."""
        words = self.words
        end = next((k for k in range(self.i, len(words)) if words[k].value in flag.runs), None)
        if end is None or end == self.i:
            self.deny(Code.BP403, word.span, f"`{self.spec.display} {name}` needs a command and "
                      f"one of {', '.join(f'`{r}`' for r in flag.runs)} after it",
                      f"write {name} COMMAND {{}} \\;")
            self.i = len(words)
            return
        flags = self.spec.flags
        supplied = next((w for w in words if w.value is not None and w.value in flags
                         and flags[w.value].operands_from), None)
        if supplied is not None:  # find -files0-from LIST: starting points, so paths, may start with `-`
            self.deny(Code.BP404, word.span,
                      f"`{self.spec.display} {name}` fills in paths under starting points that "
                      f"`{supplied.value}` reads from a file, where a name may start with `-`",
                      "name the starting points on the command line", rule=OPERANDS)
            self.i = end + 1
            return
        many = words[end].value == "+"
        inner = tuple(shapes.found_path(w, many) for w in words[self.i:end])
        self.i = end + 1
        ctx = self.ctx
        outer, ctx.elsewhere = ctx.elsewhere, ctx.elsewhere or flag.runs_elsewhere
        try:
            ctx.check_inner(inner, repeated=True)
        finally:
            ctx.elsewhere = outer

    def short_cluster(self, word: Word, text: str) -> None:
        """`-abc`, or lsof's `+abc`: each letter is a flag with the cluster's
        sign, and a value-taking one takes the rest of the word or the next."""
        spec = self.spec
        if spec.numeric_flag and text[0] == "-" and _NUMBER.fullmatch(text, 1):
            self.record(Flag(("-NUM",), "none"), text, text[1:], word, word)
            return
        for k in range(1, len(text)):
            name = text[0] + text[k]
            flag = spec.flags.get(name)
            if flag is None:
                self.unknown_flag(name, word, cluster=text if len(text) > 2 else None)
                return
            if flag.denied is not None:
                shown = name if len(text) == 2 else f"{name} (in {text})"
                consumes = flag.value in ("required", "lastarg", "unless_flag") and k + 1 == len(text)
                fix = None
                if k == 1 and (len(text) == 2 or flag.value == "required"):  # the flag and its value
                    fix = self.drop_flag(word, flag, consumes)
                self.denied_flag(flag.denied, shown, word, consumes_next=consumes, fix=fix)
                return
            if flag.value == "none":
                self.record(flag, name, None, word, None)
                continue
            self.with_value(flag, name, word, text[k + 1:] or None)
            return

    def with_value(self, flag: Flag, name: str, word: Word, attached: str | None) -> None:
        """A value-taking flag: its attached value, none (optional), or the next word."""
        value: str | None
        holder: Word | None
        if attached is not None:
            value, holder = attached, word
        elif flag.value == "optional" or (flag.value in ("lastarg", "unless_flag") and self.i >= len(self.words)) \
                or (flag.value == "unless_flag" and (self.words[self.i].value or "").startswith("-")):
            self.record(flag, name, None, word, None)
            return
        elif flag.value == "unless_flag" and self.words[self.i].value is None:
            self.deny(Code.BP403, self.words[self.i].span,
                      f"`{self.words[self.i].text}` is computed, so it may be the value of "
                      f"`{self.spec.display} {name}` or, starting with `-`, an option of its own",
                      f"write {name}{'=' if name.startswith('--') else ''}{flag.metavar or 'VALUE'} attached")
            return
        elif flag.value == "attached":
            self.deny(Code.BP403, word.span,
                      f"`{self.spec.display} {name}` takes its value only attached "
                      f"(`{name}{'=' if name.startswith('--') else ''}{flag.metavar or 'VALUE'}`); "
                      "the next word is not its value",
                      f"write {name}{'=' if name.startswith('--') else ''}{flag.metavar or 'VALUE'}")
            return
        else:
            holder = self.take_value(flag, name, word)
            if holder is None:
                return
            value = holder.value
        if flag.choices is not None and value not in flag.choices:
            self.deny(Code.BP403, word.span,
                      f"`{self.spec.display} {name}` does not allow the value `{value}`",
                      f"use one of: {', '.join(sorted(flag.choices))}")
            return
        self.record(flag, name, value, word, holder)

    def take_value(self, flag: Flag, name: str, word: Word) -> Word | None:
        """Consume the separate value word of `flag`, or deny and return None."""
        if self.i >= len(self.words):
            self.deny(Code.BP403, word.span, f"`{self.spec.display} {name}` needs a value",
                      f"give it one: {name} {flag.metavar or 'VALUE'}")
            return None
        holder = self.words[self.i]
        self.i += 1
        if holder.value is None:
            if GLOB in {e.kind for e in holder.expansions}:
                self.deny(Code.BP203, holder.span,
                          f"`{holder.text}` as the value of {name} expands to file names; "
                          "the first becomes the value and the rest become operands",
                          f"quote it: {name} '{holder.text}'", rule=EXPANSION,
                          fix=fixes.quote_pattern(holder, "", flag.metavar))
            else:
                self.unknown_value(flag, name, word, holder)
            return None
        return holder

    def record(self, flag: Flag, name: str, value: str | None, word: Word,
               holder: Word | None, known: bool = True) -> None:
        index = next(k for k, w in enumerate(self.words) if w is word)
        self.inv.flags.append(FlagUse(flag, name, value, word, holder, index, known))

    def denied_flag(self, reason: Reason, shown: str, word: Word, consumes_next: bool,
                    fix: Fix | None = None) -> None:
        self.deny(Code.BP400, word.span, f"`{self.spec.display} {shown}` {reason.why}",
                  reason.fix or _DEFAULT_FIX[reason.effect], reason.effect, fix=fix)
        if consumes_next and self.i < len(self.words):
            self.i += 1

    def unknown_flag(self, name: str, word: Word, cluster: str | None = None) -> None:
        spec = self.spec
        if name.startswith("--") and len(name) > 2:
            matches = sorted({n for n in spec.flags if n.startswith(name) and n != name})
            if matches:
                denied = [m for m in matches if spec.flags[m].denied is not None]
                reason = spec.flags[denied[0]].denied if denied else None
                extra = f"; `{denied[0]}` is denied: {reason.why}" if reason else ""
                self.deny(Code.BP402, word.span,
                          f"`{name}` abbreviates {', '.join(f'`{m}`' for m in matches)}{extra}",
                          "write the option in full"
                          + (f": {matches[0]}" if len(matches) == 1 and not denied else ""),
                          reason.effect if reason else None)
                return
        where = f" (in `{cluster}`)" if cluster else ""
        self.deny(Code.BP401, word.span,
                  f"`{name}`{where} is not an allowed flag of `{spec.display}`",
                  f"see `bash-policy programs {spec.path[0]}` for the allowed flags; if `{name}` only "
                  "shapes output, add it to the spec in bash-policy.toml")

    # -- judging what was read -----------------------------------------------
    def finish(self, has_sub: bool) -> None:
        spec = self.spec
        if not has_sub and spec.subcommands and spec.subcommand_required:
            allowed = sorted(name for name, s in spec.subcommands.items() if s.denied is None)
            self.deny(Code.BP405, self.named_by.span, f"`{spec.display}` needs a subcommand",
                      f"use one of: {', '.join(allowed)}", rule=SUBCOMMAND)
        if not has_sub:
            self.check_modes()
            self.check_positionals()
            if self.reads_stdin():
                self.ctx.reads_stdin = True
            self.check_special_files()
        if self.spec.hook:
            self.ctx.run_rule(self.spec.hook, self.inv)

    def check_modes(self) -> None:
        """Two different modes where the program refuses them (`combine = "error"`):
        the run would fail, and a version that took one of them instead would
        do what the checker did not judge."""
        modes = self.spec.modes
        if modes is None or modes.combine != "error":
            return
        given = self.inv.given_modes()
        other = next((use for use in given if use.flag is not given[0].flag), None)
        if other is not None:
            self.deny(Code.BP400, other.word.span,
                      f"`{self.spec.display}` {given[0].name} and {other.name} select different "
                      f"modes, which {self.spec.path[0]} refuses together",
                      f"give one of them: `{self.spec.display} {given[0].name}` or "
                      f"`{self.spec.display} {other.name}`", rule=MODES)

    def reads_stdin(self) -> bool:
        """Whether the program may read standard input: its spec's `stdin`, a
        flag that reads it, or a file it opens that is or may be `-` or
        /dev/stdin (`diff f -`, `jq --rawfile a /dev/stdin`)."""
        spec, inv, dirs = self.spec, self.inv, self.ctx.directories()
        if any(use.flag.reads_stdin
               or (use.value is None and use.flag.reads and use.flag.value != "none")
               or (use.value is not None and any(p == "-" or stdin_in(p, dirs)
                                                 for p in use.flag.paths(use.value)))
               for use in inv.flags):
            return True  # `--stdin`, or a flag's value given `-` (`grep -f -`)
        if any(w.value in (None, "-") or stdin_in(w.value, dirs) for w in self.opened()):
            return True
        if spec.stdin != "no-files":
            return spec.stdin == "always"
        if spec.positionals.pattern is not None:  # grep -e x f: no pattern operand to skip
            return not self.opened()
        return not inv.positionals[spec.stdin_skip:]

    def opened(self) -> list[Word]:
        """The operands the program may open as files (not a pattern or program
        given first, not names it never opens)."""
        p, inv, ctx = self.spec.positionals, self.inv, self.ctx
        if p.role != "read" or not p.files:
            return []
        operands = inv.positionals
        if p.pattern is not None and not inv.has(*p.pattern):
            operands = operands[1:]
        return [one for word in operands for one in shapes.instances(word, ctx.source, ctx.variables)]

    def check_positionals(self) -> None:
        spec, inv, ctx, appended = self.spec, self.inv, self.ctx, self.appended
        pos = inv.positionals
        role = spec.positionals.role
        if role == "command":
            skip = spec.positionals.skip
            spread = next((w for w in pos[:skip + 1]
                           if not shapes.single(w, ctx.source, ctx.variables)), None)
            if spread is not None:  # `timeout -- $(echo 5 rm x)`: one word is DURATION and a program
                self.deny(Code.BP302, spread.span,
                          f"`{spread.text}` may become several words, one of them the program "
                          f"{spec.display} runs", "write the operands and the program literally",
                          rule=PROGRAM)
                return
            if len(pos) > skip:
                inner = pos[skip:]
                if inner[0].value is None:
                    self.deny(Code.BP302, inner[0].span, "the inner program name is not literal",
                              "name the program literally", rule=PROGRAM)
                    return
                start = next(k for k, w in enumerate(inv.words) if w is inner[0])
                appender = Appended(spec.display) if spec.positionals.appends else None
                ctx.check_inner(inv.words[start:], appended or appender)
            elif appended:  # `xargs nice`: the appended operands would be the command
                self.deny(Code.BP404, inv.words[0].span,
                          f"`{spec.display}` would run a command named by standard input",
                          f"name the command after {spec.display}, with its operands after `--`",
                          rule=OPERANDS)
            return
        if appended and not (role == "read" and spec.positionals.max is None
                             and (inv.after_double_dash or spec.harmless
                                  or (appended.dash_safe and not spec.plus_options))):
            self.deny(Code.BP404, inv.words[0].span,
                      f"`{spec.display}` gets extra operands from standard input, which could be read "
                      "as flags",
                      f"put `--` before the operands of {spec.display}: "
                      f"`{appended.wrapper} {_with_double_dash(inv)}`", rule=OPERANDS,
                      fix=self.appended_fix())
        if role == "none" and pos:
            self.deny(Code.BP406, pos[0].span, f"`{spec.display}` takes no operands here",
                      f"drop `{pos[0].text}`", rule=OPERANDS)
            return
        if role == "read" and pos:
            check_special_operands(self.opened(), ctx)  # FIFOs and devices (rules/files.py)
        limit = spec.positionals.max
        if limit is None:
            return
        # A glob or an unquoted expansion may become any number of operands.
        expanding = [w for w in pos if not shapes.single(w, ctx.source, ctx.variables)]
        if len(pos) <= limit and not expanding:
            return
        culprit = expanding[0] if expanding else pos[limit]
        over = spec.positionals.over_max
        if over is not None:
            self.deny(Code.BP406, culprit.span, f"`{spec.display}` {over.why}",
                      over.fix or _DEFAULT_FIX[over.effect], over.effect, rule=OPERANDS)
        elif expanding:
            self.deny(Code.BP203, culprit.span,
                      f"`{culprit.text}` may expand to more operands than `{spec.display}` takes "
                      f"({limit})", f"quote it so it stays one word: `'{culprit.text}'`", rule=OPERANDS)
        else:
            self.deny(Code.BP406, culprit.span,
                      f"`{spec.display}` takes at most {limit} operand{'s' if limit != 1 else ''}",
                      f"drop `{culprit.text}`", rule=OPERANDS)

    def check_special_files(self) -> None:
        """Operands that may be files, and values of flags that name a file to
        read, must not be devices or kernel files (see `special_file`)."""
        spec, inv, ctx = self.spec, self.inv, self.ctx
        read_values = []
        around: dict[str, list[Word]] = {}
        for use in inv.flags:
            if use.flag.reads and use.value is None and use.value_word not in (None, use.word):
                read_values.append(use.value_word)  # `grep -f ~+/p`: `~+` and $PWD are looked up
                around.setdefault(use.flag.reads, []).append(use.value_word)
            if not use.flag.reads or use.value is None:
                continue
            shown = use.value_word if use.value_word is not None else use.word
            for path in use.flag.paths(use.value):
                if use.flag.reads == "file-if-slash" and "/" not in path:
                    continue  # a name (iconv's charset), not a file
                if special_in(path, ctx.directories()):
                    self.deny(Code.BP403, use.word.span,
                              f"`{spec.display} {use.name}` would read `{path}`, a device or kernel "
                              "file whose reading may never end", "read a regular file",
                              Effect.HANG, rule=SPECIAL)
                else:
                    read_values.append(Word(path, shown.span, path))
                    around.setdefault(use.flag.reads, []).append(read_values[-1])
        if read_values:  # `grep -f p` where p is a FIFO (rules/files.py)
            check_special_operands(read_values, ctx)
        for shape, words in around.items():  # `kubectl -f DIR`: the files under DIR
            check_around(words, shape, ctx, spec.display)
        check_around(self.opened(), spec.positionals.shape, ctx, spec.display)
        for word in self.opened():
            if special_operand_in(word, ctx.directories()):
                self.deny(Code.BP406, word.span,
                          f"`{spec.display}` would read `{word.text}`, which is or may be a device "
                          "or kernel file whose reading may never end (only /dev/null, /dev/stdin "
                          "and a few /proc files may be read)", "read a regular file",
                          Effect.HANG, rule=SPECIAL)


def _quote_hint(word: Word, rewritten) -> str:
    """Quote `./$f` as `"./$f"`; a word already quoted in parts is not rewritten."""
    if any(c in word.text for c in "\"'\\"):
        return "put every expansion in it inside double quotes so it stays one word"
    quoted = '"' + word.text + '"'
    return f"quote it so it stays one word: `{rewritten(word, quoted)}`"


def _glob_hint(text: str) -> str:
    """How to keep a glob from becoming flags: quote a flag's pattern, anchor an operand's."""
    name, eq, pattern = text.partition("=")
    if text.startswith("-") and eq and "'" not in pattern:
        return f"quote the pattern so the program matches it: `{name}='{pattern}'`"
    return f"quote it for the program to match, write it as ./{text}, or put it after `--`"


def _with_double_dash(inv: Invocation) -> str:
    """The inner command's text with `--` before its first operand (or at its end)."""
    texts = [w.text for w in inv.words]
    at = next((k for k, w in enumerate(inv.words) if w is inv.positionals[0]), len(texts)) \
        if inv.positionals else len(texts)
    return " ".join(texts[:at] + ["--"] + texts[at:])
