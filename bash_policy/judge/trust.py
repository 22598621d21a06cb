"""Which config files may widen the policy: those the user has reviewed.

A config found by discovery lies in the directory the agent explores, which
an attacker may control (a cloned repository: docs/threat-model.md).  Such a
file may tighten the built-in policy freely (scope roots, `crosscheck =
"required"`, lower limits), but what it loosens (programs, variables, write
targets, `confine = "off"`, …) takes effect only once the user has trusted
it, as direnv's `allow` and mise's `trust` do: `bash-policy trust PATH`
records the file's path with a digest of the settings it holds, so that an
edit of those settings needs trusting again.  A file named with `--config`
is the user's own choice and needs no trust.

The record is `$XDG_CONFIG_HOME/bash-policy/trusted.toml` (default
`~/.config/bash-policy/trusted.toml`), in the user's home, which the threat
model trusts.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def trust_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base, "bash-policy", "trusted.toml")


def digest(settings: Mapping[str, Any]) -> str:
    """A digest of the settings a file holds (not of its bytes: a pyproject.toml
    whose other tables change stays trusted)."""
    text = json.dumps(settings, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def widenings(settings: Mapping[str, Any], defaults: Mapping[str, Any]) -> list[str]:
    """What `settings` loosens against the built-in `defaults`, one line each
    (empty when it only tightens or repeats them)."""
    found = []
    for name in settings.get("programs", {}) or {}:
        found.append(f"programs.{name} (a program spec of its own)")
    base_env = defaults.get("env", {})
    for name, value in (settings.get("env", {}) or {}).items():
        if base_env.get(name) != value:
            found.append(f"env.{name} (a variable commands may set)")
    for tool in settings.get("trusted_repo_keys", {}) or {}:
        found.append(f"trusted_repo_keys.{tool} (repository config keys taken as inert)")
    for key in ("trusted_dirs", "write_targets"):
        extra = sorted(set(settings.get(key, ())) - set(defaults.get(key, ())))
        if extra:
            found.append(f"{key} adds {', '.join(map(str, extra))}")
    missing = sorted(set(defaults.get("network_paths", ())) - set(settings.get("network_paths",
                                                                               defaults.get("network_paths", ()))))
    if missing:
        found.append(f"network_paths drops {', '.join(missing)}")
    for key, loose in (("crosscheck", "off"), ("confine", "off")):
        if settings.get(key) == loose:
            found.append(f'{key} = "{loose}"')
    for key in ("stdin_script", "persistent_shell"):
        if settings.get(key) is False:
            found.append(f"{key} = false")
    if "cdpath" in settings:
        found.append("cdpath (what the checker takes the shell's CDPATH to be)")
    for key, value in (settings.get("limits", {}) or {}).items():
        if not isinstance(value, int) or value > defaults.get("limits", {}).get(key, 0):
            found.append(f"limits.{key} above the built-in {defaults.get('limits', {}).get(key)}")
    return found


def _records() -> dict[str, str]:
    """path -> digest, from the trust file; an unreadable file trusts nothing."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with open(trust_file(), "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError):
        return {}
    entries = data.get("config", [])
    return {e["path"]: e["sha256"] for e in entries if isinstance(e, dict)
            and isinstance(e.get("path"), str) and isinstance(e.get("sha256"), str)} \
        if isinstance(entries, list) else {}


def is_trusted(path: str | Path, settings: Mapping[str, Any]) -> bool:
    return _records().get(os.path.abspath(path)) == digest(settings)


def records() -> dict[str, str]:
    return _records()


def _write(entries: Mapping[str, str]) -> Path:
    target = trust_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# Config files whose loosening settings this user has reviewed (`bash-policy trust`):",
             "# each file's path and a digest of the settings it holds.", ""]
    for path in sorted(entries):
        lines += ["[[config]]", f"path = {json.dumps(path, ensure_ascii=False)}",
                  f"sha256 = {json.dumps(entries[path])}", ""]
    temporary = target.with_name(target.name + f".{os.getpid()}.tmp")
    temporary.write_text("\n".join(lines), encoding="utf-8")
    os.replace(temporary, target)
    return target


def trust(path: str | Path, settings: Mapping[str, Any]) -> Path:
    """Record `path` as trusted with the settings it holds now; returns the trust file."""
    entries = _records()
    entries[os.path.abspath(path)] = digest(settings)
    return _write(entries)


def untrust(path: str | Path) -> bool:
    """Forget `path`; whether it was recorded."""
    entries = _records()
    if entries.pop(os.path.abspath(path), None) is None:
        return False
    _write(entries)
    return True
