"""Import bashlex with its LALR tables cached, so the cross-check starts fast.

bashlex builds its yacc tables from the grammar every time `bashlex.parser`
is imported (about 80 ms here, more than all of Python's start-up), and its
bundled yacc never reads them back.  This module wraps bashlex's `yacc.yacc`
for the duration of that one import: the first run builds the tables as
usual and stores them as JSON in the user's cache directory; later runs
rebuild the same parser object from that file.  The cache is keyed by the
size and mtime of every bashlex module (the grammar's and its tokens'), and anything
unexpected (unreadable, stale, malformed) falls back to bashlex's own build,
so the cache can only make the import faster, never change the parser.  Each
key has a file of its own: two installs (a venv and pipx, or two Pythons)
sharing one file rebuilt it on every other start.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import types
from pathlib import Path
from types import SimpleNamespace

_FORMAT = 2  # 2: keyed by every module's stat instead of the version


def cache_path(key: list) -> Path:
    """The file of the tables built for `key` (`_key`)."""
    try:  # hashlib.blake2b itself, without loading OpenSSL for hashlib's other hashes
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover
        from hashlib import blake2b

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = blake2b(json.dumps(key).encode(), digest_size=8).hexdigest()
    return Path(base) / "bash-policy" / f"bashlex-tables-{digest}.json"


def _key(yacc_module) -> list:
    """The Python version and the size and mtime of every module of bashlex:
    the grammar (parser.py), the table builder (yacc.py) and the modules the
    grammar takes its tokens from.  (Not the version from the package's
    metadata: importing importlib.metadata cost more than Python's start.)"""
    folder = Path(yacc_module.__file__).parent
    stats = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.endswith(".py") and entry.is_file():
            st = entry.stat()
            stats.append((entry.name, st.st_size, st.st_mtime_ns))
    return [_FORMAT, sys.version_info[:2], stats]


class _Production(SimpleNamespace):
    """The four attributes bashlex's LRParser reads from a production."""


def _load(path: Path, key: list, pdict: dict, yacc_module):
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if data.get("key") != json.loads(json.dumps(key)):
        return None
    productions = [
        _Production(name=name, len=length, str=text, callable=pdict[func] if func else None)
        for name, length, text, func in data["productions"]
    ]
    tables = SimpleNamespace(
        lr_productions=productions,
        lr_action={int(state): row for state, row in data["action"].items()},
        lr_goto={int(state): row for state, row in data["goto"].items()},
    )
    parser = yacc_module.LRParser(tables, pdict.get("p_error"))
    yacc_module.parse = parser.parse
    return parser


def _store(path: Path, key: list, parser) -> None:
    data = {
        "key": key,
        "productions": [[p.name, p.len, p.str, getattr(p, "func", None)] for p in parser.productions],
        "action": {str(state): dict(row) for state, row in parser.action.items()},
        "goto": {str(state): dict(row) for state, row in parser.goto.items()},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(data), encoding="utf-8")
    os.replace(partial, path)


def import_bashlex():
    """Import and return `bashlex`, building `bashlex.parser` from the cache if possible.

    bashlex's package `__init__` imports the parser at once, so the package
    module is created without running it, `yacc` is wrapped, the parser is
    imported, and only then does `__init__` run.
    """
    if sys.modules.get("bashlex") is not None:
        return sys.modules["bashlex"]
    spec = None if "bashlex" in sys.modules else importlib.util.find_spec("bashlex")
    if spec is None:  # not installed, or blocked with sys.modules["bashlex"] = None
        raise ModuleNotFoundError("No module named 'bashlex'", name="bashlex")
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package
    stand_in = _stand_in_for_inspect()
    try:
        yacc_module = importlib.import_module("bashlex.yacc")
        original = yacc_module.yacc
        yacc_module.yacc = _caching(original, yacc_module)
        try:
            importlib.import_module("bashlex.parser")
        finally:
            yacc_module.yacc = original
        spec.loader.exec_module(package)
    except BaseException:
        for name in [n for n in sys.modules if n == "bashlex" or n.startswith("bashlex.")]:
            del sys.modules[name]
        raise
    finally:
        if stand_in is not None and sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]  # a later `import inspect` gets the module itself
    return package


def _stand_in_for_inspect() -> types.ModuleType | None:
    """While bashlex is imported, `inspect` as a module that imports the real
    one when one of its names is first used: bashlex's yacc imports it to
    check a grammar it builds, which a start reading the cached tables never
    does, and importing it cost 5 ms, a tenth of a check's start.  Only yacc
    keeps this one; None when `inspect` is loaded already."""
    if "inspect" in sys.modules:
        return None
    stand_in = types.ModuleType("inspect", "inspect, imported when first used (bashlex_tables.py)")

    def __getattr__(name: str):
        if sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]
        return getattr(importlib.import_module("inspect"), name)

    vars(stand_in)["__getattr__"] = __getattr__  # PEP 562: every name it lacks
    sys.modules["inspect"] = stand_in
    return stand_in


def _caching(original, yacc_module):
    def cached_yacc(*args, **kwargs):
        pdict = sys._getframe(1).f_globals  # the namespace of bashlex.parser
        try:
            key = _key(yacc_module)
            path = cache_path(key)
            parser = _load(path, key, pdict, yacc_module) if path.is_file() else None
        except (OSError, ValueError, KeyError, TypeError):
            key, parser = None, None
        if parser is not None:
            return parser
        # bashlex's yacc finds the grammar in its caller's frame: name the module instead.
        kwargs.setdefault("module", sys.modules[pdict["__name__"]])
        parser = original(*args, **kwargs)
        if key is not None:
            try:
                _store(path, key, parser)
            except OSError:
                pass  # a read-only home: every start builds the tables, as bashlex does
        return parser

    return cached_yacc
