"""Brace expansion, as bash 5.2 performs it on a word's raw text.

Brace expansion is the first expansion bash applies to a word, and pure
text generation: `src/*.{js,ts}` becomes the raw words `src/*.js` and
`src/*.ts`, each of which then goes through the other expansions (tilde,
parameters, globs, quote removal) on its own.  This module computes those
raw words; the engine reads each one as a word and judges it.

The rules, as bash 5.2.15 applies them (bash(1), Brace Expansion, and checked
by running /bin/bash on generated words: tests/test_braces.py):

* Quoting: a backslash hides the next character; `'…'`, `"…"` and backquotes
  hide what they enclose (a backslash still escapes inside double quotes).
  `${` hides its brace and opens a level that the matching `}` closes, so
  the commas of `${a,b}` are an operator of the parameter, never a brace
  list; a quoted or escaped `$` (`\\${a,b}`) does not.
* A brace list starts at the first unquoted `{` whose matching `}` (nested
  `{…}` skipped) encloses an unquoted, unnested `,` or `..` (`..` right
  before the `}` does not count).  A `{` that starts the word or follows a
  blank, and is followed by a blank, the end or `}`, is ordinary.  When the
  first candidate does not qualify, the search goes on from the next `{`.
* With a comma, the text between the braces is split at unquoted, unnested
  commas and each part is expanded again; without one it must be a
  sequence `X..Y[..INCR]` of integers (zero-padded to the widest end when
  either end has a leading zero) or of single ASCII letters, else the braces
  stay as they are.  What follows the list is expanded in turn, and the
  results are every prefix followed by every suffix, in order.

Words this module does not follow are refused (`Refused`, with the reason):
more than `limit` words, letter sequences that pass through the punctuation
between `Z` and `a` (a generated `\\` or backquote would be read as quoting
or a substitution), zero-padded numbers beyond what bash's `int` holds, and
substitutions inside the word (`$(…)`, `<(…)`), whose extent the engine
reads elsewhere.
"""

from __future__ import annotations

import re

_MAX_OPEN_BRACES = 64  # unquoted `{` in one word: bounds the scanning work
_MAX_DEPTH = 32
_MAX_TEXT = 65536  # characters of all the words made
_INTMAX = 2**63 - 1
_INT = 2**31 - 1
_DIGITS = re.compile(r"[+-]?[0-9]+")  # what strtoimax reads from a word without blanks


class Refused(Exception):
    """The word's brace expansion is not followed; `reason` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _blank(text: str, i: int) -> bool:
    """bash's test for a blank around a lone `{`: the end, space, tab or newline."""
    return i >= len(text) or text[i] in " \t\n"


def _scan(text: str, i: int, target: str) -> int:
    """Index of the first `target` at nesting level 0, outside quotes, from
    `i` (len(text) when there is none).  For `}`, the `}` only counts once a
    separator (`,` or `..`) has been seen at level 0."""
    n = len(text)
    level = 0
    quote = ""
    separators = 0 if target == "}" else 1
    while i < n:
        c = text[i]
        if c == "\\" and quote in ("", '"', "`"):
            i += 2
            continue
        if c == "$" and text.startswith("{", i + 1) and quote != "'":
            if not quote:
                level += 1
            i += 2
            continue
        if quote:
            if c == quote:
                quote = ""
            elif quote == '"' and c == "$" and text.startswith("(", i + 1):
                raise Refused("a command substitution inside it")
            i += 1
            continue
        if c in "\"'`":
            quote = c
            i += 1
            continue
        if c in "$<>" and text.startswith("(", i + 1):
            raise Refused("a command or process substitution inside it")
        if c == target and level == 0 and separators:
            if c == "{" and (i == 0 or _blank(text, i - 1)) and (_blank(text, i + 1)
                                                                 or text[i + 1] == "}"):
                i += 1
                continue
            return i
        if c == "{":
            level += 1
        elif c == "}" and level:
            level -= 1
        elif target == "}" and level == 0 and (c == "," or (
                text.startswith("..", i) and not text.startswith("}", i + 2))):
            separators += 1
        i += 1
    return n


def expand(text: str, limit: int = 1024) -> list[str]:
    """The raw words bash's brace expansion makes of the raw word `text`
    (its source text, quotes included, without backslash-newline pairs).
    Raises `Refused` for what is not followed (see the module's doc)."""
    if text.count("{") > _MAX_OPEN_BRACES:
        raise Refused(f"more than {_MAX_OPEN_BRACES} braces in one word")
    return _expand(text, limit, 0)


