"""Claude Code and Gemini CLI, really run, with the hook installed from the
snippet `bash-policy hook NAME --print-config` prints.

Each test starts the client in print mode (`-p`) in a throwaway HOME and
project, pointed at the scripted model in mock_model.py, which makes the
tool calls the test lists.  What really ran is read from the project
(canary files) and from the tool results the client sent back to the model.
Every other host is routed to the mock through HTTPS_PROXY, which records
and refuses it; each run asserts that nothing tried to leave 127.0.0.1.

The clients come from tests/e2e/clients (pinned versions; .ci/run installs
them with npm).  A client that is not installed or does not start is
skipped with the reason.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from bash_policy.integrations.adapters import DECISION_NOTE

from .mock_model import MockModel

pytestmark = pytest.mark.e2e

NODE_MODULES = Path(__file__).parent / "clients" / "node_modules"
TOKEN = "notes-token-51c3"  # the first line of notes.txt: in a tool result only if a read ran
ORIGINAL = "original source\n"


@dataclass(frozen=True)
class Client:
    harness: str  # as in `bash-policy hook NAME`
    version: str
    executable: Path


CLIENTS = {
    "claude-code-2.1.197": Client("claude-code", "2.1.197",
                                  NODE_MODULES / "claude-code-2.1.197" / "bin" / "claude.exe"),
    "claude-code-2.1.332": Client("claude-code", "2.1.332",
                                  NODE_MODULES / "claude-code-2.1.332" / "bin" / "claude.exe"),
    "gemini-0.61.0": Client("gemini", "0.61.0", NODE_MODULES / ".bin" / "gemini"),
}
_usable: dict[str, str | None] = {}


def usable(key: str) -> Client:
    """The client, or a skip naming why it cannot run here."""
    client = CLIENTS[key]
    if key not in _usable:
        if not client.executable.exists():
            _usable[key] = (f"{key} is not installed: run `npm ci --prefix tests/e2e/clients` "
                            "(.ci/run does)")
        else:
            proc = subprocess.run([str(client.executable), "--version"], capture_output=True,
                                  text=True, timeout=120, stdin=subprocess.DEVNULL)
            found = proc.stdout.strip()
            _usable[key] = None if proc.returncode == 0 and client.version in found else (
                f"{key} does not start here: {found or proc.stderr.strip()[-300:]}")
    if _usable[key]:
        pytest.skip(_usable[key])
    return client


@pytest.fixture(scope="module")
def model():
    with MockModel() as server:
        yield server


@dataclass
class Session:
    """A throwaway HOME and project, and one client run in them."""

    home: Path
    project: Path
    model: MockModel
    results: list[str] | None = None
    seconds: float = 0.0

    @property
    def canary(self) -> Path:
        return self.project / "canary"

    def hook_command(self, harness: str, *options: str) -> str:
        """The command in the snippet this machine's bash-policy prints."""
        printed = subprocess.run([sys.executable, "-m", "bash_policy", "hook", harness,
                                  "--print-config", *options], capture_output=True, text=True,
                                 check=True).stdout
        event = "PreToolUse" if harness == "claude-code" else "BeforeTool"
        return json.loads(printed)["hooks"][event][0]["hooks"][0]["command"]

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8",
                # Every host but 127.0.0.1 reaches the mock's CONNECT, which refuses it.
                "HTTPS_PROXY": self.model.url, "HTTP_PROXY": self.model.url,
                "https_proxy": self.model.url, "http_proxy": self.model.url,
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", **extra}

    def run(self, client: Client, mode: str, calls, options=(), command: str | None = None):
        self.model.reset(*calls)
        hook = command or self.hook_command(client.harness, *options)
        if client.harness == "claude-code":
            argv, env = self._claude(hook, mode)
        else:
            argv, env = self._gemini(hook, mode)
        started = time.monotonic()
        proc = subprocess.run([str(client.executable), "-p", "Explore the project.", *argv],
                              cwd=self.project, env=env, capture_output=True, text=True,
                              timeout=180, stdin=subprocess.DEVNULL)
        self.seconds = time.monotonic() - started
        self.results = self.model.tool_results()
        assert self.model.outbound == [], f"traffic meant for {self.model.outbound}"
        assert len(self.results) == len(calls), (proc.returncode, proc.stdout[-2000:],
                                                 proc.stderr[-2000:], self.results)
        return self.results

    def _claude(self, hook: str, mode: str):
        snippet = {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit|MultiEdit|NotebookEdit|Write",
                                             "hooks": [{"type": "command", "command": hook}]}]}}
        (self.project / ".claude").mkdir(exist_ok=True)
        (self.project / ".claude" / "settings.json").write_text(json.dumps(snippet))
        env = self.env(ANTHROPIC_BASE_URL=self.model.url, ANTHROPIC_API_KEY="sk-ant-test",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                       IS_SANDBOX="1")  # lets bypassPermissions start as root (CI runs as root)
        return ["--permission-mode", mode, "--output-format", "json"], env

    def _gemini(self, hook: str, mode: str):
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "hooks": {"BeforeTool": [{"matcher": "run_shell_command|replace|write_file",
                                      "hooks": [{"name": "bash-policy", "type": "command",
                                                 "command": hook, "timeout": 10000}]}]},
        }
        gemini = self.home / ".gemini"
        gemini.mkdir(exist_ok=True)
        (gemini / "settings.json").write_text(json.dumps(settings))
        (gemini / "trustedFolders.json").write_text(json.dumps({str(self.project): "TRUST_FOLDER"}))
        # Headless Gemini CLI offers its shell tool in plan and default mode
        # only when a policy rule allows it; the hook then still gates it.
        policy = self.home / "allow-shell.toml"
        policy.write_text('[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\n'
                          'priority = 500\nmodes = ["plan", "default"]\n')
        env = self.env(GOOGLE_GEMINI_BASE_URL=self.model.url, GEMINI_API_KEY="test-key", TERM="dumb")
        return ["--approval-mode", mode, "--output-format", "json", "--policy", str(policy)], env


