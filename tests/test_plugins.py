"""The printed OpenCode plugin and pi extension, loaded in Node with a stand-in
for the client's plugin API (tests/e2e runs them in the real clients): what
they check, what they rewrite, what they leave alone, and that the printed
file is self-contained and exports nothing but the plugin."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from bash_policy.cli import main as cli_main

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="needs Node.js (tests/e2e/install-clients.sh installs it)")


def printed(name: str, *options: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "bash_policy", "hook", name, "--print-config", *options],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def settings_of(plugin: str) -> dict:
    start = plugin.index("const SETTINGS = ") + len("const SETTINGS = ")
    return json.loads(plugin[start:plugin.index("};\n", start) + 1])


def run_plugin(tmp_path, plugin: str, body: str) -> dict:
    """Import the printed file in Node and run `body` with it as `mod`."""
    path = tmp_path / "plugin.mjs"
    path.write_text(plugin)
    script = textwrap.dedent(f"""
        const mod = await import({json.dumps(path.as_uri())});
        const out = await (async () => {{ {body} }})();
        console.log(JSON.stringify(out));
    """)
    proc = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_printed_settings_name_this_installation(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = settings_of(printed("opencode", "--agent", "plan", "--agent", "review", "--config", "team.toml",
                                   "--way-out", "press Tab"))
    assert settings["command"][0].startswith("/") and settings["command"][-3:] == [
        "serve", "--config", str(tmp_path / "team.toml")]
    assert settings["agents"] == ["plan", "review"] and settings["wayOut"] == "press Tab"
    assert settings["confine"] is True
    assert settings_of(printed("pi", "--no-confine"))["confine"] is False


@pytest.mark.parametrize("argv", [
    ["hook", "opencode"],  # a plugin, not a command hook
    ["hook", "pi", "--print-config", "--agent", "plan"],
    ["hook", "opencode", "--print-config", "--always"],
    ["hook", "qwen", "--print-config", "--agent", "plan"],
    ["hook", "pi", "--print-config", "--rewrite"],
])
def test_options_that_do_not_apply_are_usage_errors(argv):
    assert cli_main(argv) == 2


@needs_node
@pytest.mark.parametrize("name", ["opencode", "pi"])
def test_the_printed_file_is_self_contained_and_exports_only_the_plugin(tmp_path, name):
    """OpenCode calls every export of a plugin file as a plugin; an inlined
    client class exported beside it would make the file fail to load."""
    out = run_plugin(tmp_path, printed(name), "return Object.entries(mod).map(([k, v]) => [k, typeof v]);")
    assert out == ([["BashPolicyPlanMode", "function"]] if name == "opencode" else [["default", "function"]])
    assert "./serve-client.mjs" not in printed(name)


OPENCODE = """
    const plugin = await mod.BashPolicyPlanMode({ directory: %(cwd)s }, %(options)s);
    const call = async (sessionID, command, workdir) => {
      const output = { args: { command, ...(workdir ? { workdir } : {}) } };
      try {
        await plugin["tool.execute.before"]({ tool: "bash", sessionID, callID: "c" }, output);
        return { ran: output.args.command };
      } catch (error) {
        return { thrown: error.message };
      }
    };
    await plugin["chat.message"]({ sessionID: "p" }, { message: { agent: "plan" } });
    await plugin["chat.message"]({ sessionID: "b", agent: "build" }, { message: {} });
    await plugin["chat.message"]({ sessionID: "kid" }, { message: { agent: "explore" } });
    await plugin.event({ event: { type: "session.created", properties: { info: { id: "kid", parentID: "p" } } } });
    await plugin["chat.message"]({ sessionID: "orphan" }, { message: { agent: "explore" } });
    const out = {
      denied: await call("p", "touch canary"),
      allowed: await call("p", "rg -n foo .", "sub"),
      build: await call("b", "touch canary"),
      child: await call("kid", "touch canary"),
      orphan: await call("orphan", "touch canary"),
      unknown: await call("never-seen", "touch canary"),
      other: (await plugin["tool.execute.before"]({ tool: "write", sessionID: "p" }, { args: {} })) ?? null,
    };
    await plugin.dispose();
    return out;
