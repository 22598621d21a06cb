"""`bash-policy audit FILE…`: what plan mode would have allowed and denied in
real agent sessions.

Reads the shell commands an agent ran from the files its client writes, and
checks each one.  Every format below was read from files the real clients
wrote when run against the scripted model of tests/e2e (excerpts in
tests/fixtures/transcripts/, with the versions):

- Claude Code session JSONL (`~/.claude/projects/*/*.jsonl`): `assistant`
  records whose `message.content` holds `tool_use` blocks named `Bash`
  (`input.command`; the record's `cwd`).
- Codex CLI rollouts (`~/.codex/sessions/…/rollout-*.jsonl`): `response_item`
  records holding a `function_call` named `exec_command` (`cmd`, 0.100 on),
  `shell_command` (`command`, a script, 0.66), `shell` (`command`, an argv)
  or a `local_shell_call` (`action.command`, an argv); `workdir` or
  `working_directory`, else the cwd of `session_meta` / `turn_context`.
- Gemini CLI chat recordings (`~/.gemini/tmp/*/chats/session-*.jsonl`):
  message records (`type` "gemini") with `toolCalls` named
  `run_shell_command` (`args.command`); a record is written again as it
  grows, and `$set.messages` replaces the list (as its loader,
  loadConversationRecord, reads them); older `session-*.json` files are one
  object with `messages`.
- OpenCode: `opencode export SESSION` (one JSON object, `messages[].parts[]`)
  and `opencode run --format json` (one event a line, each with a `part`):
  parts of type `tool` for the tool `bash` (`state.input.command`).
- bash-policy corpus files (each case's command), and plain text, one
  command a line.

An argv (Codex's `shell`) is the command the client ran without a shell:
`bash -lc SCRIPT` is SCRIPT, anything else its words quoted back.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .integrations.wrapping import unwrap
from .judge.policy import Policy
from .judge.verdict import SAFE, Verdict
from .records import dataclass, field, replace

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import IO, Any

FORMATS = ("auto", "claude-code", "codex", "gemini", "opencode", "corpus", "text")
_SHELLS = {"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh", "/usr/bin/zsh"}


@dataclass(frozen=True)
class Command:
    """One shell command a session ran: the text, where the file shows it, and
    the directory the client ran it in (when it recorded one)."""

    text: str
    path: str
    line: int | None
    client: str
    cwd: str | None = None


@dataclass
class Checked:
    command: Command
    verdict: Verdict


@dataclass
class Audit:
    """What audit found: per file its format and command count, and every check."""

    files: list[tuple[str, str, int]] = field(default_factory=list)
    checked: list[Checked] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    @property
    def denied(self) -> list[Checked]:
        return [c for c in self.checked if not c.verdict.allowed]


# -- reading ---------------------------------------------------------------------

def read(path: str | Path, fmt: str = "auto") -> tuple[str, list[Command]]:
    """The format of `path` and the commands in it.  Raises OSError or
    ValueError (a file in no format it knows)."""
    path = Path(path)
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    if fmt == "auto":
        fmt = _detect(text)
    reader = _READERS[fmt]
    return fmt, list(reader(text, str(path)))


def _lines(text: str) -> list[str]:
    """Lines as the clients write them: split at newlines only (a JSON string
    may hold U+2028, which str.splitlines would split at)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _records(text: str) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(_lines(text), 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError:
                continue  # a torn last line of a session still being written


def _whole(text: str) -> dict | None:
    """The file as one JSON object, if it is one (not JSON lines)."""
    try:
        whole = json.loads(text)
    except ValueError:
        return None
    return whole if isinstance(whole, dict) else None


def _is_json(text: str) -> bool:
    """Whether the file is JSON (one document) or JSON lines: never plain text,
    whose every line would be taken for a command."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
        return True
    except ValueError:
        first = stripped.split("\n", 1)[0]
        try:
            return isinstance(json.loads(first), (dict, list))
        except ValueError:
            return False


def _detect(text: str) -> str:
    if _is_json(text):
        whole = _whole(text)
        if whole is not None and isinstance(whole.get("messages"), list):
            return "opencode" if isinstance(whole.get("info"), dict) else "gemini"
        for _, record in _records(text):
            if not isinstance(record, dict):
                continue
            kind = record.get("type")
            if isinstance(record.get("payload"), dict):
                return "codex"
            if kind in ("assistant", "user") and isinstance(record.get("message"), dict):
                return "claude-code"
            if "$set" in record or "$rewindTo" in record or "projectHash" in record or kind == "gemini":
                return "gemini"
            if isinstance(record.get("part"), dict):
                return "opencode"
        raise ValueError("JSON in no format audit reads (Claude Code, Codex, Gemini CLI, OpenCode)")
    if _is_corpus(text):
        return "corpus"
    return "text"


def _is_corpus(text: str) -> bool:
    from .corpus import _CASE

    lines = [line.strip() for line in _lines(text)]
    lines = [line for line in lines if line and not line.startswith(("#", "@cwd"))]
    return bool(lines) and all(_CASE.fullmatch(line) for line in lines)


def _claude_code(text: str, path: str) -> Iterator[Command]:
    seen: set[str] = set()
    for number, record in _records(text):
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use" or block.get("name") != "Bash":
                continue
            ident = block.get("id")
            command = (block.get("input") or {}).get("command") if isinstance(block.get("input"), dict) else None
            if not isinstance(command, str) or (isinstance(ident, str) and ident in seen):
                continue
            if isinstance(ident, str):
                seen.add(ident)
            yield Command(command, path, number, "claude-code", _text(record.get("cwd")))


def _argv_command(argv: Any) -> str | None:
    """An argv the client ran directly, as shell text."""
    if not isinstance(argv, list) or not argv or not all(isinstance(w, str) for w in argv):
        return None
    if len(argv) == 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc", "-cl"):
        return argv[2]
    return shlex.join(argv)


def _codex(text: str, path: str) -> Iterator[Command]:
    cwd: str | None = None
    seen: set[str] = set()
    for number, record in _records(text):
        if not isinstance(record, dict):
            continue
        payload = record.get("payload")
        if not isinstance(payload, dict):
            continue
        if record.get("type") in ("session_meta", "turn_context"):
            cwd = _text(payload.get("cwd")) or cwd
            continue
        if record.get("type") != "response_item":
            continue
        command, workdir = None, None
        if payload.get("type") == "function_call":
            try:
                arguments = json.loads(payload.get("arguments") or "{}")
            except (TypeError, ValueError):
                continue
            if not isinstance(arguments, dict):
                continue
            name = payload.get("name")
            if name == "exec_command":
                command = _text(arguments.get("cmd"))
            elif name == "shell_command":
                command = _text(arguments.get("command"))
            elif name == "shell":
                command = _argv_command(arguments.get("command"))
            workdir = _text(arguments.get("workdir"))
        elif payload.get("type") == "local_shell_call":
            action = payload.get("action")
            if isinstance(action, dict) and action.get("type") == "exec":
                command = _argv_command(action.get("command"))
                workdir = _text(action.get("working_directory"))
        ident = payload.get("call_id")
        if command is None or (isinstance(ident, str) and ident in seen):
            continue
        if isinstance(ident, str):
            seen.add(ident)
        where = os.path.join(cwd, workdir) if cwd and workdir else workdir or cwd
        yield Command(command, path, number, "codex", where)


def _gemini(text: str, path: str) -> Iterator[Command]:
    """Tool calls in the order first seen, each once: the recording writes a
    message again as its tool calls come in."""
    seen: set[str] = set()
    whole = _whole(text)
    records: Iterable[tuple[int | None, Any]] = [(None, whole)] if whole is not None else _records(text)
    for number, record in records:
        if not isinstance(record, dict):
            continue
        messages = [record]
        if isinstance(record.get("$set"), dict):
            messages = record["$set"].get("messages") or []
        elif isinstance(record.get("messages"), list):
            messages = record["messages"]
        for message in messages if isinstance(messages, list) else ():
            if not isinstance(message, dict):
                continue
            for call in message.get("toolCalls") or ():
                if not isinstance(call, dict) or call.get("name") != "run_shell_command":
                    continue
                args = call.get("args")
                command = _text(args.get("command")) if isinstance(args, dict) else None
                ident = call.get("id")
                if command is None or (isinstance(ident, str) and ident in seen):
                    continue
                if isinstance(ident, str):
                    seen.add(ident)
                yield Command(command, path, number, "gemini")


def _opencode(text: str, path: str) -> Iterator[Command]:
    seen: set[str] = set()
    whole = _whole(text)
    parts: list[tuple[int | None, dict]]
    if whole is not None and isinstance(whole.get("messages"), list):  # opencode export
        directory = _text((whole.get("info") or {}).get("directory")) if isinstance(whole.get("info"), dict) \
            else None
        parts = [(None, p) for m in whole["messages"] if isinstance(m, dict)
                 for p in (m.get("parts") or []) if isinstance(p, dict)]
    else:  # opencode run --format json
        directory = None
        parts = [(n, r["part"]) for n, r in _records(text) if isinstance(r, dict) and isinstance(r.get("part"), dict)]
    for number, part in parts:
        if part.get("type") != "tool" or part.get("tool") != "bash":
            continue
        state = part.get("state")
        arguments = state.get("input") if isinstance(state, dict) else None
        if not isinstance(arguments, dict):
            continue
        command = _text(arguments.get("command"))
        ident = part.get("id") or part.get("callID")
        if command is None or (isinstance(ident, str) and ident in seen):
            continue
        if isinstance(ident, str):
            seen.add(ident)
        workdir = _text(arguments.get("workdir"))
        where = os.path.join(directory, workdir) if directory and workdir else workdir or directory
        yield Command(command, path, number, "opencode", where)


def _corpus(text: str, path: str) -> Iterator[Command]:
    from .corpus import parse

    cases, _ = parse(path)
    for case in cases:
        yield Command(case.command, path, case.line, "corpus", case.cwd)


def _plain(text: str, path: str) -> Iterator[Command]:
    for number, line in enumerate(_lines(text), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield Command(line, path, number, "text")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_READERS: dict[str, Callable[[str, str], Iterator[Command]]] = {
    "claude-code": _claude_code, "codex": _codex, "gemini": _gemini, "opencode": _opencode,
    "corpus": _corpus, "text": _plain}


def files(paths: Iterable[str]) -> list[Path]:
    """The files `paths` stand for: a directory is every *.jsonl, *.json and
    *.txt file under it, in name order."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in (".jsonl", ".json", ".txt")))
        else:
            out.append(p)
    return out


# -- checking --------------------------------------------------------------------

def audit(paths: Iterable[str], policy: Policy, *, fmt: str = "auto", cwd: str | None = None,
          progress: IO[str] | None = None) -> Audit:
    """Read every file and check every command: in `cwd` when given, else in
    the directory the client recorded if it exists here, else in none."""
    from .judge.engine import check

    result = Audit()
    commands: list[Command] = []
    for file in files(paths):
        try:
            found, read_commands = read(file, fmt)
        except (OSError, ValueError) as error:
            result.unreadable.append((str(file), getattr(error, "strerror", None) or str(error)))
            continue
        result.files.append((str(file), found, len(read_commands)))
        commands.extend(read_commands)
    cache: dict[tuple[str, str | None], Verdict] = {}
    meter = _Progress(progress, len(commands))
    for n, command in enumerate(commands, 1):
        inner = unwrap(command.text)  # the hook's own rewrite, as Gemini CLI records it
        if inner is not None:
            command = replace(command, text=inner)
        where = cwd or (command.cwd if command.cwd and os.path.isdir(command.cwd) else None)
        key = (command.text, where)
        if key not in cache:
            cache[key] = check(command.text, policy, cwd=where)
        result.checked.append(Checked(command, cache[key]))
        meter.tick(n)
    meter.done()
    return result


class _Progress:
    """`audit: 4,000 of 12,000 commands` on stderr for inputs past a few
    thousand commands: redrawn in place on a terminal, else a line per tenth."""

    def __init__(self, stream: IO[str] | None, total: int, threshold: int = 2000):
        self.stream = stream if total >= threshold else None
        self.total = total
        self.tty = bool(self.stream and self.stream.isatty())
        self.last = time.monotonic()
        self.step = max(1, total // 10)

    def tick(self, n: int) -> None:
        if self.stream is None:
            return
        if self.tty:
            if time.monotonic() - self.last >= 0.2 or n == self.total:
                self.stream.write(f"\raudit: {n:,} of {self.total:,} commands")
                self.stream.flush()
                self.last = time.monotonic()
        elif n % self.step == 0:
            self.stream.write(f"audit: {n:,} of {self.total:,} commands\n")
            self.stream.flush()

    def done(self) -> None:
        if self.stream is not None and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# -- the report --------------------------------------------------------------------

def top_denials(report: Audit, limit: int) -> list[dict]:
    """The most frequent denials: by code and the exact text denied
    (`python3`, `--pre`, `> out`), with how often, one command that has it,
    and that command's hint and rewrite."""
    groups: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[Checked, int]] = {}
    for checked in report.denied:
        verdict = checked.verdict
        for k, d in enumerate(verdict.denials):
            key = (d.code, verdict.command[d.span.start:d.span.end])
            groups[key] += 1
            example.setdefault(key, (checked, k))
    out = []
    for (code, denied), count in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]:
        checked, k = example[(code, denied)]
        d = checked.verdict.denials[k]
        fix = checked.verdict.fix
        out.append({"code": code, "name": d.name, "text": denied, "count": count,
                    "example": {"command": checked.command.text, "path": checked.command.path,
                                "line": checked.command.line},
                    "message": d.message, "hint": d.hint,
                    "fix": fix.to_dict() if fix is not None else None})
    return out


