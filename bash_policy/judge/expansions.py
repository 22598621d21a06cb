"""Words whose value bash computes at run time, denied where that value matters.

Command and parameter expansion, arithmetic, globs, braces, tildes and
`$'…'` quoting turn one written word into text the checker cannot know;
where no value it can take does harm (judge/shapes.py) the word is allowed,
elsewhere the first such expansion is denied with the code of its kind.
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
    OUTPUT_SUB,
    PARAMETER,
    PROCESS_SUB,
    TILDE,
    Word,
)
from ..records import dataclass
from .codes import Code
from .problems import Problem
from .rules import engine_rule

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import ClassVar

    from .context import Context

EXPANSION = engine_rule("expansion", """A word whose value bash computes at run time, where that value matters.
    Command and parameter expansion, arithmetic, globs, braces, tildes and
    `$'…'` quoting turn one written word into text the checker cannot know.""",
    codes=[Code.BP200, Code.BP201, Code.BP202, Code.BP203, Code.BP204, Code.BP205, Code.BP206,
           Code.BP207, Code.BP404],
    deny=['cat < "$(ls)"', 'cat < "$F"', "ls {a,b}$(id)", "rg $'\\x2d' x"],
    allow=["rg 'x'", 'echo "$(git branch --show-current)"', 'rg -- "$X" src'])

_PLAIN_VARIABLE_HINT = "write the value literally"
_BRACE_HINT = "write the words out, or quote the braces"


@dataclass(frozen=True)
class Expands(Problem, abstract=True):
    """A word whose value bash computes, where the value matters: one kind per
    kind of expansion, each with its code, its reason and its hint."""

    rule = EXPANSION
    why: ClassVar[str]
    word: Word
    where: str = ""  # " as a redirection target", " in the value of NAME", ...

    def message(self) -> str:
        return f"`{self.word.text}`{self.where}: {self.why}"


@dataclass(frozen=True)
class CommandSubstitution(Expands):
    code = Code.BP200
    why = "runs a command inside the word"
    hint_format = "run the inner command by itself first, then write its output literally"


@dataclass(frozen=True)
class ProcessSubstitution(CommandSubstitution):
    pass


@dataclass(frozen=True)
class OutputSubstitution(CommandSubstitution):
    why = ("gives the program the writing end of a pipe, so a program that reads it never ends and one "
           "that writes to it feeds the command inside")


@dataclass(frozen=True)
class ParameterExpansion(Expands):
    code = Code.BP201
    why = "expands a variable whose value is unknown until run time"
    written: str = ""  # the expansion as written: `$NAME` gets a hint of its own

    def hint(self) -> str:
        """For a plain `$NAME`, say how to learn the value in a command of its own."""
        match = _PLAIN_VARIABLE.fullmatch(self.written)
        if match is None:
            return _PLAIN_VARIABLE_HINT
        return (f"write the value literally; to learn it, run `printenv {match[1] or match[2]}` "
                "as a command of its own first")


@dataclass(frozen=True)
class ArithmeticExpansion(Expands):
    code = Code.BP202
    why = "its value is computed by arithmetic at run time"
    hint_format = "write the number literally"


@dataclass(frozen=True)
class BraceExpansion(Expands):
    code = Code.BP204
    why = "brace expansion turns one word into several"
    refused: str = ""  # why the checker did not follow it (judge/expand.py), when it tried

    def message(self) -> str:
        return f"`{self.word.text}`{self.where}: {self.refused or self.why}"

    def hint(self) -> str:
        """For one simple `{a,b}`, spell out the words it becomes."""
        match = _SIMPLE_BRACE.fullmatch(self.word.text)
        if match is None:
            return _BRACE_HINT
        prefix, alternatives, suffix = match.groups()
        words = " ".join(prefix + a + suffix for a in alternatives.split(","))
        return f"write the words out: `{words}`"


@dataclass(frozen=True)
class AnsiCQuoting(Expands):
    code = Code.BP206
    why = "`$'…'` quoting turns escapes into other characters"
    hint_format = "use plain single quotes around the exact characters"


@dataclass(frozen=True)
class LocaleQuoting(AnsiCQuoting):
    why = "`$\"…\"` quoting translates the text at run time"


@dataclass(frozen=True)
class ExtendedGlob(Expands):
    code = Code.BP207
    why = "an extended glob pattern expands to file names"
    hint_format = "quote the pattern and let the program match it"


@dataclass(frozen=True)
class GlobExpansion(Expands):
    code = Code.BP203
    why = "an unquoted glob expands to file names"

    def hint(self) -> str:
        return (f"quote it so the program matches it itself ('{self.word.value or self.word.text}'), "
                "give it a fixed prefix such as ./, or put it after `--`")


@dataclass(frozen=True)
class TildeExpansion(Expands):
    code = Code.BP205
    why = "`~` expands to a home directory the checker cannot see"
    hint_format = "write the absolute path, or put the operand after `--`"


@dataclass(frozen=True)
class FoundPath(Expands):
    code = Code.BP404
    why = "the program fills in a path it found, which this command must read as it comes"
    hint_format = "run a program that takes file operands on the found paths, e.g. -exec grep -H x {{}} +"


@dataclass(frozen=True)
class FoundPaths(FoundPath):
    why = "the program fills in every path it found, as many words"


_KINDS: dict[str, type[Expands]] = {
    COMMAND_SUB: CommandSubstitution, PROCESS_SUB: ProcessSubstitution, OUTPUT_SUB: OutputSubstitution,
    PARAMETER: ParameterExpansion, ARITHMETIC: ArithmeticExpansion, BRACE: BraceExpansion,
    ANSI_C: AnsiCQuoting, LOCALE: LocaleQuoting, EXTGLOB: ExtendedGlob, GLOB: GlobExpansion,
    TILDE: TildeExpansion, FOUND: FoundPath, FOUND_PATHS: FoundPaths,
}
_PLAIN_VARIABLE = re.compile(r'"?\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})"?', re.ASCII)
_SIMPLE_BRACE = re.compile(r"([^{}'\"\\$`\s]*)\{([^{}'\"\\$`\s]*,[^{}'\"\\$`\s]*)\}([^{}'\"\\$`\s]*)")


def deny_word(ctx: Context, word: Word, context: str = "") -> None:
    """Deny the first expansion of a word that is not allowed where it stands
    (its brace expansion, when the engine did not follow it)."""
    expansion = next((e for e in word.expansions if e.kind == BRACE), word.expansions[0]) \
        if id(word) in ctx.unexpanded else word.expansions[0]
    kind = _KINDS[expansion.kind]
    where = f" {context}" if context else ""
    if kind is ParameterExpansion:
        problem: Expands = ParameterExpansion(word, where, ctx.source[expansion.span.start:expansion.span.end])
    elif kind is BraceExpansion:
        problem = BraceExpansion(word, where, ctx.unexpanded.get(id(word), ""))
    else:
        problem = kind(word, where)
    at = expansion.span if problem.code in (Code.BP200, Code.BP201, Code.BP202) else word.span
    ctx.deny(problem, at)
