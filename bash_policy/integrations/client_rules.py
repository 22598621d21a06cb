"""The client's own permission rules that a rewritten command would hide.

A hook that rewrites an allowed command to `bash-policy run -- 'CMD'`
changes what the client's permission rules are matched against: both
Claude Code (2.1.197, 2.1.332) and Gemini CLI (0.61.0) match their rules
against the rewritten text, so a rule written for the plain command no
longer applies to it (tests/e2e: `Read(./notes.txt)` and `Bash(head:*)` deny
rules stop `head -n 1 notes.txt` plainly and let the rewritten one run).
Reading a secret the user denied is exactly what neither the checker nor
the kernel confinement stops, so a session whose rules could concern the
plain command is not rewritten: the command then runs in the client's own
shell, judged by its execution profile (profiles.py).

Each function returns why not to rewrite (the rule and where it is), or
None when no rule could be hidden.  A source that exists but cannot be read
counts as a rule: its rules are unknown.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping

from .processes import client_argv, client_process

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

# Claude Code rule kinds that its Bash tool applies to a command: Bash
# patterns, and Read path rules (it extracts the paths a command reads).
_CLAUDE_KINDS = ("Bash", "Read")
# Gemini CLI's shell tool, under its two names (SHELL_TOOL_NAMES in 0.61.0).
_GEMINI_SHELL = ("run_shell_command", "ShellTool")
_GEMINI_MATCHERS = ("commandPrefix", "commandRegex", "argsPattern")


class _Unreadable(Exception):
    pass


def _json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise _Unreadable(f"{path} cannot be read ({error})") from None


def _toml(path: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise _Unreadable(f"{path} cannot be read ({error})") from None


def _flag_values(argv: list[str], *names: str) -> Iterator[str]:
    """The values of `--name VALUE...` and `--name=VALUE` (variadic flags
    take words up to the next one starting with `-`)."""
    k = 0
    while k < len(argv):
        word = argv[k]
        name, eq, value = word.partition("=")
        if name in names:
            if eq:
                yield value
            else:
                k += 1
                while k < len(argv) and not argv[k].startswith("-"):
                    yield argv[k]
                    k += 1
                continue
        k += 1


# -- Claude Code ----------------------------------------------------------------------------

def _claude_concerns(rule: Any) -> bool:
    if not isinstance(rule, str):
        return True  # not a rule Claude Code would read as we do: unknown
    kind = rule.strip().split("(", 1)[0].strip()
    return kind in _CLAUDE_KINDS


def _claude_rules(settings: Any, where: str) -> Iterator[str]:
    if settings is None:
        return
    permissions = settings.get("permissions") if isinstance(settings, dict) else None
    if permissions is None:
        return
    if not isinstance(permissions, dict):
        raise _Unreadable(f"{where}: permissions is not an object")
    for key in ("deny", "ask"):
        rules = permissions.get(key) or []
        if not isinstance(rules, list):
            raise _Unreadable(f"{where}: permissions.{key} is not a list")
        for rule in rules:
            if _claude_concerns(rule):
                yield f"{where}: permissions.{key} {json.dumps(rule)}"


def claude_code(event: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """A Bash or Read deny/ask rule in any settings Claude Code reads: the
    managed, user, project and local settings files, `--settings` and
    `--disallowedTools` on its command line."""
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"),
                                                          ".claude")
    project = env.get("CLAUDE_PROJECT_DIR") or event.get("cwd") or os.getcwd()
    files = ["/etc/claude-code/managed-settings.json",
             *sorted(glob.glob("/etc/claude-code/managed-settings.d/*.json")),
             os.path.join(config, "settings.json"),
             os.path.join(str(project), ".claude", "settings.json"),
             os.path.join(str(project), ".claude", "settings.local.json")]
    try:
        for path in files:
            for found in _claude_rules(_json(path), path):
                return found
        process = client_process(env, "CLAUDE_PID")
        argv = client_argv(process)
        if argv is None:
            return "Claude Code's command line cannot be read (its --settings and --disallowedTools)"
        for rule in _flag_values(argv, "--disallowedTools", "--disallowed-tools"):
            for part in rule.replace(",", " ").split():
                if _claude_concerns(part):
                    return f"Claude Code's command line: --disallowedTools {part}"
        for value in _flag_values(argv, "--settings"):
            if value.lstrip().startswith("{"):
                try:
                    settings = json.loads(value)
                except ValueError:
                    return "Claude Code's --settings JSON cannot be read"
                where = "Claude Code's --settings"
            else:
                path = os.path.join(f"/proc/{process}/cwd", value) if process else value
                settings, where = _json(path), f"--settings {value}"
            for found in _claude_rules(settings, where):
                return found
    except _Unreadable as error:
        return str(error)
    return None


# -- Gemini CLI -----------------------------------------------------------------------------

def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
        if isinstance(value, list) else []


def _gemini_rules(table: Any, where: str) -> Iterator[str]:
    """Shell rules that deny or ask by the command's text."""
    if table is None:
        return
    rules = table.get("rule", []) if isinstance(table, dict) else None
    if not isinstance(rules, list):
        raise _Unreadable(f"{where}: [[rule]] is not a list of tables")
    for rule in rules:
        if not isinstance(rule, dict):
            raise _Unreadable(f"{where}: a [[rule]] is not a table")
        tools = _names(rule.get("toolName", "*"))
        shell = any(t in _GEMINI_SHELL or t == "*" for t in tools)
        if shell and rule.get("decision") != "allow" and any(k in rule for k in _GEMINI_MATCHERS):
            matcher = next(f"{k} = {json.dumps(rule[k])}" for k in _GEMINI_MATCHERS if k in rule)
            yield f"{where}: a {rule.get('decision')} rule with {matcher}"


