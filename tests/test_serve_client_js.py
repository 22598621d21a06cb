"""The shipped TypeScript/JavaScript client of `bash-policy serve`
(bash_policy/integrations/js/serve-client.mjs), run with Node: every way the
server can fail is a denial that arrives, never a crash of the harness, an
allow, or a check that hangs.  The client that docs/integrations.md printed
before failed each of the failure cases here (crashed on ENOENT and EPIPE,
never resolved after an exit or on an answer with a null id)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bash_policy.integrations import plugins

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js (tests/e2e/install-clients.sh installs it)")
CLIENT = plugins.JS / "serve-client.mjs"
SERVE = [sys.executable, "-m", "bash_policy", "serve"]


def node(body: str, timeout: float = 60) -> dict:
    """Run `body` (an async function body with `BashPolicy` in scope) in
    Node; return what it printed as JSON, with Node's exit status."""
    script = textwrap.dedent(f"""
        import {{ BashPolicy }} from {json.dumps(CLIENT.as_uri())};
        const out = await (async () => {{ {body} }})();
        console.log(JSON.stringify(out));
    """)
    proc = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fake_server(code: str) -> list[str]:
    """A stand-in for `bash-policy serve` that misbehaves as `code` says."""
    return [sys.executable, "-c", textwrap.dedent(code)]


def denied_because(verdict: dict, *words: str) -> None:
    assert verdict["allowed"] is False, verdict
    assert verdict["denials"][0]["code"] == "BP107", verdict
    for word in words:
        assert word in verdict["error"], verdict


def test_the_real_server_judges_and_wraps(tmp_path):
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(SERVE)} }});
        const cwd = {json.dumps(str(tmp_path))};
        const allowed = await policy.check("rg -n foo .", cwd, {{ text: true, run: true }});
        const denied = await policy.check("touch canary", cwd, {{ text: true, run: true }});
        const plain = await policy.check("ls", cwd);
        policy.close();
        return {{ allowed, denied, plain }};
    """)
    assert out["allowed"]["allowed"] is True and out["allowed"]["text"].startswith("allowed")
    assert out["allowed"]["run"].endswith(" run -- 'rg -n foo .'")
    assert out["denied"]["allowed"] is False and "run" not in out["denied"]
    assert out["denied"]["denials"][0]["code"] == "BP300" and "BP300" in out["denied"]["text"]
    assert out["plain"]["allowed"] is True and "text" not in out["plain"] and "run" not in out["plain"]


def test_a_missing_executable_is_a_denial_not_a_crash():
    out = node("""
        const policy = new BashPolicy({ command: ["/nonexistent/bash-policy", "serve"] });
        return [await policy.check("ls"), await policy.check("ls")];
    """)
    for verdict in out:
        denied_because(verdict, "/nonexistent/bash-policy", "ENOENT")


def test_a_server_that_dies_mid_check_denies_it_and_the_next_check_restarts(tmp_path):
    starts = tmp_path / "starts"
    server = fake_server(f"""
        import sys
        with open({str(starts)!r}, "a") as f: f.write("start\\n")
        sys.stdin.readline()
        sys.stderr.write("bash-policy: something broke\\n")
        sys.exit(3)
    """)
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(server)} }});
        return [await policy.check("ls"), await policy.check("ls")];
    """)
    for verdict in out:
        denied_because(verdict, "exited with status 3", "something broke")
    assert starts.read_text() == "start\nstart\n"


