"""Claude Code, Gemini CLI, Codex CLI and Copilot CLI, really run, with the
hook installed from the snippet `bash-policy hook NAME --print-config`
prints (Codex and Copilot: by `bash-policy hook NAME --install`, which for
Codex also records the hook trust Codex needs before it runs a hook).

Each test starts the client in print mode (`-p`; Codex: `codex exec`) in a
throwaway HOME and project, pointed at the scripted model in mock_model.py, which makes the
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

from bash_policy.integrations import install
from bash_policy.integrations.adapters import DECISION_NOTE
from bash_policy.integrations.harnesses import HARNESSES

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
    "codex-0.171.0": Client("codex", "0.171.0", NODE_MODULES / ".bin" / "codex"),
    "copilot-1.0.102": Client("copilot", "1.0.102", NODE_MODULES / ".bin" / "copilot"),
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
        [command] = install.configured(HARNESSES[harness], json.loads(printed))
        return command

    def install(self, client: Client, options=(), env=None) -> subprocess.CompletedProcess:
        """`bash-policy hook NAME --install` into this HOME."""
        extra = ["--client", str(client.executable)] if client.harness == "codex" else []
        return subprocess.run([sys.executable, "-m", "bash_policy", "hook", client.harness,
                               "--install", *options, *extra], capture_output=True, text=True,
                              cwd=self.project, env=env or self.env(), timeout=120)

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8",
                # Every host but 127.0.0.1 reaches the mock's CONNECT, which refuses it.
                "HTTPS_PROXY": self.model.url, "HTTP_PROXY": self.model.url,
                "https_proxy": self.model.url, "http_proxy": self.model.url,
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", **extra}

    def run(self, client: Client, mode: str, calls, options=(), command: str | None = None):
        self.model.reset(*calls)
        if client.harness in ("codex", "copilot"):
            argv, env = getattr(self, f"_{client.harness}")(client, mode, options, command)
        else:
            hook = command or self.hook_command(client.harness, *options)
            argv, env = (self._claude if client.harness == "claude-code" else self._gemini)(hook, mode)
            argv = ["-p", "Explore the project.", *argv]
        started = time.monotonic()
        proc = subprocess.run([str(client.executable), *argv],
                              cwd=self.project, env=env, capture_output=True, text=True,
                              timeout=180, stdin=subprocess.DEVNULL)
        self.seconds = time.monotonic() - started
        self.results = self.model.tool_results()
        assert self.model.outbound == [], f"traffic meant for {self.model.outbound}"
        assert len(self.results) == len(calls), (proc.returncode, proc.stdout[-2000:],
                                                 proc.stderr[-2000:], self.results)
        return self.results

    def _claude(self, hook: str, mode: str):
        entry = {"type": "command", "command": hook, **HARNESSES["claude-code"].hook_fields}
        snippet = {"hooks": {"PreToolUse": [{"matcher": "|".join(HARNESSES["claude-code"].gated),
                                             "hooks": [entry]}]}}
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


    def _codex(self, client: Client, mode: str, options, command: str | None):
        """`codex exec` with the hook as `--install` puts it and trusts it
        (no --dangerously-bypass-hook-trust: an untrusted hook would not run).
        `danger-full-access`: Codex's own sandbox must not be what blocks."""
        codex_home = self.home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=self.model.url))
        env = self.env(CODEX_HOME=str(codex_home), MOCK_API_KEY="sk-test")
        installed = self.install(client, options, env)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        if command is not None:  # another command in its place, trusted the same way
            hooks = codex_home / "hooks.json"
            hooks.write_text(hooks.read_text().replace(json.dumps(self.hook_command("codex", *options))[1:-1],
                                                       json.dumps(command)[1:-1]))
            report = install.Report("Codex CLI")
            install._codex_trust(report, [(hooks, command)], env, str(self.project),
                                 str(client.executable), trust=True)
            assert report.ok, report.text()
        return ["exec", "--skip-git-repo-check", "--sandbox", mode, "Explore the project."], env

    def _copilot(self, client: Client, mode: str, options, command: str | None):
        """`copilot -p` with its own key (BYOK, Anthropic wire format): no GitHub login."""
        env = self.env(COPILOT_PROVIDER_BASE_URL=self.model.url, COPILOT_PROVIDER_TYPE="anthropic",
                       COPILOT_PROVIDER_API_KEY="sk-ant-test", COPILOT_MODEL="claude-sonnet-4.5",
                       COPILOT_OFFLINE="true")
        installed = self.install(client, options, env)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        if command is not None:
            hooks = self.home / ".copilot" / "hooks" / "bash-policy.json"
            data = json.loads(hooks.read_text())
            data["hooks"]["preToolUse"][0]["bash"] = command
            hooks.write_text(json.dumps(data))
        modes = {"plan": ["--plan"], "interactive": []}[mode]
        approvals = [] if "--allow-readonly" in options else ["--allow-all-tools"]
        return ["-p", "Explore the project.", "--no-auto-update", *approvals, *modes], env


