"""Readings of recently checked commands, so a command checked again is not read again.

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

    T = TypeVar("T")

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


def clear() -> None:
    """Forget every reading (benchmarks use it to time first sights)."""
    global _chars
    with _lock:
        _kept.clear()
        _chars = 0
