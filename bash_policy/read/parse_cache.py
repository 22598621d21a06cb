"""Readings of recently checked commands, so a command checked again is not read again
(nor its readings compared again).

A reader's tree depends only on the text: not on the policy, the working
directory or any file, so keeping it cannot change a verdict.  Entries are
keyed by the reader function as well as the text, so that a reader replaced
at run time (as the tests do to simulate a misreading) is never answered
from another's reading.  The trees are immutable and shared.

Bounded by entries and by the characters of the texts kept (a tree takes
about 50 to 100 bytes a character), least recently used first out.
"""

from __future__ import annotations

from _thread import allocate_lock
from collections import OrderedDict

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from .model import Script

    T = TypeVar("T")
    R = TypeVar("R")

MAX_ENTRIES = 1024
MAX_CHARS = 1 << 17

_kept: OrderedDict[tuple[Callable, str], object] = OrderedDict()
_chars = 0
_lock = allocate_lock()


def read(reader: Callable[[str], T], source: str) -> T:
    """`reader(source)`, from the cache when this reader read this text lately."""
    global _chars
    key = (reader, source)
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]  # type: ignore[return-value]
    tree = reader(source)
    if len(source) > MAX_CHARS or MAX_ENTRIES <= 0:
        return tree
    with _lock:
        if key not in _kept:
            _kept[key] = tree
            _chars += len(source)
            while len(_kept) > MAX_ENTRIES or _chars > MAX_CHARS:
                (_, old), _ = _kept.popitem(last=False)
                _chars -= len(old)
    return tree


# Comparisons of two readings (read/crosscheck.py), by the two trees: the
# trees are immutable, so a command checked again is not compared again.  The
# entries hold the trees, so an id is never another tree's; bounded alike.
_compared: OrderedDict[tuple, tuple] = OrderedDict()
_compared_chars = 0


def compared(compare: Callable[..., R], exact: Script, other: Script, *args) -> R:
    """`compare(exact, other, *args)`, from the cache when these two trees were compared."""
    global _compared_chars
    key = (compare, id(exact), id(other), args)
    with _lock:
        kept = _compared.get(key)
        if kept is not None and kept[0] is exact and kept[1] is other:
            _compared.move_to_end(key)
            return kept[2]
    result = compare(exact, other, *args)
    size = len(exact.source)
    if size > MAX_CHARS or MAX_ENTRIES <= 0:
        return result
    with _lock:
        if key not in _compared:
            _compared[key] = (exact, other, result)
            _compared_chars += size
            while len(_compared) > MAX_ENTRIES or _compared_chars > MAX_CHARS:
                _, (old, _, _) = _compared.popitem(last=False)
                _compared_chars -= len(old.source)
    return result


def clear() -> None:
    """Forget every reading and comparison (benchmarks use it to time first sights)."""
    global _chars, _compared_chars
    with _lock:
        _kept.clear()
        _compared.clear()
        _chars = _compared_chars = 0