def _toml_files(paths: Iterable[str]) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            yield from sorted(glob.glob(os.path.join(path, "*.toml")))
        else:
            yield path


def gemini(event: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """A shell rule keyed on the command's text, with decision deny or
    ask_user, in any policy Gemini CLI loads (system, --admin-policy,
    --policy or the user's, the workspace's, extensions'), or a narrowed
    `run_shell_command(...)` in a settings file's tools.exclude."""
    home = env.get("HOME") or os.path.expanduser("~")
    project = env.get("GEMINI_PROJECT_DIR") or event.get("cwd") or os.getcwd()
    process = client_process(env, None)
    argv = client_argv(process)
    if argv is None:
        return "Gemini CLI's command line cannot be read (its --policy files)"
    cwd = f"/proc/{process}/cwd" if process else "."
    given = [os.path.join(cwd, p) for p in _flag_values(argv, "--policy", "--admin-policy")]
    user = [] if list(_flag_values(argv, "--policy")) else [os.path.join(home, ".gemini", "policies")]
    sources = ["/etc/gemini-cli/policies", *given, *user,
               os.path.join(str(project), ".gemini", "policies"),
               *sorted(glob.glob(os.path.join(home, ".gemini", "extensions", "*", "policies")))]
    settings = ["/etc/gemini-cli/settings.json", os.path.join(home, ".gemini", "settings.json"),
                os.path.join(str(project), ".gemini", "settings.json")]
    try:
        for path in _toml_files(sources):
            for found in _gemini_rules(_toml(path), path):
                return found
        for path in settings:
            data = _json(path)
            tools = data.get("tools") if isinstance(data, dict) else None
            excluded = tools.get("exclude", []) if isinstance(tools, dict) else []
            for tool in excluded if isinstance(excluded, list) else [excluded]:
                if not isinstance(tool, str) or tool.split("(", 1)[0] in _GEMINI_SHELL and "(" in tool:
                    return f"{path}: tools.exclude {json.dumps(tool)}"
    except _Unreadable as error:
        return str(error)
    return None