def summary(report: Audit, limit: int) -> dict:
    from .formats import schema_document, statistics

    denied = report.denied
    fixes = Counter(c.verdict.fix.applicability for c in denied if c.verdict.fix is not None)
    return schema_document(
        "audit",
        files=[{"path": p, "format": f, "commands": n} for p, f, n in report.files],
        unreadable=[{"path": p, "error": why} for p, why in report.unreadable],
        commands=len(report.checked), allowed=len(report.checked) - len(denied), denied=len(denied),
        fixable={"safe": fixes.get(SAFE, 0), "unsafe": sum(fixes.values()) - fixes.get(SAFE, 0)},
        codes=statistics(c.verdict for c in denied),
        top=top_denials(report, limit))


def text_report(report: Audit, limit: int) -> str:
    from .formats import statistics_text
    from .render import escape

    data = summary(report, limit)
    total = data["commands"]

    def share(n: int) -> str:
        return f"{n:,} ({100 * n / total:.1f}%)" if total else "0"

    out = [f"audited {len(report.files)} file{'s' if len(report.files) != 1 else ''}: {total:,} shell commands"]
    out += [f"  {path}: {n:,} ({fmt})" for path, fmt, n in report.files]
    out += [f"  {path}: not read: {why}" for path, why in report.unreadable]
    out.append(f"plan mode would have allowed {share(data['allowed'])} and denied {share(data['denied'])}")
    if data["denied"]:
        fixable = data["fixable"]
        out.append(f"  with a rewrite that passes: {fixable['safe'] + fixable['unsafe']:,} of the "
                   f"{data['denied']:,} denied ({fixable['safe']:,} safe, {fixable['unsafe']:,} unsafe)")
        out += ["", "denials per code:", _indent(statistics_text(data["codes"]))]
        out += ["", f"most frequent denials (top {min(limit, len(data['top']))}):"]
        for row in data["top"]:
            example = row["example"]
            out.append(f"  {row['count']:>5}×  {row['code']} {row['name']}: `{escape(row['text'])}`")
            out.append(f"          e.g. {escape(example['command'])}    ({example['path']}:{example['line'] or 1})")
            out.append(f"          fix: {escape(row['hint'])}")
            if row["fix"] is not None:
                out.append(f"          rewrite of that command ({row['fix']['applicability']}): "
                           f"{escape(row['fix']['command'])}")
    return "\n".join(out)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())

