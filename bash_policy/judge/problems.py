"""Problems: one small class per kind of denial, as ruff's violations are.

A problem holds what one kind of denial needs to say, as typed fields
(`DeniedFlag(spec, shown, reason)`), and owns the rest: its code and effect
are class attributes, its message and hint are formats of its fields
(`message_format = "`{spec.display} {name}` takes no value"`, or methods
where the wording depends on them), and it may carry the fix that resolves
it.  The engine and the program rules
report one where it applies, `ctx.deny(problem, span)`; the denial takes
the code, effect, message, hint and fix from it and the rule from the rule
running (or the problem's own `rule`).  So a denial cannot be built with a
code or effect that does not belong to its kind, and each kind's wording is
in one place: tests/fixtures/messages/ keeps the text of every kind, one
file per code, so that a change of wording shows as a diff.

Kinds live beside the checks that find them: the engine's in the module of
each check, a program rule's in its rule module.
"""

from __future__ import annotations

import string

from ..records import dataclass, field, fields
from .codes import Code, Effect

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import ClassVar

    from .rules import RuleName
    from .spec import Reason
    from .verdict import Fix


# What every kind has: a field of the same name would hide it.
_RESERVED = frozenset({"code", "effect", "rule", "kind", "message", "hint", "consequence",
                       "message_format", "hint_format"})


@dataclass(frozen=True)
class Problem:
    """One kind of denial.  Subclasses set `code` (and `effect`, `rule` where
    they have one) and `message_format` and `hint_format`, formats of their
    fields (`{word.text}`), or define `message` and `hint` themselves."""

    code: ClassVar[Code]
    # What the denied thing would do (Denial.effect); a kind whose effect is a
    # spec's (a denied flag's reason) says so in `consequence`.
    effect: ClassVar[Effect | None] = None
    # The rule every problem of this kind belongs to; None: the rule running.
    rule: ClassVar[RuleName | None] = None
    message_format: ClassVar[str] = ""
    hint_format: ClassVar[str] = ""
    # The edits that resolve it, where the checker knows them.
    fix: Fix | None = field(default=None, kw_only=True, compare=False)

    def __init_subclass__(cls, abstract: bool = False, **kwargs) -> None:
        """A kind has a code, a message and a hint, and a format names only
        the kind's own fields: checked when the class is made, so a kind
        that lacks one fails at import, not in the middle of a check.  An
        `abstract` class holds what several kinds share and is never denied."""
        super().__init_subclass__(**kwargs)
        taken = set(cls.__dict__.get("__annotations__", {})) & _RESERVED
        if taken:
            raise TypeError(f"{cls.__name__}: a field may not be named {sorted(taken)[0]!r}")
        if abstract:
            return
        if not isinstance(getattr(cls, "code", None), Code):
            raise TypeError(f"{cls.__name__}: a kind of problem needs a code")
        for part in ("message", "hint"):
            if not getattr(cls, f"{part}_format") and getattr(cls, part) is getattr(Problem, part):
                raise TypeError(f"{cls.__name__}: a kind of problem needs a {part}")
        names = set(getattr(cls, "__annotations__", {}))
        for base in cls.__mro__[1:]:
            names.update(getattr(base, "__annotations__", {}))
        for text in (cls.message_format, cls.hint_format):
            for _, name, _, _ in string.Formatter().parse(text):
                root = (name or "").split(".")[0].split("[")[0]
                if name is not None and root not in names:
                    raise TypeError(f"{cls.__name__}: a format names {name!r}, which is not a field")

    def _values(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def message(self) -> str:
        """What was blocked and why."""
        return self.message_format.format_map(self._values())

    def hint(self) -> str:
        """How to write the command so it passes, or that it needs leaving plan mode."""
        return self.hint_format.format_map(self._values())

    def consequence(self) -> Effect | None:
        return self.effect

    @property
    def kind(self) -> str:
        return type(self).__name__


# What to do about a denied thing of each effect, when its spec gives no fix.
DEFAULT_FIX = {
    Effect.EXEC: "drop it; running other programs needs leaving plan mode",
    Effect.WRITE: "drop it and read the output directly; writing files needs leaving plan mode",
    Effect.NETWORK: "drop it; network calls that change things need leaving plan mode",
    Effect.HANG: "drop it; plan-mode commands must finish on their own",
    Effect.STATE: "drop it; changing state needs leaving plan mode",
    Effect.LEAK: "drop it",
    Effect.INTERACTIVE: "drop it; interactive programs cannot run in plan mode",
}


@dataclass(frozen=True)
class FromReason(Problem, abstract=True):
    """A denial whose reason a spec gives (`denied`, `deny`, `over_max`,
    `requires_env`): its effect, its why, and its fix or the effect's default."""

    reason: Reason

    def consequence(self) -> Effect:
        return self.reason.effect

    def hint(self) -> str:
        return self.reason.fix or DEFAULT_FIX[self.reason.effect]
