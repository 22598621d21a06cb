"""repo/files.py follows links as the kernel does, but not into /dev, /proc or
/sys: the walk split at a base directory (`resolve_each`, `special_files`,
`special.on_disk_each`) resolves every path as the plain walk does, on a tree
of files, FIFOs, loops and links of every kind."""

from __future__ import annotations

import os
import random

from bash_policy.judge import special
from bash_policy.repo import files

_KERNEL_DIRS = ("/dev", "/proc", "/sys")


def _reference(path: str) -> str:
    """The walk as first written: one readlink a component, the links counted."""
    pending = [part for part in path.split("/") if part]
    current, links = "/", 0
    while pending:
        if any(current == d or current.startswith(d + "/") for d in _KERNEL_DIRS):
            return os.path.normpath(os.path.join(current, *pending))
        part = pending.pop(0)
        if part in (".", ".."):
            current = current if part == "." else os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        try:
            target = os.readlink(candidate)
        except (OSError, ValueError):
            current = candidate
            continue
        links += 1
        if links > 40:
            return candidate
        if target.startswith("/"):
            current = "/"
        pending[:0] = [p for p in target.split("/") if p]
    return current


def _reference_on_disk(path: str) -> str | None:
    real = _reference(path)
    if real == special.STDIN:
        return "stdin"
    if special.special_file(real, None):
        return f"a device or kernel file ({real})"
    if any(real == d or real.startswith(d + "/") for d in _KERNEL_DIRS):
        return None
    return files.special_file(real)  # which resolves `real` again


def _tree(root) -> list[str]:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "f").write_text("x")
    os.mkfifo(root / "a" / "fifo")
    links = {"up": "..", "self": ".", "abs": str(root / "a"), "b2": "a/b", "null": "/dev/null",
             "zero": "/dev/zero", "stdin": "/dev/stdin", "cwd": "/proc/self/cwd", "loop": "loop",
             "to_fifo": "a/fifo", "chain": "abs/b/../f", "dangling": "missing/x", "dev": "/dev"}
    for name, target in links.items():
        os.symlink(target, root / name)
    os.symlink("../b2", root / "a" / "back")
    previous = "a"
    for k in range(45):  # longer than the kernel's limit of 40 links
        os.symlink(previous, root / f"c{k}")
        previous = f"c{k}"
    return ["a", "b", "f", "fifo", "..", ".", "missing", *links, "back", "c10", "c44"]


def test_a_walk_split_at_a_base_resolves_as_the_plain_walk(tmp_path):
    parts = _tree(tmp_path)
    rng = random.Random(23)
    for _ in range(400):
        base = "/".join([str(tmp_path), *rng.choices(parts, k=rng.randint(0, 3))])
        names = ["/".join(rng.choices(parts, k=rng.randint(1, 3))) for _ in range(4)]
        got = list(files.resolve_each(base, names))
        assert [(n, real) for n, real, _ in got] == [(n, _reference(f"{base}/{n}")) for n in names]
        assert list(files.special_files(base, names)) == [(n, files.special_file(f"{base}/{n}")) for n in names]
        assert list(special.on_disk_each(base, names)) == [(n, _reference_on_disk(f"{base}/{n}")) for n in names]
        assert files.resolve(base) == _reference(base)


def test_a_check_walks_each_path_once(tmp_path, monkeypatch):
    """Within one check (engine.check keeps the walks) a path is followed once;
    outside, every time."""
    walks = []
    walk = files._walk
    monkeypatch.setattr(files, "_walk", lambda *args: walks.append(args) or walk(*args))
    token = files.remember_walks()
    try:
        assert files.resolve(str(tmp_path)) == files.resolve(str(tmp_path)) == str(tmp_path)
        assert len(walks) == 1
    finally:
        files.forget_walks(token)
    files.resolve(str(tmp_path))
    assert len(walks) == 2
