"""The words bash makes of a command's written words, before the engine judges them.

Brace expansion comes first and is pure text generation (bash_policy/read/
braces.py): each word it makes is read again as a word of its own, with
the same span as the written one, and judged like any other.  A word whose
expansion is not followed keeps its brace expansion and is denied (BP204),
with the reason recorded for the message.

Parameters come next: where the script itself set a variable to a known
value (judge/values.py), `$x`, `${x}`, `${x:-w}`, `${x:+w}`, `${#x}` and
an array's `"${a[@]}"` are replaced by what bash passes, split at blanks
when unquoted; anything else stays computed and is judged as such
(judge/shapes.py).
"""

from __future__ import annotations

import re

from ..read import braces
from ..read.exact import read_word, word_parts
from ..read.model import BRACE, GLOB, PARAMETER, TILDE, Expansion, Word
from . import values

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


# -- parameters whose value the script set (judge/values.py) -------------------

_IFS = re.compile(r"[ \t\n]+")
# Characters that make bash's pathname expansion look at an unquoted expansion's
# result (a backslash quotes in a pattern): such a value stays computed.
_PATTERN = re.compile(r"[*?\[\\]")
_FORM = re.compile(
    r"\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}?\Z"
    r"|\$\{(?P<length>#)?(?P<aname>[A-Za-z_][A-Za-z0-9_]*)\[(?P<index>[@*]|[0-9]+)\]\}\Z"
    r"|\$\{#(?P<lname>[A-Za-z_][A-Za-z0-9_]*)\}\Z"
    r"|\$\{(?P<tname>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-+])(?P<word>[^}]*)\}\Z")


def _elements(value) -> tuple[str, ...]:
    return value if isinstance(value, tuple) else (value,)


def _scalar(value) -> str | None:
    """`$NAME` of a value: an array's first element (None: unset)."""
    if isinstance(value, tuple):
        return value[0] if value else None
    return value


def parameter(text: str, env: values.Env) -> str | list[str] | None:
    """The value of one parameter expansion (its source text, without
    continuations) where `env` holds: a string, the elements of `${A[@]}`
    (a list: each is a word of its own when quoted), or None when unknown."""
    match = _FORM.match(text)
    if match is None:
        return None
    name = match["name"] or match["aname"] or match["lname"] or match["tname"]
    value = env.get(name, values.UNKNOWN)
    if value is values.UNKNOWN:
        return None
    if match["name"]:
        return _scalar(value) or ""
    if match["lname"]:
        text = _scalar(value) or ""
        return str(len(text)) if text.isascii() else None  # the locale counts characters
    if match["aname"]:
        elements, index = _elements(value), match["index"]
        if match["length"]:
            return str(len(elements)) if index in "@*" else None
        if index == "@":
            return list(elements)
        if index == "*":
            return " ".join(elements)  # joined by IFS's first character; unquoted, split again
        k = int(index)
        return elements[k] if k < len(elements) else ""
    op, word, scalar = match["op"], match["word"], _scalar(value)
    present = scalar is not None and (scalar != "" or not op.startswith(":"))
    if op.endswith("-"):
        return scalar if scalar is not None and present else word
    return word if present else ""


def _expansion_text(source: str, expansion: Expansion) -> str:
    return source[expansion.span.start:expansion.span.end].replace("\\\n", "")


def value(word: Word, source: str, env: values.Env, assignment: bool = False) -> str | None:
    """The one string bash makes of `word` where it is not split or globbed
    (an assignment's value, a here-string), or None when it is not known."""
    if word.value is not None:
        return word.value
    parts = word_parts(source, word, assignment_value=assignment)
    if parts is None:
        return None
    out = []
    for part in parts:
        if isinstance(part, tuple):
            out.append(part[0])
            continue
        if part.kind != PARAMETER:
            return None
        result = parameter(_expansion_text(source, part), env)
        if result is None:
            return None
        out.append(" ".join(result) if isinstance(result, list) else result)
    return "".join(out)


