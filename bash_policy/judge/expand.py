"""The words bash makes of a command's written words, before the engine judges them.

Brace expansion comes first and is pure text generation (bash_policy/read/
braces.py): each word it makes is read again as a word of its own, with
the same span as the written one, and judged like any other.  A word whose
expansion is not followed keeps its brace expansion and is denied (BP204),
with the reason recorded for the message.
"""

from __future__ import annotations

from ..read import braces
from ..read.exact import read_word
from ..read.model import BRACE, GLOB, TILDE, Expansion, Word

# Most words one written word may become: past it the command is denied, not
# expanded (bash itself has no limit; `{1..100000}` would slow the check).
MAX_BRACE_WORDS = 1024
_FOLLOWED = frozenset({BRACE, GLOB, TILDE})


def brace_words(word: Word) -> tuple[tuple[Word, ...], str | None]:
    """The words bash's brace expansion makes of `word` (the word itself when
    it has none), or `((word,), reason)` when the expansion is not followed."""
    kinds = {e.kind for e in word.expansions}
    if BRACE not in kinds:
        return (word,), None
    if not kinds <= _FOLLOWED:
        return (word,), "brace expansion around other expansions is not followed"
    if "\\\n" in word.text:
        return (word,), "brace expansion across a line continuation is not followed"
    try:
        raws = braces.expand(word.text, MAX_BRACE_WORDS)
    except braces.Refused as refused:
        return (word,), f"brace expansion is not followed here: {refused.reason}"
    if raws == [word.text]:  # no list in it after all: the word as written, without the brace mark
        made = read_word(word.text, braces=False)
        return ((_placed(made, word),), None) if made is not None else \
            ((word,), "the checker cannot read this word")
    out = []
    for raw in raws:
        if raw == "":
            continue  # an empty unquoted word is removed
        # A word brace expansion made is not an assignment to bash (`{x,y}=~/a` keeps its `~`).
        made = read_word(raw, braces=False, assignment=False)
        if made is None:
            return (word,), f"it makes `{raw}`, which the checker cannot read as one word"
        out.append(_placed(made, word))
    return tuple(out), None


def _placed(made: Word, written: Word) -> Word:
    """A word brace expansion made, at the span of the word it was written in."""
    expansions = tuple(Expansion(e.kind, written.span, e.body, e.quoted) for e in made.expansions)
    return Word(made.text, written.span, made.value, expansions, made.prefix)
