"""The result of a check: immutable, typed, and renderable."""

from __future__ import annotations

from dataclasses import dataclass

from ..read.model import Command, Script, Span, to_dict
from .codes import CODES


@dataclass(frozen=True, slots=True)
class Denial:
    """One reason the command may not run in plan mode.

    `message` says what was blocked and why; `hint` how to write the command
    so it passes (or that it needs leaving plan mode); `span` the exact
    characters; `segment` the index of the simple command, if any.
    """

    code: str
    message: str
    hint: str
    span: Span
    segment: int | None = None
    effect: str | None = None
    rule: str = ""  # the rule that produced it (docs/rules.md)

    @property
    def name(self) -> str:
        return CODES[self.code].name


@dataclass(frozen=True, slots=True)
class Verdict:
    command: str
    allowed: bool
    denials: tuple[Denial, ...]
    segments: tuple[Command, ...]  # every simple command, in source order (Denial.segment indexes it)
    notes: tuple[str, ...] = ()
    script: Script | None = None  # the tree the exact reader read (None when screened out)

    def __bool__(self) -> bool:
        return self.allowed

    def to_dict(self) -> dict:
        return {
            "command": self.command,
            "allowed": self.allowed,
            "denials": [
                {
                    "code": d.code,
                    "name": d.name,
                    "message": d.message,
                    "hint": d.hint,
                    "span": [d.span.start, d.span.end],
                    "text": self.command[d.span.start:d.span.end],
                    "segment": d.segment,
                    "effect": d.effect,
                    "rule": d.rule,
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
            "tree": to_dict(self.script.body) if self.script is not None else None,
        }
