import io
import json
import subprocess
import sys

from bash_policy import check
from bash_policy.judge.policy import Policy
from bash_policy.integrations.serve import serve


def exchange(*lines: str) -> list[dict]:
    out = io.StringIO()
    serve(io.StringIO("".join(line + "\n" for line in lines)), out, Policy.default())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_verdicts_have_the_check_json_schema_and_keep_ids():
    responses = exchange(json.dumps({"id": 1, "command": "rg -n foo src"}),
                         json.dumps({"id": "b", "command": "rg --pre cat x", "cwd": "/tmp"}))
    assert [r["id"] for r in responses] == [1, "b"]
    assert responses[0]["verdict"] == check("rg -n foo src").to_dict()
    assert responses[1]["verdict"]["allowed"] is False
    assert responses[1]["verdict"]["denials"][0]["code"] == "BP400"


def test_bad_lines_get_errors_and_the_server_keeps_going():
    responses = exchange("{oops", "[1]", json.dumps({"id": 3}), json.dumps({"id": 4, "command": "ls", "cwd": 5}),
                         "", json.dumps({"id": 5, "command": "head -n 1 README.md"}))
    assert [r["id"] for r in responses] == [None, None, 3, 4, 5]
    assert all("error" in r for r in responses[:4])
    assert "command must be a string" in responses[2]["error"]
    assert "verdict" in responses[4]


def test_a_checker_exception_becomes_an_error_response(monkeypatch):
    import bash_policy.judge.engine

    def boom(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(bash_policy.judge.engine, "check", boom)
    assert exchange(json.dumps({"id": 9, "command": "ls"})) == [
        {"id": 9, "error": "internal error: RuntimeError: bug"}]


def test_the_process_answers_each_line_before_the_next_arrives():
    proc = subprocess.Popen([sys.executable, "-m", "bash_policy", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        for ident, command in ((1, "rg -n foo"), (2, "rg --pre cat x")):
            proc.stdin.write(json.dumps({"id": ident, "command": command}) + "\n")
            proc.stdin.flush()
            response = json.loads(proc.stdout.readline())
            assert response["id"] == ident
            assert response["verdict"]["allowed"] is (ident == 1)
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
