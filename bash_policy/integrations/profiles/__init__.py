"""Execution profiles: how each client really runs a shell command.

A profile (NAME.toml beside this file, one per client) is data: the argv
the client runs, what it sources, its shell options, the names its shell
defines itself, what standard input is, what it does with a command that
hangs, and which programs read files of their own in each directory they
walk.  `shell_state` turns it, with the user's own shell state read where
the client keeps it (Claude Code's snapshot), into the `ShellState` a check
of one command takes (judge/client_shell.py).  The hook uses it for calls
it does not rewrite; a rewritten call runs under `bash-policy run`, whose
clean shell is what the checker assumes anyway.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from ...judge import spec_cache
from ...judge.client_shell import ShellState, Walk
from ...records import dataclass, field
from .. import processes
from ..snapshot import Snapshot, SnapshotError, login_state, parse

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

PROFILE_DIR = Path(__file__).parent
# bash 5.2's options when it runs `bash -c` with no startup file (non-login,
# non-interactive), as `shopt` and `set -o` print them (checked on 5.2.15).
BASH_C_OPTIONS = frozenset({
    "checkwinsize", "cmdhist", "complete_fullquote", "extquote", "force_fignore",
    "globasciiranges", "globskipdots", "hostcomplete", "interactive_comments",
    "patsub_replacement", "progcomp", "promptvars", "sourcepath", "braceexpand", "hashall",
    "interactive-comments"})


@dataclass(frozen=True)
class Profile:
    name: str
    client: str
    shell: Mapping[str, Any]
    rewrite: Mapping[str, Any] = field(default_factory=dict)
    replacements: Mapping[str, str] = field(default_factory=dict)
    walks: Mapping[str, Walk] = field(default_factory=dict)
    version_variable: str | None = None
    version_pattern: str | None = None

    @property
    def rewrite_in_plan_mode_up_to(self) -> tuple[int, ...] | None:
        value = self.rewrite.get("plan_mode_up_to")
        return tuple(int(p) for p in value.split(".")) if isinstance(value, str) else None


@functools.cache
def load_profile(name: str) -> Profile:
    path = PROFILE_DIR / f"{name}.toml"
    data = spec_cache.load(path, lambda: _table(path))  # a hook reads it once a process
    walks = {program: Walk(tuple(spec.get("files", ())), bool(spec.get("special_entries")),
                           re.compile(spec["when"]) if "when" in spec else None,
                           re.compile(spec["follow"]) if "follow" in spec else None,
                           bool(spec.get("from_root")), bool(spec.get("special_links")),
                           bool(spec.get("from_operands")))
             for program, spec in data.get("walks", {}).items()}
    return Profile(name, data["client"], data["shell"], data.get("rewrite", {}),
                   data.get("replacements", {}), walks, data.get("version_variable"),
                   data.get("version_pattern"))


def _table(path: Path) -> tuple[dict[str, Any], list[tuple[Path, bytes]]]:
    """The TOML table of a profile and the bytes it was read from (judge/spec_cache.py)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    data = path.read_bytes()
    return tomllib.loads(data.decode()), [(path, data)]


def client_version(profile: Profile, env: Mapping[str, str]) -> tuple[int, ...] | None:
    """The client's version from the variable it sets for hooks, or None."""
    if not profile.version_variable or not profile.version_pattern:
        return None
    match = re.search(profile.version_pattern, env.get(profile.version_variable, ""))
    return tuple(int(g) for g in match.groups()) if match else None


def _named(profile: Profile, env: Mapping[str, str]) -> str:
    version = client_version(profile, env)
    return f"{profile.client} {'.'.join(map(str, version))}" if version else profile.client


def shell_state(profile: Profile, event: Mapping[str, Any], env: Mapping[str, str],
                command: str) -> ShellState:
    """The shell `command` meets in this client, for this event."""
    client = _named(profile, env)
    base = dict(client=client, replacements=dict(profile.replacements), walks=dict(profile.walks),
                hangs=profile.shell.get("hangs"))
    unknown = _environment_unknown(env)
    if profile.name == "claude-code":
        cwd = event.get("cwd")
        state = _claude_code(profile, env, cwd if isinstance(cwd, str) else None, command, base)
    else:
        state = _plain_bash(profile, event, env, base)
    options = set(state.options) | _environment_options(env)
    functions = {**_exported_functions(env), **state.functions}
    unknown_names = dict(state.unknown_names)
    for key in env:
        name = key[len("BASH_FUNC_"):-2]
        if key.startswith("BASH_FUNC_") and key.endswith("%%") and name not in functions:
            unknown_names[name] = f"the environment exports a function {name} of an unknown shape"
    if unknown is None and "xtrace" in options and any(c in env.get("PS4", "") for c in "$`"):
        unknown = "xtrace is on and PS4 expands, running its substitutions before each command"
    around = sorted(set(functions) & set(profile.shell.get("wrapper_names", ())))
    if unknown is None and around:
        unknown = (f"a function {around[0]} is defined there, and {client}'s own wrapper calls "
                   f"{around[0]} around every command")
    return ShellState(**{**state.__dict__, "options": frozenset(options), "functions": functions,
                         "unknown_names": unknown_names, "unknown": state.unknown or unknown})