@pytest.fixture
def session(tmp_path, model):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text(f"{TOKEN}\nsecond line\n")
    (project / "src.txt").write_text(ORIGINAL)
    return Session(home, project, model)


def assert_denied(result: str, code: str, *words: str) -> None:
    """A hook denial as the model reads it.  Claude Code 2.1.332 puts
    "PreToolUse:TOOL hook error: " before every hook denial; 2.1.197 and
    Gemini CLI show the reason (Gemini after "Tool execution blocked: ")."""
    text = json.loads(result).get("error", "") if result.startswith("{") else result
    text = re.sub(r"^(PreToolUse:\w+ hook error: |Tool execution blocked: )", "", text)
    assert text.startswith(DECISION_NOTE), result
    assert not code or (code in text and "fix:" in text), result
    for word in words:
        assert word in text, result


def bash(command: str):
    return ("Bash", {"command": command, "description": "explore"})


def shell(command: str):
    return ("run_shell_command", {"command": command})


CLAUDES = ["claude-code-2.1.197", "claude-code-2.1.332"]


# -- Claude Code -----------------------------------------------------------------------------

@pytest.mark.parametrize("key", CLAUDES)
def test_claude_plan_mode_denies_and_allows(key, session):
    client = usable(key)
    denied, allowed = session.run(client, "plan", [bash("touch canary"), bash("head -n 1 notes.txt")],
                                  ["--allow-readonly"])
    assert_denied(denied, "BP300", "without --permission-mode plan")
    assert "Shift+Tab" not in denied  # claude -p has none
    assert TOKEN in allowed and not session.canary.exists()


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_default_mode_with_always(key, session):
    client = usable(key)
    denied, allowed = session.run(client, "default",
                                  [bash("rg --pre ./canary.sh x ."), bash("head -n 1 notes.txt")],
                                  ["--always", "--allow-readonly"])
    assert_denied(denied, "BP400", "--always")
    assert TOKEN in allowed


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_bypass_mode_with_always(key, session):
    client = usable(key)
    src = str(session.project / "src.txt")
    results = session.run(client, "bypassPermissions", [
        bash("touch canary"), bash("head -n 1 notes.txt"),
        ("Read", {"file_path": src}),  # Claude Code writes only files read before
        ("Write", {"file_path": src, "content": "changed\n"}),
        ("Edit", {"file_path": src, "old_string": "original", "new_string": "changed"}),
    ], ["--always"])
    assert_denied(results[0], "BP300")
    assert TOKEN in results[1] and not session.canary.exists()
    assert ORIGINAL.strip() in results[2]
    assert_denied(results[3], "", src)
    assert_denied(results[4], "", src)
    assert (session.project / "src.txt").read_text() == ORIGINAL