CODEX_CONFIG = """\
model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"

# Codex reaches for github.com and chatgpt.com for these; the tests stay on 127.0.0.1.
[analytics]
enabled = false
[feedback]
enabled = false
[features]
plugins = false
apps = false
remote_plugin = false
plugin_sharing = false
in_app_updates = false
"""


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
    text = re.sub(r"^(PreToolUse:\w+ hook error: |Tool execution blocked: |Denied by preToolUse hook: "
                  r"|Command blocked by PreToolUse hook: )", "", text)
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


@pytest.mark.parametrize("key", CLAUDES)
def test_claude_a_hook_that_fails_without_a_word_blocks(key, session):
    """A hook that exits without printing anything (a signal): Claude Code
    blocks on the snippet's exit 2 with nothing on stderr too."""
    client = usable(key)
    command = session.hook_command("claude-code", "--always")
    silent = "sh -c 'exit 1' x" + command[command.index(" hook "):]
    session.run(client, "bypassPermissions", [bash("touch canary")], command=silent)
    assert not session.canary.exists()


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


def test_claude_hook_timeout_is_in_seconds(session, monkeypatch):
    """The snippet's `timeout` (60) is seconds: a hook that takes over 1 s
    under a 20 s timeout still answers (were it milliseconds, Claude Code
    would kill it and, as with any hook past its timeout, run the call)."""
    client = usable("claude-code-2.1.332")
    monkeypatch.setitem(HARNESSES["claude-code"].hook_fields, "timeout", 20)
    command = "sleep 1; " + session.hook_command("claude-code", "--always")
    [result] = session.run(client, "bypassPermissions", [bash("touch canary")], command=command)
    assert_denied(result, "BP300")
    assert not session.canary.exists()


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


def test_gemini_a_hook_that_fails_without_a_word_blocks(session):
    """0.61.0 reads a deny from what an exit-2 hook printed, and runs the call
    when it printed nothing (a hook killed by a signal, red team RT-H): the
    snippet says why itself."""
    client = usable("gemini-0.61.0")
    command = session.hook_command("gemini")
    silent = "sh -c 'exit 1' x" + command[command.index(" hook "):]
    [result] = session.run(client, "yolo", [shell("touch canary")], command=silent)
    assert "bash-policy hook gemini failed (status 1)" in result and not session.canary.exists()


# -- Codex CLI -------------------------------------------------------------------------------

def exec_command(command: str, **extra):
    return ("exec_command", {"cmd": command, **extra})


def apply_patch(*body: str):
    return ("apply_patch", {"input": "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"})


def test_codex_denies_and_runs_allowed_commands_under_bash_policy_run(session):
    client = usable("codex-0.171.0")
    elsewhere = session.home / "elsewhere"
    elsewhere.mkdir()
    results = session.run(client, "danger-full-access", [
        exec_command("touch canary"),
        exec_command("head -n 1 notes.txt"),
        # Read-only to bash, but /bin/sh reads `[[` as a command and `>` as a
        # redirection: the hook never sees the shell argument, the rewrite
        # makes the command run in bash whatever it says.
        exec_command("[[ x > canary ]]; echo compared", shell="/bin/sh"),
        exec_command("touch canary", workdir=str(elsewhere)),
    ])
    assert_denied(results[0], "BP300", "/hooks")
    assert TOKEN in results[1] and "compared" in results[2] and "not found" not in results[2]
    assert_denied(results[3], "BP300")
    assert not session.canary.exists() and list(elsewhere.iterdir()) == []
    check = subprocess.run([sys.executable, "-m", "bash_policy", "hook", "codex", "--check", "--client",
                            str(client.executable)], capture_output=True, text=True,
                           env=session.env(CODEX_HOME=str(session.home / ".codex")), timeout=120)
    assert check.returncode == 0 and "trust: trusted" in check.stdout, check.stdout + check.stderr


def test_codex_without_the_rewrite_the_shell_argument_escapes_the_check(session):
    """Why the rewrite is on by default: with --no-confine the same allowed
    command, run by /bin/sh as the model asked, writes the canary."""
    client = usable("codex-0.171.0")
    [result] = session.run(client, "danger-full-access",
                           [exec_command("[[ x > canary ]]; echo compared", shell="/bin/sh")],
                           ["--no-confine"])
    assert session.canary.exists(), result


def test_codex_patches_write_only_plan_files(session):
    client = usable("codex-0.171.0")
    plans = session.project / "plans"
    plans.mkdir()
    results = session.run(client, "danger-full-access", [
        apply_patch("*** Add File: plans/plan.md", "+# plan"),
        apply_patch("*** Add File: plans/second.md", "+# more", "*** Update File: src.txt", "@@",
                    "-original source", "+changed"),
        exec_command("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: canary\n+x\n"
                     "*** End Patch\nEOF"),
    ], ["--plan-file", "plans/*.md"])
    assert (plans / "plan.md").read_text() == "# plan\n", results[0]
    assert_denied(results[1], "", "src.txt", "plan mode only writes the plan")
    assert_denied(results[2], "")
    assert sorted(p.name for p in plans.iterdir()) == ["plan.md"]
    assert (session.project / "src.txt").read_text() == ORIGINAL and not session.canary.exists()