def _environment_unknown(env: Mapping[str, str]) -> str | None:
    for name in ("BASH_ENV", "ENV"):
        if env.get(name):
            return f"it sources ${name} ({env[name]}) before every command"
    return None


def _environment_options(env: Mapping[str, str]) -> set[str]:
    """Options an exported SHELLOPTS or BASHOPTS, or POSIXLY_CORRECT, turns on at start-up."""
    options = {o for name in ("SHELLOPTS", "BASHOPTS") for o in env.get(name, "").split(":") if o}
    if "POSIXLY_CORRECT" in env:
        options.add("posix")
    return options


def _exported_functions(env: Mapping[str, str]) -> dict[str, str]:
    """Functions bash imports from the environment (`export -f`)."""
    found = {}
    for key, value in env.items():
        if key.startswith("BASH_FUNC_") and key.endswith("%%"):
            body = value.strip()
            if body.startswith("()"):
                body = body[2:].strip()
            if body[:1] == "{" and body[-1:] == "}":
                found[key[len("BASH_FUNC_"):-2]] = body[1:-1]
    return found


# -- Claude Code ----------------------------------------------------------------------------

def _claude_code(profile: Profile, env: Mapping[str, str], cwd: str | None, command: str,
                 base: dict[str, Any]) -> ShellState:
    shell = profile.shell
    stdin = shell["stdin_open"] if shell.get("stdin_when", "<") in command else None
    chosen = env.get("CLAUDE_CODE_SHELL") or env.get("SHELL") or "bash"
    if os.path.basename(chosen) not in ("bash", "sh"):
        return ShellState(**base, source="its shell", stdin=stdin,
                          unknown=f"it runs commands with {os.path.basename(chosen)}, which "
                                  "bash-policy does not model")
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or "~", ".claude")
    snapshots, why, broken = find_snapshots(os.path.join(os.path.expanduser(config),
                                                         shell["snapshot_dir"]), shell["snapshot_glob"], env)
    if snapshots:
        merged, unknown_names = merge(snapshots)
        source = "its shell snapshot " + " and ".join(_home_relative(s.path, env) for s in snapshots)
    elif broken:
        return ShellState(**base, source="its shell snapshot", stdin=stdin, unknown=why)
    else:
        # Not written yet (it is, when the Bash tool first runs a command): read
        # the same state from the startup files it is written from.
        import shutil  # here: once the snapshot is written, nothing looks for bash

        bash = chosen if os.path.isabs(chosen) else shutil.which("bash", path=env.get("PATH")) or "/bin/bash"
        login_env = {**env, "SHELL": bash, "GIT_EDITOR": "true", "CLAUDECODE": "1"}
        try:
            merged, unknown_names = login_state(bash, login_env, cwd), {}
        except SnapshotError as error:
            return ShellState(**base, source="your shell's startup files", stdin=stdin,
                              unknown=f"{why}, and {error}")
        source = "your shell's startup files (read as it will read them for this session's snapshot)"
    # The command's shell starts with bash -c's defaults; the snapshot's lines set the rest.
    options = set(BASH_C_OPTIONS)
    options |= {name for name, on in merged.options.items() if on}
    options -= {name for name, on in merged.options.items() if not on}
    options -= set(shell.get("options_off", ()))
    unshadowed = set(shell.get("unshadowed", ()))
    # Claude Code's own block comes last: its functions replace the user's and
    # it unaliases their names; the wrapper then unshadows a few more.
    own = set(merged.client_functions) | set(profile.replacements)
    functions = {n: b for n, b in merged.functions.items() if n not in own | unshadowed}
    aliases = {n: v for n, v in merged.aliases.items() if n not in own | unshadowed}
    for name in own - set(profile.replacements) - unshadowed:
        unknown_names[name] = f"{profile.client} defines {name} itself, as bash-policy does not know"
    for name in unshadowed:
        unknown_names.pop(name, None)
    return ShellState(**base, source=source, functions=functions, aliases=aliases,
                      options=frozenset(options), stdin=stdin, unknown_names=unknown_names,
                      path=tuple(merged.path_entries or ()))


