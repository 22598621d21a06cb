"""Which policy a front end uses: one rule for the CLI, the hooks, serve and run.

`--config FILE` names the file; otherwise `Policy.discover` finds the one
governing the directory the command runs in (judge/policy.py: the nearest
`bash-policy.toml` or `[tool.bash-policy]` up to the repository root).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..judge.policy import Policy, find_config

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any


def load_policy(config: str | Path | None = None, cwd: str | Path = ".", *,
                trust_all: bool = False) -> Policy:
    """The policy named by `config`, else the one governing `cwd`.
    Raises ConfigError for an unreadable or invalid file, or a discovered
    one that loosens the policy untrusted (UntrustedConfig)."""
    return Policy.from_file(config) if config is not None else Policy.discover(cwd, trust_all=trust_all)


def directory_error(path: str) -> str | None:
    """Why a command cannot be checked as running in `path`, or None: the
    hooks and serve refuse a working directory that does not exist alike."""
    return None if os.path.isdir(path) else f"cwd {path!r} is not a directory"


def describe(config: str | Path | None, cwd: str | Path = ".") -> dict[str, Any]:
    """For `--show-config`: the file that governs `cwd` (or `config`), how it
    was found, and the settings in force once it is merged with the defaults."""
    start = os.path.abspath(cwd)
    found: Path | None
    if config is not None:
        found, how = Path(config), "given with --config"
    else:
        found = find_config(start)
        how = (f"the nearest bash-policy.toml, or pyproject.toml with [tool.bash-policy], from {start} "
               "up to its repository root (only that directory outside a repository)")
    policy = load_policy(config, start, trust_all=True)
    settings = {
        "trusted_dirs": list(policy.trusted_dirs),
        "write_targets": sorted(policy.write_targets),
        "network_paths": list(policy.network_paths),
        "scope_roots": list(policy.scope_roots),
        "crosscheck": policy.crosscheck,
        "stdin_script": policy.stdin_script,
        "limits": {"max_length": policy.max_length, "max_segments": policy.max_segments},
        "env": {name: ({"match": value.pattern} if isinstance(value, re.Pattern) else value)
                for name, value in sorted(policy.env.items())},
        "trusted_repo_keys": {tool: list(keys) for tool, keys in policy.trusted_repo_keys.items()},
        "programs": dict(policy.user_programs),
    }
    return {"config": str(found) if found is not None else None,
            "found": how if found is not None else f"none: no config governs {start}, the built-in policy applies",
            "trust": _trust_state(found, config is not None),
            "settings": settings}


def _trust_state(found: Path | None, given: bool) -> str:
    from ..judge import trust
    from ..judge.policy import _defaults, settings_of

    if found is None:
        return "the built-in policy"
    if given:
        return "given with --config: taken as it is"
    settings = settings_of(found)
    loosened = trust.widenings(settings, _defaults())
    if not loosened:
        return "needs none: it only tightens the built-in policy"
    if trust.is_trusted(found, settings):
        return "trusted (bash-policy trust)"
    return (f"NOT trusted: it loosens the policy ({'; '.join(loosened)}), so the check, the hooks, "
            f"serve and run refuse it until `bash-policy trust {found}`")


def describe_text(report: dict[str, Any]) -> str:
    """The report as TOML people can paste back into a config."""
    out = [f"# config: {report['config'] or 'built-in'}", f"# found: {report['found']}",
           f"# trust: {report['trust']}",
           "# the settings in force, the config merged with the built-in defaults:"]
    settings = report["settings"]
    tables = {k: v for k, v in settings.items() if isinstance(v, dict)}
    for key, value in settings.items():
        if key not in tables:
            out.append(f"{key} = {_toml(value)}")
    for key, table in tables.items():
        if key == "programs":
            for name, spec in table.items():
                out += ["", f"[programs.{_key(name)}]"]
                out += [f"{_key(k)} = {_toml(v)}" for k, v in spec.items()]
            continue
        out += ["", f"[{key}]"]
        out += [f"{_key(k)} = {_toml(v)}" for k, v in table.items()]
    return "\n".join(out)


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))