def substituted(word: Word, source: str, env: values.Env) -> tuple[Word, ...] | None:
    """The words bash makes of a command word whose expansions are all
    parameters the script set, each at the word's span; None when any is not
    known, or when splitting or pathname expansion would apply in a way the
    checker does not follow (then the word stays computed).  Unquoted, a
    value is split at blanks (bash never imports IFS, and the checker allows
    no assignment to it) and a value holding `*`, `?`, `[` or `\\` is left
    computed."""
    if word.value is not None or not word.expansions \
            or any(e.kind != PARAMETER for e in word.expansions):
        return None
    parts = word_parts(source, word)
    if parts is None:
        return None
    written = source[word.span.start:word.span.end]
    chars: list[str] = []
    for part in parts:
        if isinstance(part, tuple):
            chars.append(part[0])
            continue
        result = parameter(_expansion_text(source, part), env)
        if result is None:
            return None
        # Splitting is followed only for a word that is the expansion alone: a
        # quoted empty string beside it would make a word of its own (`''$x`).
        alone = written == source[part.span.start:part.span.end]
        if isinstance(result, list):  # `"${a[@]}"`: a word per element
            if part.quoted and written == f'"{source[part.span.start:part.span.end]}"':
                return tuple(Word(word.text, word.span, v) for v in result)
            if not alone:
                return None
            result = " ".join(result)
        if part.quoted:
            chars.append(result)
            continue
        if _PATTERN.search(result):
            return None
        if _IFS.search(result):
            if not alone:
                return None
            return tuple(Word(word.text, word.span, v) for v in _IFS.split(result) if v)
        chars.append(result)
    text = "".join(chars)
    if text == "" and _removed(word, parts, source):
        return ()
    return (Word(word.text, word.span, text),)


def path_entries(word: Word, source: str) -> list[str | None] | None:
    """The entries of a `PATH=VALUE` word (an assignment or export argument):
    each a literal directory, or None for the harness's own `$PATH`; None
    when any entry is computed otherwise."""
    if word.value is not None:
        return list(word.value.partition("=")[2].split(":"))
    parts = word_parts(source, word)
    if parts is None:
        return None
    text: list[str | Expansion] = []
    for part in parts:
        text.append(part[0] if isinstance(part, tuple) else part)
    head = "".join(c for c in text[:5] if isinstance(c, str))
    if head != "PATH=" or any(not isinstance(c, str) for c in text[:5]):
        return None
    entries: list[str | None] = []
    current: list[str | Expansion] = []
    for piece in text[5:] + [":"]:
        if piece != ":":
            current.append(piece)
            continue
        if all(isinstance(c, str) for c in current):
            entries.append("".join(c for c in current if isinstance(c, str)))
        elif len(current) == 1 and _expansion_text(source, current[0]) in ("$PATH", "${PATH}"):  # type: ignore[arg-type]
            entries.append(None)
        else:
            return None
        current = []
    return entries


def words(word: Word, source: str, env: values.Env) -> list[str] | None:
    """The values of the words bash makes of an argument-like word (an array's
    element): brace expansion, then parameters; None when any is computed."""
    made, refused = brace_words(word)
    if refused is not None:
        return None
    out: list[str] = []
    for one in made:
        if one.value is None:
            known = substituted(one, source, env) if made == (word,) else None
            if known is None:
                return None
            out += [w.value for w in known if w.value is not None]
        else:
            out.append(one.value)
    return out


def _removed(word: Word, parts, source: str) -> bool:
    """Whether bash drops the word when it expands to nothing: it is made only
    of unquoted expansions, with no quotes around or between them."""
    if any(isinstance(p, tuple) or p.quoted for p in parts):
        return False
    outside = source[word.span.start:word.span.end]
    for e in reversed(word.expansions):
        start, end = e.span.start - word.span.start, e.span.end - word.span.start
        outside = outside[:start] + outside[end:]
    return outside.replace("\\\n", "") == ""