def test_a_killed_server_is_a_denial_not_an_epipe_crash():
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(SERVE)} }});
        const first = await policy.check("ls", "/");
        policy.server.proc.kill("SIGKILL");
        // Straight after the kill, before Node has seen the exit: the write meets a closed pipe.
        const during = await Promise.all([1, 2, 3].map(() => policy.check("touch canary", "/")));
        await new Promise((done) => setTimeout(done, 500));
        const after = await policy.check("touch canary", "/");  // a new server
        policy.close();
        return {{ first, during, after }};
    """)
    assert out["first"]["allowed"] is True
    for verdict in [*out["during"], out["after"]]:
        assert verdict["allowed"] is False
    assert out["after"]["denials"][0]["code"] == "BP300"


def test_a_server_that_closes_its_input_is_a_denial_not_an_epipe_crash():
    """The old client crashed here: the write met a closed pipe (EPIPE) and
    nothing handled the stream's error event."""
    server = fake_server("import os, sys, time; sys.stdin.readline(); os.close(0); time.sleep(30)")
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(server)}, timeoutMs: 3000 }});
        const first = policy.check("ls");
        await new Promise((done) => setTimeout(done, 500));
        const second = await policy.check("x".repeat(1 << 20));  // larger than the pipe's buffer
        return [await first, second];
    """)
    for verdict in out:
        assert verdict["allowed"] is False and verdict["denials"][0]["code"] == "BP107", verdict
    assert any("EPIPE" in verdict["error"] for verdict in out), out


def test_a_check_after_the_server_exited_resolves():
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(fake_server("pass"))} }});
        const first = await policy.check("ls");
        await new Promise((done) => setTimeout(done, 300));
        return [first, await policy.check("ls")];
    """)
    for verdict in out:
        denied_because(verdict, "exited with status 0")


@pytest.mark.parametrize("reply", [
    '{"id": null, "error": "not JSON: Expecting value"}',  # what serve says to a line it cannot read
    '{"id": null, "error": "internal error: RuntimeError: bug"}',
    '{"id": 1}',  # neither verdict nor error
    '{"id": 1, "verdict": null}',
])
def test_an_answer_without_a_verdict_denies_its_check(reply):
    server = fake_server(f"""
        import sys
        for line in sys.stdin:
            print({reply!r}, flush=True)
    """)
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(server)} }});
        const verdict = await policy.check("ls");
        policy.close();
        return verdict;
    """)
    denied_because(out, "bash-policy serve:")


@pytest.mark.parametrize("reply,why", [
    ("not json at all", "not JSON"),
    ('{"id": 7, "verdict": {"allowed": true}}', "answered request 7 for 1"),
    ("[1, 2]", "nobody asked for"),
])
def test_an_answer_that_is_not_one_denies_every_open_check(reply, why):
    server = fake_server(f"""
        import sys
        sys.stdin.readline()
        print({reply!r}, flush=True)
        sys.stdin.read()
    """)
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(server)} }});
        return await Promise.all([policy.check("ls"), policy.check("ls")]);
    """)
    for verdict in out:
        assert verdict["allowed"] is False
    denied_because(out[0], why)


def test_a_server_that_does_not_answer_times_out_and_node_exits():
    server = fake_server("import time; time.sleep(600)")
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(server)}, timeoutMs: 500 }});
        return await policy.check("ls");
    """, timeout=30)
    denied_because(out, "did not answer within 500 ms")


def test_an_idle_client_does_not_keep_node_alive():
    """No close(): Node still exits once no check is open (the server is unref'd)."""
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(SERVE)} }});
        return await policy.check("ls", "/");
    """, timeout=30)
    assert out["allowed"] is True


def test_a_command_that_is_not_a_string_is_denied():
    out = node("""
        const policy = new BashPolicy({ command: ["/nonexistent"] });
        return await policy.check(42);
    """)
    denied_because(out, "not a string")


def test_the_documented_client_is_the_shipped_file():
    docs = (Path(__file__).resolve().parent.parent / "docs" / "integrations.md").read_text()
    assert CLIENT.read_text().strip() in docs


def test_warm_starts_the_server_before_the_first_check(tmp_path):
    starts = tmp_path / "starts"
    server = fake_server(f"""
        import sys
        with open({str(starts)!r}, "a") as f: f.write("start\\n")
        sys.stdin.read()
    """)
    out = node(f"""
        const policy = new BashPolicy({{ command: {json.dumps(server)}, timeoutMs: 300 }});
        policy.warm();
        await new Promise((done) => setTimeout(done, 1000));
        policy.warm();  // already running: no second server
        return await policy.check("ls");  // the warmed server gets it, and never answers
    """)
    assert starts.read_text() == "start\n"
    denied_because(out, "did not answer within 300 ms")