def _expand(text: str, limit: int, depth: int) -> list[str]:
    if depth > _MAX_DEPTH:
        raise Refused("braces nested too deeply")
    results = [""]
    while True:  # one brace list at a time; what follows it is the next round
        start = _opening(text)
        if start is None:
            return _product(results, [text], limit)
        close = _scan(text, start + 1, "}")
        inner = text[start + 1:close]
        middle: list[str] | None
        if _has_comma(inner):
            middle = []
            for part in _parts(inner):
                middle += _expand(part, limit, depth + 1)
                if len(middle) > limit:
                    raise Refused(f"it makes more than {limit} words")
        else:
            middle = _sequence(inner, limit)
            if middle is None:
                if close + 1 >= len(text):
                    return _product(results, [text], limit)
                middle = [text[start:close + 1]]  # kept as written; the rest may expand
        results = _product(_product(results, [text[:start]], limit), middle, limit)
        text = text[close + 1:]
        if not text:
            return results


def _opening(text: str) -> int | None:
    """The `{` that starts the first brace list of `text`, or None."""
    i = 0
    while True:
        i = _scan(text, i, "{")
        if i >= len(text):
            return None
        if _scan(text, i + 1, "}") < len(text):
            return i
        i += 1


def _has_comma(inner: str) -> bool:
    """Whether the text between the braces holds a comma that no backslash
    hides (quotes are not looked at here, as in bash)."""
    i = 0
    while i < len(inner):
        if inner[i] == "\\":
            i += 2
            continue
        if inner[i] == ",":
            return True
        i += 1
    return False


def _parts(inner: str) -> list[str]:
    """The text between the braces, split at unquoted, unnested commas."""
    parts = []
    start = 0
    while True:
        comma = _scan(inner, start, ",")
        parts.append(inner[start:comma])
        if comma >= len(inner):
            return parts
        start = comma + 1


def _product(heads: list[str], tails: list[str], limit: int) -> list[str]:
    """Every head followed by every tail, in order."""
    if len(heads) * len(tails) > limit:
        raise Refused(f"it makes more than {limit} words")
    words = [h + t for h in heads for t in tails]
    if sum(map(len, words)) > _MAX_TEXT:
        raise Refused(f"it makes more than {_MAX_TEXT} characters")
    return words


def _integer(text: str) -> int | None:
    """The value strtoimax reads from all of `text`, or None (not a number, or
    out of range)."""
    if not _DIGITS.fullmatch(text):
        return None
    value = int(text)
    return value if -_INTMAX - 1 <= value <= _INTMAX else None


def _sequence(inner: str, limit: int) -> list[str] | None:
    """`X..Y[..INCR]` as bash generates it, or None when it is not one."""
    left, dots, right = inner.partition("..")
    if not dots or not left or not right:
        return None
    rest, dots, step_text = right.partition("..")
    if dots and not step_text:
        return None  # `1..3..`: not a sequence
    step = 1
    if dots:
        parsed = _integer(step_text)
        if parsed is None:
            return None
        step = parsed
    if len(left) == 1 and left.isascii() and left.isalpha():
        if not (len(rest) == 1 and rest.isascii() and rest.isalpha()):
            return None
        first, last = ord(left), ord(rest)
        kind, width = "letter", 1
    else:
        low, high = _integer(left), _integer(rest) if rest[:1].isdigit() or (
            rest[:1] in "+-" and rest[1:2].isdigit()) else None
        if low is None or high is None:
            return None
        first, last, kind = low, high, "number"
        width = 0
        for end in (left, rest):
            if (len(end) > 1 and end[0] == "0") or (len(end) > 2 and end[:2] == "-0"):
                width = max(width, len(left), len(rest))
        if width and max(abs(first), abs(last)) > _INT:
            raise Refused("zero-padded numbers beyond what bash's int holds")
    if step == 0:
        step = 1
    if first < last and step == -_INTMAX - 1:
        return None  # bash cannot negate it
    if (first > 0 and last < -_INTMAX - 1 + 3 + first) or (first < 0 and last > _INTMAX - 2 + first):
        return None  # bash's guard against overflowing LAST - FIRST: not a sequence
    step = -abs(step) if first > last else abs(step)
    count = abs(last - first) // abs(step) + 1
    if count > limit:
        raise Refused(f"it makes more than {limit} words")
    values = [first + k * step for k in range(count)]
    if kind == "letter":
        letters = [chr(v) for v in values]
        if not all(ch.isalpha() for ch in letters):
            raise Refused("a letter sequence through the punctuation between `Z` and `a`")
        return letters
    if width:
        return [f"{v:0{width}d}" for v in values]
    return [str(v) for v in values]
