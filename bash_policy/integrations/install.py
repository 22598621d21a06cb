"""`bash-policy hook NAME --check` and `--install`: is the hook really on?

A hook that is not installed, not trusted, or installed with a command that
fails open gives no sign of it: the client just runs every command.  So
`check` finds the hook in the settings files the client reads (each
harness record names them), runs one allowed and one denied sample event,
shaped as that client sends them, through the exact configured command and
the client's shell, and reads the answers the way the client does.  For
Codex CLI, which runs a hook only once its exact definition is trusted, it
also asks Codex itself (`codex app-server`, `hooks/list`) for the trust.

`install` merges the printed snippet into the client's user settings:
bash-policy's own entry is replaced where it stands (other hooks keep their
place: Codex keys its trust by position), anything else is kept, and the
file is backed up before it changes.  Codex's hook is then trusted through
Codex's own app server, which computes the hash it trusts.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..records import dataclass, field
from .adapters import DECISION_NOTE, Options, hook_command, snippet
from .harnesses import Harness

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

ALLOWED_SAMPLE = "ls"
DENIED_SAMPLE = "touch bash-policy-check"


class InstallError(Exception):
    """The settings file cannot be read or written as it is."""


@dataclass
class Report:
    """What `check` or `install` found, as lines for a person; `ok` when
    the hook is installed and blocks."""

    client: str
    ok: bool = True
    lines: list[str] = field(default_factory=list)

    def fail(self, line: str) -> None:
        self.ok = False
        self.lines.append(line)

    def text(self) -> str:
        return "\n".join([f"{self.client}: {'ok' if self.ok else 'NOT OK'}", *self.lines])


# -- reading settings --------------------------------------------------------------------------

def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - exercised on 3.10 only
            import tomli as tomllib

        return tomllib.loads(text)
    return json.loads(text) if text.strip() else {}


def configured(harness: Harness, data: Any) -> list[str]:
    """The commands of bash-policy's hook for `harness` in one settings file."""
    events = data.get("hooks") if isinstance(data, dict) else None
    entries = events.get(harness.event) if isinstance(events, dict) else None
    key = "bash" if harness.layout == "flat" else "command"
    hooks: list[Any] = []
    for entry in entries if isinstance(entries, list) else []:
        if harness.layout == "flat":
            hooks.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
            hooks += entry["hooks"]
    return [h[key] for h in hooks if isinstance(h, dict) and _ours(harness, h.get(key))]


def _ours(harness: Harness, command: Any) -> bool:
    return isinstance(command, str) and f" hook {harness.name}" in command


def installed(harness: Harness, env: Mapping[str, str], cwd: str) -> list[tuple[Path, str]]:
    """(settings file, command) for every install the client would read."""
    found = []
    for path in harness.settings_files(env, cwd):
        if path.is_file():
            try:
                found += [(path, command) for command in configured(harness, _load(path))]
            except (OSError, ValueError) as error:
                found.append((path, f"<unreadable: {error}>"))
    return found


# -- running the samples -----------------------------------------------------------------------

def reading(harness: Harness, code: int | None, stdout: str, stderr: str) -> str:
    """What the client makes of a hook's exit status and output (each
    client's rules as checked in tests/e2e): "denied", "blocked",
    "allowed", "rewritten", "no opinion", or "FAILS OPEN: why"."""
    if code is None:
        return "FAILS OPEN: no answer before the check's timeout"
    if code != 0:
        if harness.failure_answers:  # Copilot CLI 1.0.102 blocks a failed hook
            return "blocked"
        if code == 2 and (stderr.strip() or harness.name != "codex"):
            return "blocked"
        return f"FAILS OPEN: exit {code}" + (" with nothing on stderr" if code == 2 else "")
    text = stdout.strip()
    if not text or text == harness.no_opinion.strip():
        return "no opinion"
    try:
        body = json.loads(text)
    except ValueError:
        return "FAILS OPEN: the answer is not JSON"
    if not isinstance(body, dict):
        return "FAILS OPEN: the answer is not a JSON object"
    inner = body["hookSpecificOutput"] if isinstance(body.get("hookSpecificOutput"), dict) else body
    decision = inner.get("permissionDecision", inner.get("decision"))
    if decision == "deny":
        return "denied"
    if "updatedInput" in inner or "modifiedArgs" in inner or "tool_input" in inner:  # Gemini CLI's
        return "rewritten"
    return "allowed" if decision == "allow" else f"FAILS OPEN: unexpected answer {text[:80]}"


