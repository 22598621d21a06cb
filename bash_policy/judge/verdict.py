"""The result of a check: immutable, typed, and renderable.

Spans count code points (Python `str` indices) into `Verdict.command`, not
bytes or UTF-16 units: `command[span.start:span.end]` is the text.
"""

from __future__ import annotations

from ..read.model import Command, Script, Span, to_dict
from ..records import dataclass
from .codes import CODES, Code, Effect
from .rules import RuleName

# The version of the JSON forms (docs/model.md): raised when a field changes or
# goes away, not when one is added.
SCHEMA_VERSION = 1
SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace `command[span.start:span.end]` with `replacement` (an empty span inserts)."""

    span: Span
    replacement: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A machine-applicable rewrite, as in ruff: `edits` to the command, and
    whether applying them keeps its meaning.  "safe": for every expansion the
    agent can have meant (no file name or output word that would become a
    flag) bash runs the same programs with the same operands; "unsafe": the
    rewrite passes but does something else (it drops a write or a wait), so a
    person or the model must choose it.  `command` is the rewritten command,
    set on the verdict's fix, which the engine has checked to be allowed."""

    edits: tuple[Edit, ...]
    applicability: str
    command: str | None = None

    def apply(self, command: str) -> str:
        """`command` with the edits made (they do not overlap)."""
        out, at = [], 0
        for edit in sorted(self.edits, key=lambda e: (e.span.start, e.span.end)):
            out += [command[at:edit.span.start], edit.replacement]
            at = edit.span.end
        return "".join(out) + command[at:]

    def to_dict(self) -> dict:
        data: dict = {"edits": [{"span": [e.span.start, e.span.end], "replacement": e.replacement}
                                for e in self.edits],
                      "applicability": self.applicability}
        if self.command is not None:
            data["command"] = self.command
        return data


@dataclass(frozen=True, slots=True)
class Denial:
    """One reason the command may not run in plan mode.

    `message` says what was blocked and why; `hint` how to write the command
    so it passes (or that it needs leaving plan mode); `span` the exact
    characters; `segment` the index of the simple command, if any; `fix`
    the edits that resolve this denial, where the engine knows them.
    """

    code: Code
    message: str
    hint: str
    span: Span
    segment: int | None = None
    effect: Effect | None = None
    rule: RuleName = RuleName("")  # the rule that produced it (docs/rules.md)
    fix: Fix | None = None
    kind: str = ""  # the kind of problem (judge/problems.py), for the message snapshots

    def __post_init__(self) -> None:
        # Typed end to end: a code or effect given as text must be one that exists.
        object.__setattr__(self, "code", Code(self.code))
        if self.effect is not None:
            object.__setattr__(self, "effect", Effect(self.effect))

    @property
    def name(self) -> str:
        return CODES[self.code].name


@dataclass(frozen=True, slots=True)
class Verdict:
    """What `check()` decided about `command`.

    `allowed` is true when there is no denial (a verdict is truthy when
    allowed); `denials` lists every problem found, in source order of the
    checks; `segments` every simple command read, substitutions included;
    `notes` what the reader and cross-check said; `script` the tree (None when
    the command was screened out before reading); `fix`, when every denial
    has one, all their edits together and the rewritten command, which is
    itself allowed.  `to_dict()` is the JSON form (docs/model.md).
    """

    command: str
    allowed: bool
    denials: tuple[Denial, ...]
    segments: tuple[Command, ...]  # every simple command, in source order (Denial.segment indexes it)
    notes: tuple[str, ...] = ()
    script: Script | None = None  # the tree the exact reader read (None when screened out)
    fix: Fix | None = None

    def __bool__(self) -> bool:
        return self.allowed

    def to_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "command": self.command,
            "allowed": self.allowed,
            "denials": [
                {
                    "code": d.code.value,
                    "name": d.name,
                    "message": d.message,
                    "hint": d.hint,
                    "span": [d.span.start, d.span.end],
                    "text": self.command[d.span.start:d.span.end],
                    "segment": d.segment,
                    "effect": d.effect.value if d.effect is not None else None,
                    "rule": d.rule,
                    "url": CODES[d.code].url,
                    "fix": d.fix.to_dict() if d.fix is not None else None,
                }
                for d in self.denials
            ],
            "segments": [
                {
                    "span": [s.span.start, s.span.end],
                    "argv": list(s.argv),
                    "assignments": [[a.name, a.value.value] for a in s.assignments],
                    "redirects": [
                        [r.fd, r.op, r.target.value if r.target else None] for r in s.redirects
                    ],
                }
                for s in self.segments
            ],
            "notes": list(self.notes),
            "fix": self.fix.to_dict() if self.fix is not None else None,
            "tree": to_dict(self.script.body) if self.script is not None else None,
        }