def _home_relative(path: str, env: Mapping[str, str]) -> str:
    home = env.get("HOME", "")
    return "~" + path[len(home):] if home and path.startswith(home + "/") else path


def find_snapshots(directory: str, pattern: str,
                   env: Mapping[str, str]) -> tuple[list[Snapshot], str, bool]:
    """The snapshots that may be this session's: written since the Claude Code
    process started (their names hold the time in milliseconds).  Several
    sessions started together may leave several: all are returned, and the
    state is their union.  Returns ([], why, broken) when none can be used:
    `broken` when one exists that cannot be read (not one still being
    written, nor none yet)."""
    process = processes.client_process(env, "CLAUDE_PID")
    started = processes.started_at(process) if process else None
    return _read_snapshots(directory, pattern, started)


def _read_snapshots(directory: str, pattern: str,
                    started: float | None) -> tuple[list[Snapshot], str, bool]:
    candidates = []
    for path in sorted(glob.glob(os.path.join(directory, pattern))):
        stamp = re.search(r"-(\d{13})-", os.path.basename(path))
        # The name's time is taken after start-up; the start time is known to a clock tick.
        if started is not None and (stamp is None or int(stamp.group(1)) / 1000 < started - 1):
            continue
        candidates.append(path)
    if not candidates:
        return [], (f"no shell snapshot of this session is in {directory} yet (Claude Code writes "
                    "it when its Bash tool first runs a command, and removes it at the end)"), False
    snapshots = []
    for path in candidates:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            return [], f"its shell snapshot {path} cannot be read ({error})", True
        if not text.rstrip("\n").split("\n")[-1].startswith("export PATH="):
            return [], f"its shell snapshot {path} is still being written", False
        try:
            snapshots.append(parse(text, path))
        except SnapshotError as error:
            return [], f"its shell snapshot {path} holds what bash-policy cannot read ({error})", True
    return snapshots, "", False


def merge(snapshots: list[Snapshot]) -> tuple[Snapshot, dict[str, str]]:
    """One state standing for several: options on in any of them, and a name
    the snapshots do not define alike is unknown (returned apart, with why)."""
    if len(snapshots) == 1:
        return snapshots[0], {}
    out = Snapshot(" and ".join(s.path for s in snapshots), complete=True)
    unknown: dict[str, str] = {}
    for snap in snapshots:
        for name, on in snap.options.items():
            out.options[name] = out.options.get(name, False) or on
        out.client_functions.extend(n for n in snap.client_functions if n not in out.client_functions)
        out.path_entries = tuple(dict.fromkeys((*(out.path_entries or ()), *(snap.path_entries or ()))))
    for kind in ("functions", "aliases"):
        tables = [getattr(s, kind) for s in snapshots]
        for name in set().union(*tables):
            bodies = {t.get(name) for t in tables}
            if len(bodies) == 1:
                getattr(out, kind)[name] = bodies.pop()
            else:
                unknown[name] = (f"{name} is not defined alike in the {len(snapshots)} shell "
                                 "snapshots that may be this session's")
    return out, unknown


# -- Gemini CLI and other plain `bash -c` clients -------------------------------------------

def _plain_bash(profile: Profile, event: Mapping[str, Any], env: Mapping[str, str],
                base: dict[str, Any]) -> ShellState:
    shell = profile.shell
    options = BASH_C_OPTIONS - set(shell.get("options_off", ()))
    stdin = None if _headless(env) else shell.get("stdin_interactive")
    path = tuple(env.get("PATH", os.defpath).split(":"))
    return ShellState(**base, source=f"{profile.client}'s bash -c", options=frozenset(options),
                      stdin=stdin, stdin_unread=frozenset(shell.get("terminal_unread", ())),
                      path=path)


def _headless(env: Mapping[str, str]) -> bool:
    """Whether the client runs without a terminal (`gemini -p`): its command
    line asks for a prompt and not for an interactive one.  Unknown counts as
    interactive, where standard input is a terminal."""
    argv = processes.client_argv(processes.client_process(env, None))
    if argv is None:
        return False
    words = set(argv)
    prompt = any(w in ("-p", "--prompt") or w.startswith("--prompt=") for w in words)
    interactive = any(w in ("-i", "--prompt-interactive") or w.startswith("--prompt-interactive=")
                      for w in words)
    return prompt and not interactive