def _gist(stdout: str, stderr: str) -> str:
    """The part of an answer a person checks: the policy's finding, or the
    command a rewrite runs."""
    try:
        body = json.loads(stdout)
    except ValueError:
        body = None
    if isinstance(body, dict):
        body = body.get("hookSpecificOutput", body)
    text = stderr
    if isinstance(body, dict):
        rewritten = body.get("updatedInput", body.get("modifiedArgs", body.get("tool_input")))
        if isinstance(rewritten, dict):
            return f"runs {rewritten.get('command')!r}"
        text = str(body.get("permissionDecisionReason", body.get("reason", stdout)))
    lines = [line.strip() for line in text.splitlines()
             if line.strip() and not line.startswith(DECISION_NOTE)]
    return " | ".join(lines[:2])[:200]


def run_sample(harness: Harness, command: str, sample: str, cwd: str,
               env: Mapping[str, str]) -> tuple[int | None, str, str]:
    event = json.dumps(harness.sample(sample, cwd))
    try:
        proc = subprocess.run([*harness.shell, command], input=event, capture_output=True,
                              text=True, cwd=cwd, env=dict(env), timeout=harness.deadline + 15)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return proc.returncode, proc.stdout, proc.stderr


def check(harness: Harness, env: Mapping[str, str] | None = None, cwd: str | None = None,
          settings: Path | None = None, client: str | None = None) -> Report:
    env = dict(os.environ if env is None else env)
    cwd = os.path.abspath(cwd or os.getcwd())
    report = Report(harness.client)
    if settings is not None:
        try:
            found = [(settings, c) for c in configured(harness, _load(settings))]
        except (OSError, ValueError) as error:
            report.fail(f"{settings}: cannot be read ({error})")
            return report
    else:
        found = installed(harness, env, cwd)
    if not found:
        where = settings or ", ".join(str(p) for p in harness.settings_files(env, cwd))
        report.fail(f"no `bash-policy hook {harness.name}` hook in {where}; "
                    f"`bash-policy hook {harness.name} --install` installs one")
        return report
    for path, command in found:
        report.lines.append(f"{path}: {command}")
        for sample, expected in ((ALLOWED_SAMPLE, ("no opinion", "allowed", "rewritten")),
                                 (DENIED_SAMPLE, ("denied", "blocked"))):
            code, out, err = run_sample(harness, command, sample, cwd, env)
            seen = reading(harness, code, out, err)
            answer = _gist(out, err)
            line = f"  `{sample}`: exit {code}, {seen}" + (f": {answer}" if answer else "")
            (report.lines.append if seen in expected else report.fail)(
                line if seen in expected else line + f"  (expected {' or '.join(expected)})")
    if harness.name == "codex":
        _codex_trust(report, found, env, cwd, client, trust=False)
    return report


# -- installing --------------------------------------------------------------------------------

def merged(harness: Harness, data: Any, fragment: dict[str, Any]) -> dict[str, Any]:
    """`data` with bash-policy's hook entry replaced by the one in `fragment`
    where it stands, or appended; everything else as it was."""
    if not isinstance(data, dict):
        raise InstallError("the settings file does not hold a JSON object")
    out = dict(data)
    for key, value in fragment.items():
        if key != "hooks":
            out.setdefault(key, value)
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.get(harness.event, []), list):
        raise InstallError(f"its hooks.{harness.event} is not a list")
    entries = list(hooks.get(harness.event, []))
    [new] = fragment["hooks"][harness.event]
    key = "bash" if harness.layout == "flat" else "command"
    for index, entry in enumerate(entries):
        if harness.layout == "flat" and isinstance(entry, dict) and _ours(harness, entry.get(key)):
            entries[index] = new
            break
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        if harness.layout != "flat" and isinstance(inner, list) and \
                any(isinstance(h, dict) and _ours(harness, h.get(key)) for h in inner):
            others = [h for h in inner if not (isinstance(h, dict) and _ours(harness, h.get(key)))]
            if not others:
                entries[index] = new
            else:  # a group shared with other hooks: replace only our entry, keep its matcher
                entries[index] = {**entry, "hooks": [new["hooks"][0] if isinstance(h, dict)
                                                     and _ours(harness, h.get(key)) else h
                                                     for h in inner]}
            break
    else:
        entries.append(new)
    out["hooks"] = {**hooks, harness.event: entries}
    return out


