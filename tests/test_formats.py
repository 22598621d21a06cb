"""--output-format for check, test and audit: SARIF 2.1.0 valid against the
official schema, GitHub annotations that a command's text cannot break out
of, JSON with schema_version and a documentation url per denial, statistics."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bash_policy.cli import main
from bash_policy.judge.codes import CODES

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "tests" / "schemas" / "sarif-2.1.0-rtm.5.json"
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"
COMMANDS = ["rg foo *.py > out", "rg --pre cat x", "ls", "rg 日本 *.py\nrg x > o", "echo \x1b]0;x\x07 > t"]


def _out(argv, capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def validator():
    if not SCHEMA.exists():
        if os.environ.get("CI"):
            pytest.fail("the SARIF schema is missing: .ci/run fetches it with tests/schemas/fetch.sh")
        pytest.skip("run tests/schemas/fetch.sh to fetch the SARIF 2.1.0 schema (npm)")
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def _valid(validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


@pytest.mark.parametrize("command", COMMANDS)
def test_check_sarif_is_valid(command, validator, capsys):
    code, out = _out(["check", "--output-format", "sarif", command], capsys)
    log = json.loads(out)
    _valid(validator, log)
    run = log["runs"][0]
    assert run["artifacts"][0]["contents"]["text"] == command
    denied = code == 1
    assert bool(run["results"]) == denied
    for result in run["results"]:
        region = result["locations"][0]["physicalLocation"]["region"]
        start, length = region["charOffset"], region["charLength"]
        assert 0 <= start <= start + length <= len(command)
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_check_sarif_carries_the_fix_as_replacements(validator, capsys):
    _, out = _out(["check", "--output-format", "sarif", "rg foo *.py"], capsys)
    [result] = json.loads(out)["runs"][0]["results"]
    [change] = result["fixes"][0]["artifactChanges"]
    [replacement] = change["replacements"]
    assert replacement == {"deletedRegion": {"charOffset": 7, "charLength": 0},
                           "insertedContent": {"text": "-- "}}


def test_test_and_audit_sarif_are_valid(validator, tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("allow  rg foo *.py\nmaybe x\ndeny  ls\nallow  ls\n")
    code, out = _out(["test", "--output-format", "sarif", str(corpus)], capsys)
    assert code == 2
    log = json.loads(out)
    _valid(validator, log)
    rules = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert rules == {"corpus-line", "corpus-verdict"}
    code, out = _out(["audit", "--output-format", "sarif", str(TRANSCRIPTS)], capsys)
    assert code == 0
    log = json.loads(out)
    _valid(validator, log)
    results = log["runs"][0]["results"]
    assert results and all(r["level"] == "warning" for r in results)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} >= {
        str(TRANSCRIPTS / "claude-code-2.1.332.jsonl")}


def test_json_has_schema_version_and_a_url_per_denial(capsys):
    _, out = _out(["check", "--output-format", "json", "rg foo > out"], capsys)
    data = json.loads(out)
    assert data["schema_version"] == 1
    [denial] = data["denials"]
    assert denial["url"] == "docs/codes.md#bp500-write-redirection"


def test_every_code_url_names_a_section_of_docs_codes_md():
    headings = {line[3:].strip() for line in (ROOT / "docs" / "codes.md").read_text().splitlines()
                if line.startswith("## ")}
    for code in CODES.values():
        path, _, anchor = code.url.partition("#")
        assert (ROOT / path).is_file()
        assert anchor == f"{code.code} {code.name}".lower().replace(" ", "-")
        assert f"{code.code} {code.name}" in headings


def test_json_lines_is_one_object_a_line(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("allow  rg foo *.py\nnot a case\nallow  ls\n")
    _, out = _out(["test", "--output-format", "json-lines", str(corpus)], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["kind"], r["line"]) for r in rows] == [("problem", 2), ("failure", 1)]
    _, out = _out(["audit", "--output-format", "json-lines", str(TRANSCRIPTS / "codex-0.50.0.jsonl")], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["command"], r["allowed"]) for r in rows] == [("rg -n hello notes.txt", True),
                                                             ("rg foo '*.py'", True)]


def test_github_annotations_escape_what_the_command_holds(capsys):
    command = "rg foo > 'a,b:c%\n::set-output name=x::y'"
    _, out = _out(["check", "--output-format", "github", command], capsys)
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error title=bash-policy BP500::")
    assert "%25" in lines[0] and "::set-output" not in lines[0].split("::", 2)[1]


def test_github_data_escapes_line_breaks():
    from bash_policy.formats import Annotation, github

    line = github([Annotation("BP500", "a\r\nb%", "f,1:x", 3)])
    assert line == "::error file=f%2C1%3Ax,line=3,title=bash-policy BP500::a%0D%0Ab%25"


def test_github_annotations_point_at_corpus_lines(tmp_path, capsys):
    corpus = tmp_path / "c,d.txt"
    corpus.write_text("allow  ls\nallow  rg foo > out\n")
    _, out = _out(["test", "--output-format", "github", str(corpus)], capsys)
    [line] = out.splitlines()
    assert line.startswith(f"::error file={str(corpus).replace(',', '%2C')},line=2,title=bash-policy corpus-verdict::")


def test_statistics(tmp_path, capsys):
    code, out = _out(["check", "--statistics", "rg foo *.py *.txt > out"], capsys)
    assert code == 1
    assert out.splitlines() == ["2  BP203  unquoted-glob      [2 with a fix]",
                                "1  BP500  write-redirection  [1 with a fix]"]
    _, out = _out(["check", "--statistics", "--output-format", "json", "rg foo > out"], capsys)
    assert json.loads(out) == [{"code": "BP500", "name": "write-redirection", "count": 1, "fixable": 1}]
    corpus = tmp_path / "c.txt"
    corpus.write_text("deny  rg --pre x y\ndeny  cat > o\ndeny  rg a > b\n")
    _, out = _out(["test", "--statistics", str(corpus)], capsys)
    assert out.splitlines()[0].startswith("2  BP500")