def _claude_plan_path(body: dict) -> str:
    """The plan file Claude Code named in its plan-mode reminder."""
    found = re.findall(r"/[^\s\"'`]*/\.claude/plans/[\w.-]+\.md", json.dumps(body))
    assert found, "no plan file named in the request"
    return found[-1]


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_plan_mode_writes_only_this_sessions_plan(key, session):
    """The old default, any ~/.claude/plans/*.md, let one session write
    over another's plan; now only the file this session was given."""
    client = usable(key)
    plans = session.home / ".claude" / "plans"
    plans.mkdir(parents=True)
    (plans / "another-session.md").write_text("their plan\n")
    src = str(session.project / "src.txt")
    results = session.run(client, "plan", [
        ("Write", lambda body: {"file_path": _claude_plan_path(body), "content": "# my plan\n"}),
        ("Write", {"file_path": str(plans / "yet-another-session.md"), "content": "mine\n"}),
        ("Read", {"file_path": src}),  # Claude Code writes only files read before
        ("Write", {"file_path": src, "content": "changed\n"}),
    ])
    written = {p.name: p.read_text() for p in plans.glob("*.md")}
    assert written.pop("another-session.md") == "their plan\n"
    assert list(written.values()) == ["# my plan\n"], results[0]
    for result in results[1], results[3]:
        assert_denied(result, "", "plan mode only writes the plan")
    assert (session.project / "src.txt").read_text() == ORIGINAL


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_a_failing_hook_blocks(key, session):
    """A broken config makes the hook fail: exit 2 blocks even in bypass mode."""
    client = usable(key)
    broken = session.home / "broken.toml"
    broken.write_text("nonsense = 1\n")
    [result] = session.run(client, "bypassPermissions", [bash("touch canary")],
                           ["--always", "--config", str(broken)])
    assert "nonsense" in result and "blocked" in result
    assert not session.canary.exists()


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_a_missing_executable_blocks(key, session):
    """The executable is gone (a deleted venv): the snippet's `|| exit 2`
    turns the shell's 127, which Claude Code would let through, into a block."""
    client = usable(key)
    command = session.hook_command("claude-code", "--always")
    missing = "/nonexistent/bash-policy" + command[command.index(" hook "):]
    [result] = session.run(client, "bypassPermissions", [bash("touch canary")], command=missing)
    assert "/nonexistent/bash-policy" in result and not session.canary.exists()


def _requests_mention(session, text: str) -> bool:
    return any(text in json.dumps(r["body"]) for r in session.model.requests)


REWROTE = "bash-policy rewrote this command for plan mode"


@pytest.mark.parametrize("key,mode,options", [
    ("claude-code-2.1.197", "plan", []),
    ("claude-code-2.1.332", "default", ["--always"]),
])
def test_claude_rewrite_runs_the_safe_fix_and_tells_the_model(key, mode, options, session):
    """--rewrite: `rg TOKEN *.txt` (BP203) runs as `rg TOKEN -- *.txt` through
    updatedInput; the note reaches the model as additionalContext.  An
    unsafe fix (dropping `> copy`) is never applied."""
    client = usable(key)
    rewritten, unsafe = session.run(client, mode, [bash(f"rg -n {TOKEN} *.txt"),
                                                   bash("head -n 1 notes.txt > copy")],
                                    ["--allow-readonly", "--rewrite", *options])
    assert f"notes.txt:1:{TOKEN}" in rewritten, rewritten
    assert _requests_mention(session, REWROTE) and _requests_mention(session, f"rg -n {TOKEN} -- *.txt")
    assert_denied(unsafe, "BP500")
    assert not (session.project / "copy").exists()


def test_claude_2_1_332_plan_mode_does_not_run_a_rewritten_call(session):
    """Claude Code 2.1.332 in its own plan mode judges a call whose input a
    hook changed with its auto-mode safety check, which runs on Anthropic's
    servers: against the mock it does not run the call (docs/integrations.md)."""
    client = usable("claude-code-2.1.332")
    [result] = session.run(client, "plan", [bash(f"rg -n {TOKEN} *.txt")], ["--allow-readonly", "--rewrite"])
    assert f"notes.txt:1:{TOKEN}" not in result and "safety check" in result, result


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_rewrite_without_allow_readonly_leaves_the_prompt_to_the_client(key, session):
    """Without --allow-readonly an allowed command gets no opinion, so a
    rewrite gets `ask`: with no one to ask (-p), Claude Code does not run it."""
    client = usable(key)
    [result] = session.run(client, "plan", [bash(f"rg -n {TOKEN} *.txt")], ["--rewrite"])
    assert f"notes.txt:1:{TOKEN}" not in result, result