def test_codex_a_failing_hook_blocks(session):
    client = usable("codex-0.171.0")
    broken = session.home / "broken.toml"
    broken.write_text("nonsense = 1\n")
    [result] = session.run(client, "danger-full-access", [exec_command("touch canary")],
                           ["--config", str(broken)])
    assert "nonsense" in result and "blocked" in result and not session.canary.exists()


# In place of the executable: one that is gone, and a checker killed before it says anything.
BROKEN = {"missing": "/nonexistent/bash-policy", "crashing": "sh -c 'kill -9 $$' bash-policy"}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_codex_a_missing_or_crashing_checker_blocks(session, broken):
    """Codex runs the call on exit 2 without a reason on stderr, so the
    snippet's command writes one itself."""
    client = usable("codex-0.171.0")
    command = session.hook_command("codex")
    [result] = session.run(client, "danger-full-access", [exec_command("touch canary")],
                           command=command.replace(command.split(" hook ")[0], BROKEN[broken], 1))
    assert "bash-policy hook codex failed (status" in result and "blocked" in result
    assert not session.canary.exists()


# -- Copilot CLI -----------------------------------------------------------------------------

def copilot_bash(command: str):
    return ("bash", {"command": command, "description": "explore"})


def test_copilot_denies_and_allows(session):
    client = usable("copilot-1.0.102")
    src = str(session.project / "src.txt")
    results = session.run(client, "interactive", [
        copilot_bash("touch canary"), copilot_bash("head -n 1 notes.txt"),
        ("create", {"path": str(session.project / "made.txt"), "file_text": "x\n"}),
        ("edit", {"path": src, "old_str": "original", "new_str": "changed"}),
    ])
    assert_denied(results[0], "BP300", "bash-policy.json")
    assert TOKEN in results[1]
    assert_denied(results[2], "", "made.txt")
    assert_denied(results[3], "", src)
    assert sorted(p.name for p in session.project.iterdir()) == ["notes.txt", "src.txt"]
    assert (session.project / "src.txt").read_text() == ORIGINAL


def _copilot_plan_path(body: dict) -> str:
    found = re.findall(r"/[^\s\"'`]*/\.copilot/session-state/[\w-]+/plan\.md", json.dumps(body))
    assert found, "no plan file named in the request"
    return found[-1]


def test_copilot_plan_mode_writes_only_this_sessions_plan(session):
    client = usable("copilot-1.0.102")
    other = session.home / ".copilot" / "session-state" / "another-session"
    results = session.run(client, "plan", [
        ("create", lambda body: {"path": _copilot_plan_path(body), "file_text": "# plan\n"}),
        ("create", {"path": str(other / "plan.md"), "file_text": "theirs\n"}),
        copilot_bash("git merge-base HEAD HEAD || echo no-repo"),
    ])
    plans = list(session.home.glob(".copilot/session-state/*/plan.md"))
    assert [p.read_text() for p in plans] == ["# plan\n"], results[0]
    assert_denied(results[1], "", "plan mode only writes the plan")
    assert "no-repo" in results[2]  # a read older plan-mode heuristics blocked (copilot-cli#4160)


def test_copilot_allow_readonly_runs_allowed_commands_under_bash_policy_run(session):
    """Without --allow-all-tools, prompt mode refuses what needs approval; the
    hook's allow (with the command rewritten) lets the read through, not the write."""
    client = usable("copilot-1.0.102")
    denied, allowed, hardened = session.run(client, "interactive", [
        copilot_bash("touch canary"), copilot_bash("head -n 1 notes.txt"),
        copilot_bash("printenv GIT_OPTIONAL_LOCKS || echo unset"),  # set by bash-policy run
    ], ["--allow-readonly"])
    assert_denied(denied, "BP300")
    assert TOKEN in allowed and not session.canary.exists()
    assert hardened.startswith("0\n"), hardened


def test_copilot_a_failing_hook_blocks(session):
    client = usable("copilot-1.0.102")
    broken = session.home / "broken.toml"
    broken.write_text("nonsense = 1\n")
    [result] = session.run(client, "interactive", [copilot_bash("touch canary")],
                           ["--config", str(broken)])
    assert "nonsense" in result and "blocked" in result and not session.canary.exists()


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_copilot_a_missing_or_crashing_checker_blocks(session, broken):
    """The snippet prints a deny itself when the hook cannot answer (and a
    half-written answer, which Copilot would read as none, never gets out)."""
    client = usable("copilot-1.0.102")
    command = session.hook_command("copilot")
    crashing = BROKEN[broken].replace("kill", "printf '{\"permissionDecision\":'; kill")
    [result] = session.run(client, "interactive", [copilot_bash("touch canary")],
                           command=command.replace(command.split(" hook ")[0].removeprefix("out=$("),
                                                   crashing, 1))
    assert "did not answer" in result and "blocked" in result and not session.canary.exists()


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
