"""cargo and rustc: deny when a rust-toolchain file can make rustup install a toolchain.

On most machines `cargo` and `rustc` are rustup proxies.  A proxy reads
`rust-toolchain.toml` (or `rust-toolchain`) in the directory it runs in or
any parent, and installs the toolchain it names when it is missing
(rustup book, "Overrides" and "Toolchain file"; automatic installation is the
default again since rustup 1.28.1): network access and writes to ~/.rustup
from `cargo --version`.  That file is repository content, invisible in the
command text, so it is looked for in every directory the segment may run in.
"""

from __future__ import annotations

import os

from ...records import dataclass
from ...repo.files import physical
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .cd import known_directories

_FILES = ("rust-toolchain.toml", "rust-toolchain")


@dataclass(frozen=True)
class RustupInstalls(Problem):
    code = Code.BP601
    effect = Effect.NETWORK
    hint_format = "read the file instead (cat {found}); run {program} after leaving plan mode"
    program: str
    found: str

    def message(self) -> str:
        if self.program == "rustup":
            return (f"`rustup` resolves the toolchain that {self.found} names, and installs it when it is "
                    "missing (network access, writes to ~/.rustup); rustup 1.29 installed nothing for "
                    "`toolchain list`, and `--version` runs that toolchain's rustc")
        runs = self.program if self.program in ("cargo", "rustc") else "rustc --version"
        return (f"`{self.program}` runs {runs} through rustup, which installs the toolchain that "
                f"{self.found} names when it is missing (network access, writes to ~/.rustup)")
_NO_CWD_NOTE = ("rust-toolchain files were not looked for: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")


def _toolchain_file(directory: str) -> str | None:
    directory = physical(directory)  # a directory from flow.py: never under /proc
    while True:
        for name in _FILES:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                return path
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


@rule("rust_toolchain_file", codes=[Code.BP601], deny=[], allow=["cargo --version"],
      untestable="needs a directory with a rust-toolchain file: tests/test_toolchain.py")
def rust_toolchain_file(inv, ctx) -> None:
    """cargo, rustc, rustup and pip under a rust-toolchain file that rustup would install.
    The proxy installs the toolchain the file names: network and writes to
    ~/.rustup; pip runs `rustc --version` for its User-Agent (pip 23.2.1, strace);
    `rustup --version` runs the active toolchain's rustc, and other rustup
    versions than the one tried may install for `toolchain list`."""
    anchor = inv.words[0].span
    program = inv.spec.path[0]
    for directory in known_directories(ctx, anchor, "its rust-toolchain file", _NO_CWD_NOTE,
                                       "network"):
        found = _toolchain_file(directory)
        if found:
            ctx.deny(RustupInstalls(program, found), anchor)
