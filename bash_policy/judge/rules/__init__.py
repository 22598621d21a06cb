"""Rules: every check that can deny a command, each with a name, a doc and examples.

Engine rules are the generic checks every program gets (an unknown flag, a
writing redirection); program rules are small typed functions, registered
with `@rule` in the module of the program they serve and named by specs
(`hooks = ["git_branch"]`).  One registry serves three purposes: spec hook names
are validated against it when a spec is built, `Denial.rule` names the rule
that produced each denial, and docs/rules.md is generated from it.  Every
rule carries examples that must be denied by it and examples that must pass
it; tests/test_rules.py runs them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from ...records import dataclass
from ..codes import Code

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
# A rule's name as the registry knows it (Denial.rule): only `rule` and
# `engine_rule` make one, so a denial never names a rule that does not exist.
if TYPE_CHECKING:
    from typing import NewType

    from ..context import Context, Invocation

    Check = Callable[[Invocation, Context], None]
    RuleName = NewType("RuleName", str)
else:
    RuleName = str  # what NewType gives at run time: the name itself


@dataclass(frozen=True)
class Rule:
    """A named check.  `check` is None for rules the engine applies itself."""

    name: RuleName
    summary: str
    why: str
    codes: tuple[Code, ...]
    deny: tuple[str, ...]
    allow: tuple[str, ...]
    check: Check | None = None
    untestable: str = ""  # why the default policy cannot show a denial, and where it is tested
    # The flags whose values the rule reads (None: any); a flag outside them may
    # take a value the checker cannot know (`--author="$USER"`).
    reads: frozenset[str] | None = None
    # Whether the rule judges operands whose value is unknown (a `$var`, a `$(…)`)
    # itself; otherwise the engine denies those operands for its programs.
    unknown_operands: bool = False

    @property
    def kind(self) -> str:
        return "engine" if self.check is None else "program"


RULES: dict[str, Rule] = {}
_loaded = False


def _register(rule: Rule) -> None:
    if rule.name in RULES:
        raise ValueError(f"rule {rule.name!r} is registered twice")
    if not rule.allow or not (rule.deny or rule.untestable):
        raise ValueError(f"rule {rule.name!r} needs an example that it denies and one that passes")
    RULES[rule.name] = rule


def _doc(text: str | None, name: str) -> tuple[str, str]:
    if not text:
        raise ValueError(f"rule {name!r} needs a docstring: what it blocks, then why")
    summary, _, why = text.strip().partition("\n")
    return summary.strip(), " ".join(line.strip() for line in why.strip().splitlines())


def rule(name: str, *, codes: Iterable[Code], deny: Iterable[str], allow: Iterable[str],
         untestable: str = "", reads: Iterable[str] | None = None, unknown_operands: bool = False):
    """Register a program rule: `def check(inv, ctx)`, whose docstring's first
    line says what it blocks and the rest why.  `reads` lists the flags whose
    values it inspects (`inv.uses` refuses others, so the list cannot drift)."""

    def register(check: Check) -> Check:
        summary, why = _doc(check.__doc__, name)
        _register(Rule(RuleName(name), summary, why, tuple(codes), tuple(deny), tuple(allow), check,
                       untestable, None if reads is None else frozenset(reads), unknown_operands))
        return check

    return register


def engine_rule(name: str, doc: str, *, codes: Iterable[Code], deny: Iterable[str],
                allow: Iterable[str], untestable: str = "") -> RuleName:
    """Register one of the engine's own checks; returns its name for `Denial.rule`."""
    summary, why = _doc(doc, name)
    _register(Rule(RuleName(name), summary, why, tuple(codes), tuple(deny), tuple(allow), None,
                   untestable))
    return RuleName(name)


def modules() -> list[str]:
    """The modules of this package, found where it lives: a new rule's module
    is imported by being there, never by being added to a list."""
    import pkgutil  # here: it imports typing, which a check does not need

    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.ispkg)


def load_all() -> dict[str, Rule]:
    """Every rule: importing the program-rule modules registers them."""
    global _loaded
    if not _loaded:
        for module in modules():
            importlib.import_module(f"{__name__}.{module}")
        from .. import engine  # noqa: F401  (registers the engine rules)

        _loaded = True
    return RULES


def exists(name: str) -> bool:
    rule = load_all().get(name)
    return rule is not None and rule.check is not None


def get(name: str) -> Rule:
    """Program rule `name` (specs name it as `hook`); the spec cache imports a
    cached spec's rule modules, so the others need not load."""
    rule = RULES.get(name) or load_all().get(name)
    if rule is None or rule.check is None:
        raise LookupError(f"no program rule named {name!r}")
    return rule
