"""Built specs kept on disk, so that a process starting up does not parse TOML
and build the specs of the programs it checks (git's took 50 ms).

An entry holds what one built-in TOML file builds to (a `CommandSpec`, the
defaults table, or a client profile's table), in a file named by a digest of
that file's path and bytes and of
everything else the build depends on: the code that builds specs, the
package and the Python version.  The files it merged in (`alias_of`) are
recorded with their digests and compared on load.  A changed input gives
another name or a mismatch, so an entry is never stale.

Entries load through an unpickler that admits only the spec classes, and
anything unexpected (no cache directory, an unwritable one, a truncated or
foreign file) falls back to building from the TOML: the cache can make a
check start faster, never change what it decides (tests/test_caches.py
compares every cached spec with a freshly built one, and verdicts with the
cache on and off).

A spec's subcommands are kept as pickles of their own, each read when first
asked for (`Subcommands`): `git log` reads git and its `log`, not the 150
other subcommands (12 ms of a 90 ms start when the whole tree was read).
"""

from __future__ import annotations

import copyreg
import io
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from . import rules

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

try:  # what pickle.py re-exports, without importing it (and its Jython probe)
    from _pickle import Unpickler, UnpicklingError
except ImportError:  # pragma: no cover - Pythons without the C accelerator
    from pickle import Unpickler, UnpicklingError

ENABLED = True
_FORMAT = 2  # 2: subcommands kept apart
_BUILDERS = ("spec.py", "policy.py", "codes.py", "spec_cache.py", "../records.py")  # the code a build runs
_salt: bytes | None = None
_memo: dict[Path, tuple[str, Any]] = {}  # the latest entry of each file, in this process


def cache_dir() -> Path:
    """bash-policy's directory in the user's cache ($XDG_CACHE_HOME or ~/.cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bash-policy"


def _digest(data: bytes) -> str:
    try:  # hashlib.blake2b itself, without loading OpenSSL for hashlib's other hashes
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover
        from hashlib import blake2b

    global _salt
    if _salt is None:
        from .. import __version__

        here = Path(__file__).parent
        salt = blake2b(f"{_FORMAT} {__version__} {sys.version}".encode())
        for name in _BUILDERS:
            salt.update((here / name).read_bytes())
        _salt = salt.digest()
    return blake2b(data, digest_size=20, key=_salt[:64]).hexdigest()


def load(path: Path, build: Callable[[], tuple[Any, list[tuple[Path, bytes]]]]) -> Any:
    """What `build()` builds from the TOML file `path`, from the cache when an
    entry for these exact bytes exists.  `build` returns the value and every
    file it parsed with the bytes it parsed (`path` first)."""
    if not ENABLED:
        return build()[0]
    try:
        data = path.read_bytes()
    except OSError:
        return build()[0]  # a missing file builds to "no spec"
    # The file's own path is part of the key: two checkouts (a worktree and CI's
    # clone on the same machine) share the cache, and an alias whose bytes are
    # the same in both merges each one's own base file.
    key = _digest(os.fsencode(os.path.abspath(path)) + b"\0" + data)
    memo = _memo.get(path)
    if memo is not None and memo[0] == key:
        return memo[1]
    entry = cache_dir() / "specs" / f"{path.stem}-{key}.pickle"
    found = _read(entry, lambda: build()[0])
    if found is not None:
        value = found[0]
    else:
        value, inputs = build()
        if inputs[0] != (path, data):  # the file changed meanwhile: keep nothing
            return value
        _write(entry, value, inputs[1:])
    _memo[path] = (key, value)
    return value


class _Unpickler(Unpickler):
    """Admits the spec classes and nothing else: an entry cannot run code.
    `rebuild` builds the spec from its TOML, for a subcommand that cannot be read."""

    ALLOWED = {("bash_policy.judge.spec", n) for n in
               ("CommandSpec", "Flag", "Reason", "Positionals", "Obsolete", "Modes")} | {
        ("bash_policy.judge.codes", "Effect"), ("bash_policy.judge.spec_cache", "_proxy"),
        ("re", "_compile")}

    def __init__(self, data: bytes, rebuild: Callable[[], Any]) -> None:
        super().__init__(io.BytesIO(data))
        self.rebuild = rebuild

    def find_class(self, module: str, name: str):
        if (module, name) not in self.ALLOWED:
            raise UnpicklingError(f"{module}.{name} is not a spec class")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Subcommands:
        trail, blobs = pid
        if not (isinstance(trail, tuple) and isinstance(blobs, dict)
                and all(isinstance(k, str) and isinstance(v, bytes) for k, v in blobs.items())):
            raise UnpicklingError("malformed subcommands")
        return Subcommands(blobs, trail, self.rebuild)


class Subcommands(Mapping):
    """A spec's subcommands as an entry keeps them: each is unpickled when first
    asked for.  One that cannot be (a damaged file) is taken from the spec
    built again from its TOML, as a bad entry would be."""

    def __init__(self, blobs: dict[str, bytes], trail: tuple[str, ...], rebuild: Callable[[], Any]) -> None:
        self._blobs, self._trail, self._rebuild = blobs, trail, rebuild
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        made = self._made.get(name)
        if made is None:
            blob = self._blobs[name]
            try:
                made = _Unpickler(blob, self._rebuild).load()
            except Exception:  # noqa: BLE001 - rebuilt, never trusted
                made = self._rebuild()
                for step in (*self._trail, name):
                    made = made.subcommands[step]
            made = self._made.setdefault(name, made)  # one object, whichever thread read it first
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)


def _proxy(mapping: dict) -> MappingProxyType:
    return MappingProxyType(mapping)


def _hooks(value: Any) -> dict[str, str]:
    """The rule modules the hooks of a spec tree live in, to import on load."""
    found: dict[str, str] = {}
    stack = [value] if hasattr(value, "subcommands") else []
    while stack:
        spec = stack.pop()
        for hook in spec.hooks:
            found[hook] = rules.get(hook).check.__module__
        stack.extend(spec.subcommands.values())
    return found


def _read(entry: Path, rebuild: Callable[[], Any]) -> tuple[Any] | None:
    try:
        with open(entry, "rb") as fh:
            value, inputs, hooks = _Unpickler(fh.read(), rebuild).load()
        for path, key in inputs:
            if _digest(Path(path).read_bytes()) != key:
                return None
        for hook, module in hooks.items():
            if not module.startswith(f"{rules.__name__}."):
                return None
            __import__(module)  # registers the rule
            rules.get(hook)
        return (value,)
    except Exception:  # noqa: BLE001 - any bad entry is rebuilt, never trusted
        return None


def _write(entry: Path, value: Any, inputs: list[tuple[Path, bytes]]) -> None:
    import pickle
    import tempfile

    class _Pickler(pickle.Pickler):
        dispatch_table = {**copyreg.dispatch_table,
                          MappingProxyType: lambda proxy: (_proxy, (dict(proxy),))}

        def persistent_id(self, obj: Any) -> Any:
            """Subcommands, each as a pickle of its own (`Subcommands`)."""
            if type(obj) is not MappingProxyType or not obj:
                return None
            first = next(iter(obj.values()))
            if not hasattr(first, "subcommands"):
                return None
            return first.path[1:-1], {name: dumps(sub) for name, sub in obj.items()}

    def dumps(value: Any) -> bytes:
        buffer = io.BytesIO()
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
        return buffer.getvalue()

    temporary = None
    try:
        data = dumps((value, [(str(p), _digest(data)) for p, data in inputs], _hooks(value)))
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temporary, entry)
    except Exception:  # noqa: BLE001 - an unwritable cache only makes the next start slower
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
