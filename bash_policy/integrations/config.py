"""Which policy a front end uses: one rule for the CLI, the hooks, serve and run.

`--config FILE` names the file; otherwise `Policy.discover` finds the one
governing the directory the command runs in (judge/policy.py: the nearest
`bash-policy.toml` or `[tool.bash-policy]` up to the repository root).
"""

from __future__ import annotations

from pathlib import Path

from ..judge.policy import Policy


def load_policy(config: str | Path | None = None, cwd: str | Path = ".") -> Policy:
    """The policy named by `config`, else the one governing `cwd`.
    Raises ConfigError for an unreadable or invalid file."""
    return Policy.from_file(config) if config is not None else Policy.discover(cwd)