"""


@needs_node
def test_the_opencode_plugin_gates_the_plan_agents_sessions(tmp_path):
    (tmp_path / "sub").mkdir()
    out = run_plugin(tmp_path, printed("opencode"), OPENCODE % {"cwd": json.dumps(str(tmp_path)),
                                                                  "options": "undefined"})
    assert "BP300" in out["denied"]["thrown"] and "switch to the build agent" in out["denied"]["thrown"]
    assert out["allowed"]["ran"].endswith(" run -- 'rg -n foo .'")
    assert out["build"] == {"ran": "touch canary"} and out["orphan"] == {"ran": "touch canary"}
    assert "subagent of the plan agent" in out["child"]["thrown"]
    assert "an agent bash-policy has not seen" in out["unknown"]["thrown"]
    assert out["other"] is None


@needs_node
def test_opencode_options_choose_the_agents_and_bad_ones_block_every_bash_call(tmp_path):
    cwd = json.dumps(str(tmp_path))
    out = run_plugin(tmp_path, printed("opencode", "--no-confine"),
                     OPENCODE % {"cwd": cwd, "options": '{ agents: ["build"] }'})
    assert "BP300" in out["build"]["thrown"] and out["denied"] == {"ran": "touch canary"}
    assert out["allowed"] == {"ran": "rg -n foo ."}  # the plan agent is not among them now
    out = run_plugin(tmp_path, printed("opencode"), """
        const plugin = await mod.BashPolicyPlanMode({}, { agents: "plan" });
        try {
          await plugin["tool.execute.before"]({ tool: "bash", sessionID: "b" }, { args: { command: "ls" } });
        } catch (error) {
          return error.message;
        }
    """)
    assert "misconfigured" in out and "`agents`" in out


PI = """
    const handlers = {};
    let flag = %(flag)s;
    const pi = {
      registerFlag() {}, registerCommand(name, spec) { handlers["/" + name] = spec.handler; },
      getFlag: () => flag, on(event, handler) { handlers[event] = handler; },
    };
    mod.default(pi);
    await handlers.session_start({}, {});
    const ctx = { cwd: %(cwd)s };
    const call = async (toolName, input) => {
      const result = await handlers.tool_call({ toolName, toolCallId: "t", input }, ctx);
      return { result: result ?? null, input };
    };
    const out = {
      denied: await call("bash", { command: "touch canary" }),
      allowed: await call("bash", { command: "rg -n foo ." }),
      plan: await call("write", { path: ".pi/plans/plan.md", content: "x" }),
      source: await call("write", { path: "src.txt", content: "x" }),
      escape: await call("edit", { path: ".pi/plans/../../x.md", edits: [] }),
      link: await call("write", { path: ".pi/plans/link.md", content: "x" }),
      dangling: await call("write", { path: ".pi/plans/dangling.md", content: "x" }),
      tilde: await call("write", { path: "~/.pi/plans/plan.md", content: "x" }),
      read: await call("read", { path: "src.txt" }),
      reminder: (await handlers.before_agent_start({ messageType: "user" }, ctx)) ?? null,
    };
    await handlers["/plan"]([], {});
    out.off = await call("bash", { command: "touch canary" });
    await handlers.session_shutdown({}, ctx);
    return out;
"""


@needs_node
def test_the_pi_extension_in_plan_mode(tmp_path):
    (tmp_path / ".pi" / "plans").mkdir(parents=True)
    (tmp_path / "src.txt").write_text("source\n")
    (tmp_path / ".pi" / "plans" / "link.md").symlink_to(tmp_path / "src.txt")
    (tmp_path / ".pi" / "plans" / "dangling.md").symlink_to(tmp_path / "new.md")
    out = run_plugin(tmp_path, printed("pi"), PI % {"flag": "true", "cwd": json.dumps(str(tmp_path))})
    assert out["denied"]["result"]["block"] is True and "BP300" in out["denied"]["result"]["reason"]
    assert "/plan" in out["denied"]["result"]["reason"]
    assert out["allowed"]["result"] is None and out["allowed"]["input"]["command"].endswith(" run -- 'rg -n foo .'")
    assert out["plan"]["result"] is None and out["read"]["result"] is None
    for key, why in (("source", "only writes the plan"), ("escape", "only writes the plan"),
                     ("link", "only writes the plan"), ("dangling", "cannot be resolved"),
                     ("tilde", "not a plain path")):
        assert out[key]["result"]["block"] is True and why in out[key]["result"]["reason"], (key, out[key])
    assert "Plan mode is on" in out["reminder"]["message"]["content"]
    assert out["off"] == {"result": None, "input": {"command": "touch canary"}}


@needs_node
@pytest.mark.parametrize("where", ["repository", "outside"])
def test_a_plans_directory_that_is_a_link_takes_no_write(tmp_path, where):
    """A repository that ships .pi/plans as a link would point plan writes
    at itself, or at ~/.pi/agent, whose AGENTS.md later sessions read (red
    team RT-H)."""
    outside = tmp_path.parent / f"{tmp_path.name}-agent"
    outside.mkdir()
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "plans").symlink_to("../" if where == "repository" else outside)
    out = run_plugin(tmp_path, printed("pi"), PI % {"flag": "true", "cwd": json.dumps(str(tmp_path))})
    assert out["plan"]["result"]["block"] is True and "is a link" in out["plan"]["result"]["reason"]
    assert out["allowed"]["result"] is None  # bash is judged as ever


@needs_node
def test_the_pi_extension_outside_plan_mode_and_with_a_missing_checker(tmp_path):
    plugin = printed("pi")
    out = run_plugin(tmp_path, plugin, PI % {"flag": "false", "cwd": json.dumps(str(tmp_path))})
    assert out["denied"] == {"result": None, "input": {"command": "touch canary"}} and out["reminder"] is None
    settings = settings_of(plugin)
    missing = plugin.replace(json.dumps(settings, indent=2), json.dumps({**settings, "command": ["/nonexistent"]}))
    out = run_plugin(tmp_path, missing, PI % {"flag": "true", "cwd": json.dumps(str(tmp_path))})
    for key in ("denied", "allowed"):
        assert "BP107" in out[key]["result"]["reason"] and "could not check" in out[key]["result"]["reason"]


@needs_node
def test_the_opencode_plugin_judges_by_the_sessions_config_not_the_workdirs(tmp_path):
    vendored = tmp_path / "vendor" / "x"
    (vendored / ".git").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (vendored / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
    out = run_plugin(tmp_path, printed("opencode"), f"""
        const plugin = await mod.BashPolicyPlanMode({{ directory: {json.dumps(str(tmp_path))} }});
        await plugin["chat.message"]({{ sessionID: "p" }}, {{ message: {{ agent: "plan" }} }});
        const output = {{ args: {{ command: "tokei src", workdir: "vendor/x" }} }};
        try {{
          await plugin["tool.execute.before"]({{ tool: "bash", sessionID: "p" }}, output);
          return output.args.command;
        }} catch (error) {{
          return error.message;
        }} finally {{
          await plugin.dispose();
        }}
    """)
    assert "BP300" in out and "tokei" in out