def install(harness: Harness, opts: Options, env: Mapping[str, str] | None = None,
            settings: Path | None = None, client: str | None = None) -> Report:
    env = dict(os.environ if env is None else env)
    path = settings or harness.install_file(env)
    report = Report(harness.client)
    if path.suffix != ".json":
        report.fail(f"{path}: bash-policy installs into JSON settings files only")
        return report
    try:
        old_text = path.read_text(encoding="utf-8") if path.exists() else None
        data = json.loads(old_text) if old_text and old_text.strip() else {}
        new_data = merged(harness, data, snippet(harness, opts))
    except (OSError, ValueError, InstallError) as error:
        report.fail(f"{path}: not changed: {error}")
        return report
    new_text = json.dumps(new_data, indent=2) + "\n"
    if old_text is not None and json.loads(old_text or "{}") == new_data:
        report.lines.append(f"{path}: already installed, not changed")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        if old_text is not None:
            backup = path.with_name(path.name + ".bak")
            backup.write_text(old_text, encoding="utf-8")
            report.lines.append(f"{path}: backed up to {backup}")
        temporary = path.with_name(f".{path.name}.bash-policy-{os.getpid()}")
        temporary.write_text(new_text, encoding="utf-8")
        os.replace(temporary, path)
        report.lines.append(f"{path}: installed {hook_command(harness, opts)}")
    if harness.name == "codex":
        _codex_trust(report, [(path, hook_command(harness, opts))], env, os.getcwd(), client, trust=True)
    return report


# -- Codex's hook trust, through its app server ------------------------------------------------

def _codex_trust(report: Report, found: list[tuple[Path, str]], env: Mapping[str, str], cwd: str,
                 client: str | None, trust: bool) -> None:
    """Report (and with `trust`, grant) Codex's trust in each found hook:
    an untrusted hook is skipped without a word, so the calls it should
    gate just run."""
    codex = client or shutil.which("codex", path=env.get("PATH"))
    manual = ("trust it in Codex: run `codex`, open /hooks and trust the bash-policy hook "
              "(automation: `codex exec --dangerously-bypass-hook-trust`)")
    if codex is None:
        report.fail(f"  trust: unknown (no `codex` on PATH; --client names it): {manual}")
        return
    try:
        with _AppServer(codex, env, cwd) as server:
            hooks = _codex_hooks(server, cwd)
            for path, command in found:
                entry = next((h for h in hooks if h.get("command") == command
                              and Path(str(h.get("sourcePath"))).resolve() == path.resolve()), None)
                if entry is None:
                    report.fail(f"  trust: Codex does not list this hook ({path}): is the file "
                                "one Codex reads?")
                    continue
                status = entry.get("trustStatus")
                if status != "trusted" and status != "managed" and trust:
                    server.request("config/value/write", {
                        "keyPath": f"hooks.state.{_quoted(str(entry['key']))}.trusted_hash",
                        "mergeStrategy": "replace", "value": entry["currentHash"]})
                    status = next((h.get("trustStatus") for h in _codex_hooks(server, cwd)
                                   if h.get("key") == entry["key"]), status)
                line = f"  trust: {status} ({entry.get('key')})"
                (report.lines.append if status in ("trusted", "managed") else report.fail)(
                    line if status in ("trusted", "managed") else f"{line}: {manual}")
    except (OSError, RuntimeError, ValueError, KeyError) as error:
        report.fail(f"  trust: cannot ask Codex ({error}): {manual}")


def _codex_hooks(server: _AppServer, cwd: str) -> list[dict[str, Any]]:
    result = server.request("hooks/list", {"cwds": [cwd]})
    return [h for entry in result.get("data", []) for h in entry.get("hooks", [])]


def _quoted(segment: str) -> str:
    return '"' + segment.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _AppServer:
    """`codex app-server`, spoken to in JSON-RPC lines over its stdio."""

    TIMEOUT = 60.0

    def __init__(self, codex: str, env: Mapping[str, str], cwd: str) -> None:
        self._proc = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, env=dict(env), cwd=cwd)
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next = 0

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put("")

    def __enter__(self) -> _AppServer:
        self.request("initialize", {"clientInfo": {"name": "bash-policy", "version": "1"}})
        self._send({"method": "initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(message) + "\n")
        self._proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self._send({"id": self._next, "method": method, "params": params})
        for message in self._messages():
            if message.get("id") == self._next and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result") or {}
        raise RuntimeError(f"{method}: codex app-server ended without an answer")

    def _messages(self) -> Iterator[dict[str, Any]]:
        while True:
            try:
                line = self._lines.get(timeout=self.TIMEOUT)
            except queue.Empty:
                raise RuntimeError("codex app-server did not answer in time") from None
            if not line:
                return
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                yield message


def main(harness: Harness, opts: Options, action: str, settings: str | None,
         client: str | None) -> int:
    path = Path(settings).expanduser().absolute() if settings else None
    report = (install(harness, opts, settings=path, client=client) if action == "install"
              else check(harness, settings=path, client=client))
    print(report.text(), file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1