# -- Gemini CLI ------------------------------------------------------------------------------

def test_gemini_rewrite_runs_the_safe_fix(session):
    client = usable("gemini-0.61.0")
    rewritten, unsafe = session.run(client, "yolo", [shell(f"rg -n {TOKEN} *.txt"),
                                                     shell("head -n 1 notes.txt > copy")], ["--rewrite"])
    assert f"notes.txt:1:{TOKEN}" in rewritten and "modified by a hook" in rewritten, rewritten
    assert_denied(unsafe, "BP500")
    assert not (session.project / "copy").exists()


def test_gemini_yolo_mode(session):
    client = usable("gemini-0.61.0")
    src = str(session.project / "src.txt")
    results = session.run(client, "yolo", [
        shell("touch canary"), shell("head -n 1 notes.txt"),
        ("write_file", {"file_path": src, "content": "changed\n"}),
        ("replace", {"file_path": src, "old_string": "original", "new_string": "changed",
                     "instruction": "change it"}),
        ("write_file", {"file_path": "made\0.txt", "content": "x\n"}),
    ])
    assert_denied(results[0], "BP300", "/hooks disable bash-policy")
    assert TOKEN in results[1] and not session.canary.exists()
    assert_denied(results[2], "", src)
    assert_denied(results[3], "", src)
    assert "NUL" in results[4] and "blocked" in results[4]  # the hook's exit 2, not a crash
    assert sorted(p.name for p in session.project.iterdir()) == ["notes.txt", "src.txt"]
    assert (session.project / "src.txt").read_text() == ORIGINAL


def _gemini_plans_dir(body: dict) -> str:
    found = re.findall(r"/[^\s\"'`]*/\.gemini/tmp/[^\s\"'`]*/plans", json.dumps(body))
    assert found, "no plans directory named in the request"
    return found[-1]


def test_gemini_plan_mode(session):
    client = usable("gemini-0.61.0")
    results = session.run(client, "plan", [
        shell("touch canary"), shell("head -n 1 notes.txt"),
        ("write_file", lambda body: {"file_path": _gemini_plans_dir(body) + "/plan.md",
                                     "content": "# plan\n"}),
        ("write_file", {"file_path": str(session.project / "src.txt"), "content": "changed\n"}),
    ])
    assert_denied(results[0], "BP300")
    assert TOKEN in results[1] and not session.canary.exists()
    assert [p.read_text() for p in session.home.glob(".gemini/tmp/*/*/plans/plan.md")] == ["# plan\n"]
    assert (session.project / "src.txt").read_text() == ORIGINAL


def test_gemini_default_mode(session):
    client = usable("gemini-0.61.0")
    denied, allowed = session.run(client, "default",
                                  [shell("find . -maxdepth 0 -exec touch canary \\;"),
                                   shell("head -n 1 notes.txt")])
    assert_denied(denied, "BP300")
    assert TOKEN in allowed and not session.canary.exists()


def test_gemini_a_missing_executable_blocks(session):
    client = usable("gemini-0.61.0")
    command = session.hook_command("gemini")
    missing = "/nonexistent/bash-policy" + command[command.index(" hook "):]
    [result] = session.run(client, "yolo", [shell("touch canary")], command=missing)
    assert "/nonexistent/bash-policy" in result and not session.canary.exists()



# -- audit of the clients' own transcripts ----------------------------------------------------

@pytest.mark.parametrize("key", [*CLAUDES, "gemini-0.61.0"])
def test_audit_reads_the_transcript_the_client_wrote(key, session):
    """`bash-policy audit` on the session file the real client wrote (the
    unit tests read excerpts of such files: tests/test_audit.py)."""
    client = usable(key)
    claude = client.harness == "claude-code"
    call = bash if claude else shell
    commands = ["head -n 1 notes.txt", "rg foo *.txt > out"]
    session.run(client, "plan", [call(c) for c in commands])
    pattern = ".claude/projects/*/*.jsonl" if claude else ".gemini/tmp/*/chats/session-*"
    [transcript] = session.home.glob(pattern)
    proc = subprocess.run([sys.executable, "-m", "bash_policy", "audit", "--json", str(transcript)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["files"] == [{"path": str(transcript), "format": client.harness, "commands": 2}]
    assert (report["allowed"], report["denied"]) == (1, 1)
    assert {row["code"] for row in report["codes"]} == {"BP203", "BP500"}
    assert report["top"][0]["fix"]["command"] == "rg foo -- *.txt"
