"""Words whose value bash computes at run time, denied where that value matters.

Command and parameter expansion, arithmetic, globs, braces, tildes and
`$'…'` quoting turn one written word into text the checker cannot know;
where no value it can take does harm (judge/shapes.py) the word is allowed,
elsewhere the first such expansion is denied with the code of its kind.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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
from .codes import Code
from .rules import engine_rule

if TYPE_CHECKING:
    from .context import Context

EXPANSION = engine_rule("expansion", """A word whose value bash computes at run time, where that value matters.
    Command and parameter expansion, arithmetic, globs, braces, tildes and
    `$'…'` quoting turn one written word into text the checker cannot know.""",
    codes=[Code.BP200, Code.BP201, Code.BP202, Code.BP203, Code.BP204, Code.BP205, Code.BP206,
           Code.BP207, Code.BP404],
    deny=['cat < "$(ls)"', 'cat < "$F"', "ls {a,b}$(id)", "rg $'\\x2d' x"],
    allow=["rg 'x'", 'echo "$(git branch --show-current)"', 'rg -- "$X" src'])

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
_PLAIN_VARIABLE = re.compile(r'"?\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})"?', re.ASCII)
_SIMPLE_BRACE = re.compile(r"([^{}'\"\\$`\s]*)\{([^{}'\"\\$`\s]*,[^{}'\"\\$`\s]*)\}([^{}'\"\\$`\s]*)")


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


def deny_word(ctx: Context, word: Word, context: str = "") -> None:
    """Deny the first expansion of a word that is not allowed where it stands
    (its brace expansion, when the engine did not follow it)."""
    expansion = next((e for e in word.expansions if e.kind == BRACE), word.expansions[0]) \
        if id(word) in ctx.unexpanded else word.expansions[0]
    code, why = _EXPANSION_CODES[expansion.kind]
    shown = word.text
    where = f" {context}" if context else ""
    if code is Code.BP203:
        hint = (f"quote it so the program matches it itself ('{word.value or shown}'), "
                "give it a fixed prefix such as ./, or put it after `--`")
    elif code is Code.BP201:
        hint = _variable_hint(ctx.source[expansion.span.start:expansion.span.end])
    elif code is Code.BP204:
        hint = _brace_hint(shown)
        why = ctx.unexpanded.get(id(word), why)
    else:
        hint = _EXPANSION_HINTS[code]
    at = expansion.span if code in (Code.BP200, Code.BP201, Code.BP202) else word.span
    ctx.deny(code, at, f"`{shown}`{where}: {why}", hint, rule=EXPANSION)
