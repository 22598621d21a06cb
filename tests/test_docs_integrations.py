"""docs/integrations.md and the pre-commit hook say what the code does."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bash_policy.integrations.adapters import Options, settings_snippet
from bash_policy.integrations.harnesses import HARNESSES

ROOT = Path(__file__).resolve().parent.parent
INTEGRATIONS = (ROOT / "docs" / "integrations.md").read_text()
DOC_EXECUTABLE = "/home/me/.venvs/bp/bin/bash-policy"


@pytest.mark.parametrize("harness,heading", [("claude-code", "## Claude Code"),
                                             ("gemini", "## Gemini CLI"),
                                             ("codex", "## Codex CLI"),
                                             ("copilot", "## GitHub Copilot CLI"),
                                             ("qwen", "## Qwen Code")])
def test_the_documented_snippet_is_the_printed_one(harness, heading):
    section = INTEGRATIONS[INTEGRATIONS.index(heading + "\n"):]
    shown = json.loads(re.search(r"```json\n(.*?)\n```", section, re.S)[1])
    assert shown == json.loads(settings_snippet(HARNESSES[harness], Options(), DOC_EXECUTABLE))


@pytest.mark.parametrize("doc", ["README.md", "docs/integrations.md", "docs/threat-model.md"])
def test_docs_name_no_path_of_the_machine_they_were_written_on(doc):
    text = (ROOT / doc).read_text()
    assert not re.search(r"(?<![\w.])/(work|root|tmp/pytest)[/\s)]", text)


def test_the_pre_commit_hook_runs_with_no_args(tmp_path):
    """pre-commit runs the entry at the repository root: corpora/ by default."""
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entry = re.search(r"^  entry: (.+)$", hooks, re.M)[1]
    assert "args:" not in hooks.split("- id:", 1)[1]
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "pinned.txt").write_text("allow  rg foo\ndeny BP400  rg --pre sh x\n")
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    proc = subprocess.run(entry, shell=True, cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PATH": path})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "2 passed, 0 failed"
