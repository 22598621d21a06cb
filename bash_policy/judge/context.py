"""The state of one check and what the engine read of one program's argv.

`Context` holds the policy, the denials so far and where the checker is
(the segment, the rule running, the descriptors, the loops around it);
`Invocation` is a program's argv as its spec's option grammar reads it,
which program rules inspect (`inv.uses("--format")`).
"""

from __future__ import annotations

from ..read.model import (
    Assignment,
    Command,
    List,
    Span,
    While,
    Word,
)
from ..records import dataclass, field
from . import descriptors, later, rules, shapes, values
from .flow import Places
from .policy import Policy
from .problems import Problem
from .rules import RuleName
from .spec import CommandSpec, Flag
from .verdict import Denial


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
    # Operands the program may read as options: computed words taken only because
    # every flag of the program is harmless (a glob may expand to `-e -v`).
    option_like: list[Word] = field(default_factory=list)
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

    def __init__(self, policy: Policy, source: str, cwd: str | None, rule: RuleName):
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
        self.rule = rule
        # Whether a program read so far for this command may read standard input,
        # and whether one names it (`-`, `-f -`) rather than reading it for want of files.
        self.reads_stdin = False
        self.names_stdin = False
        # What the script's loops let each variable hold (judge/shapes.py).
        self.variables: dict[str, shapes.Variable] = {}
        # Why a word's brace expansion was not followed, by the word's id (judge/expand.py).
        self.unexpanded: dict[int, str] = {}
        # The variables the script set, where each command runs (judge/values.py).
        self.known: dict[int, values.Env] = {}
        self.body: List | None = None  # the script's tree

    def deny(self, problem: Problem, span: Span) -> None:
        """Record a denial of `problem` at `span`: its code, effect, message,
        hint and fix are the problem's, its rule the problem's kind's or else
        the rule running now (judge/problems.py)."""
        self.denials.append(Denial(problem.code, problem.message(), problem.hint(), span, self.segment,
                                   problem.consequence(), problem.rule or self.rule, problem.fix,
                                   problem.kind))

    def deny_word(self, word: Word, context: str = "") -> None:
        """Deny the first expansion of a word that is not allowed where it stands
        (judge/expansions.py)."""
        from .expansions import deny_word

        deny_word(self, word, context)

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
        from .argv import check_argv  # the argv reader checks through this context

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
        from .assignments import check_assignment

        check_assignment(assignment, self)

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
        rule = rules.get(name)
        outer, self.rule = self.rule, rule.name
        assert rule.check is not None, name  # specs name only rules with a check (spec.py)
        inv.reads = rule.reads
        try:
            rule.check(inv, self)
        finally:
            self.rule = outer
