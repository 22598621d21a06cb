"""Machine-applicable fixes: the edits that turn a denied word into one that passes.

The engine attaches a `Fix` to a denial where the rewrite is mechanical and
means what the agent meant; `combine` joins a verdict's fixes and keeps the
result only if the rewritten command is itself allowed.  Which rewrites are
"safe" (bash runs the same programs with the same operands, for every
expansion the agent can have meant) and which "unsafe" (the rewrite passes
but drops something the command did) is argued at each helper, and
tests/test_fixes.py checks the safe ones against real bash's argv.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ..read.model import COMMAND_SUB, FOUND, FOUND_PATHS, GLOB, PROCESS_SUB, TILDE, Span, Word
from ..records import replace
from .verdict import SAFE, UNSAFE, Denial, Edit, Fix, Verdict

# Expansions whose words the agent means as operands (file names, a listing's
# output): putting them after `--` keeps their meaning.  A variable may hold
# flags on purpose (`$opts`), so moving it after `--` is unsafe.
_OPERAND_KINDS = frozenset({GLOB, TILDE, COMMAND_SUB, PROCESS_SUB, FOUND, FOUND_PATHS})
# A flag value that the program matches itself, as its spec's metavar names it
# (`-g/--glob=GLOB`, `--include=GLOB`, `-e PATTERN`): quoting a glob there
# passes exactly the pattern the agent wrote, which is what bash passes
# whenever no file name matches it.
PATTERN_METAVARS = frozenset({"GLOB", "PATTERN", "PATTERNS", "PAT"})
# Characters that make textual quoting or prefixing of a word unsafe to do blindly.
_QUOTING = set("'\"\\$`")


def _may_be_flag(word: Word, signs: tuple[str, ...]) -> bool:
    if word.value is not None:
        return word.value.startswith(signs) and word.value not in ("-", "+")
    return word.prefix.startswith(signs)


def double_dash(words: Sequence[Word], at: int, signs: tuple[str, ...]) -> Fix | None:
    """`--` before `words[at]`, when every word from there on is an operand
    (no literal flag follows, which `--` would turn into an operand).  Safe
    when those words are literals, globs or substitutions: for every file
    name and output word that does not start with `-`, the program gets the
    same operands, and `--` only stops a name that does from becoming a flag."""
    later = words[at + 1:]
    if any(_may_be_flag(w, signs) for w in later):
        return None
    safe = not _may_be_flag(words[at], signs) and all(
        w.value is not None or {e.kind for e in w.expansions} <= _OPERAND_KINDS for w in words[at:])
    start = words[at].span.start
    return Fix((Edit(Span(start, start), "-- "),), SAFE if safe else UNSAFE)


def dot_slash(word: Word) -> Fix | None:
    """`./` before a relative glob (`*.py` -> `./*.py`): the same files, but
    the program is given (and prints) other names, so it is unsafe."""
    if GLOB not in {e.kind for e in word.expansions} or word.text[:1] in ("~", "/", "-", "$", "`"):
        return None
    return Fix((Edit(Span(word.span.start, word.span.start), "./"),), UNSAFE)


def quote_pattern(word: Word, flag_text: str, metavar: str) -> Fix | None:
    """Single quotes around a glob that is a flag's pattern (`-g *.py` ->
    `-g '*.py'`, `--include=*.py` -> `--include='*.py'`).  `flag_text` is the
    part of the word before the pattern ("" for a separate value word).  Safe
    for values the program matches itself; for any other value bash's
    expansion (the first file name matched) may have been meant, so none."""
    if metavar not in PATTERN_METAVARS or not word.text.startswith(flag_text):
        return None
    pattern = word.text[len(flag_text):]
    if not pattern or _QUOTING & set(pattern) or not word.pathname_only:
        return None
    return Fix((Edit(word.span, f"{flag_text}'{pattern}'"),), SAFE)


def drop(source: str, span: Span) -> Fix:
    """Delete `span` and the blanks before it (after it, at the start of a
    command).  Unsafe: what was dropped (a write, a follow, a preprocessor)
    no longer happens."""
    start, end = span.start, span.end
    while start > 0 and source[start - 1] in " \t":
        start -= 1
    if start == 0 or source[start - 1] in ";&|(\n":
        start = span.start
        while end < len(source) and source[end] in " \t":
            end += 1
    return Fix((Edit(Span(start, end), ""),), UNSAFE)


# Fixes checked per verdict: each costs a check of the rewritten command (a
# 100-segment line of denials would otherwise be checked 100 times more).
MAX_VERIFIED = 8


def verified(command: str, denials: Sequence[Denial], check: Callable[[str], Verdict]) -> tuple[Denial, ...]:
    """The denials, each keeping its fix only when applying that fix alone
    removes the denial and adds none (the rewritten command's denials are
    among the others).  Past MAX_VERIFIED distinct fixes the rest are dropped."""
    def key(d: Denial) -> tuple[str, str]:
        return d.code, d.rule

    everything = Counter(map(key, denials))
    seen: dict[Fix, bool] = {}
    out = []
    for d in denials:
        if d.fix is not None and d.fix not in seen:
            if len(seen) >= MAX_VERIFIED:
                seen[d.fix] = False
            else:
                after = Counter(map(key, check(d.fix.apply(command)).denials))
                seen[d.fix] = all(n <= everything[k] - (k == key(d)) for k, n in after.items())
        out.append(d if d.fix is None or seen[d.fix] else replace(d, fix=None))
    return tuple(out)


def combine(command: str, denials: Sequence[Denial], allowed: Callable[[str], bool]) -> Fix | None:
    """All the denials' edits as one fix, when every denial has one, no two
    edits overlap, and `allowed` (a check with the same policy and directory)
    passes the rewritten command; safe only when every part is."""
    if not denials or any(d.fix is None for d in denials):
        return None
    edits = sorted({e for d in denials for e in d.fix.edits},  # type: ignore[union-attr]
                   key=lambda e: (e.span.start, e.span.end, e.replacement))
    for a, b in zip(edits, edits[1:]):
        if b.span.start < a.span.end or (a.span.start == a.span.end == b.span.start == b.span.end):
            return None  # overlapping, or two insertions at one place in no defined order
    safe = all(d.fix.applicability == SAFE for d in denials)  # type: ignore[union-attr]
    fix = Fix(tuple(edits), SAFE if safe else UNSAFE)
    rewritten = fix.apply(command)
    if rewritten == command or not allowed(rewritten):
        return None
    return Fix(fix.edits, fix.applicability, rewritten)
