"""Which policy a front end uses: one rule for the CLI, the hooks, serve and run.

`--config FILE` names the file.  Otherwise the directory the command runs in
is searched, then its parents up to the repository root (the first directory
holding `.git`), as ruff does: the nearest `bash-policy.toml`, or
`pyproject.toml` with a `[tool.bash-policy]` table, wins.  Outside any
repository only the directory itself is read, so a stray file in a shared
parent such as /tmp is never picked up.  No file means the built-in policy.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..judge.policy import ConfigError, Policy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def find_config(directory: str | Path) -> Path | None:
    """The config file that governs `directory`, or None for the built-in policy."""
    start = Path(directory).absolute()
    chain = [start, *start.parents]
    root = next((d for d in chain if (d / ".git").exists()), None)
    for candidate in chain[:chain.index(root) + 1] if root is not None else [start]:
        own = candidate / "bash-policy.toml"
        if own.is_file():
            return own
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _has_table(pyproject):
            return pyproject
    return None


def _has_table(pyproject: Path) -> bool:
    try:
        with open(pyproject, "rb") as fh:
            return "bash-policy" in tomllib.load(fh).get("tool", {})
    except OSError as error:
        raise ConfigError(f"{pyproject}: cannot read: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{pyproject}: invalid TOML: {error}") from None


def load_policy(config: str | Path | None = None, cwd: str | Path = ".") -> Policy:
    """The policy named by `config`, else the one governing `cwd`.
    Raises ConfigError for an unreadable or invalid file."""
    path = Path(config) if config is not None else find_config(cwd)
    return Policy.from_file(path) if path is not None else Policy.default()
