"""The README's two set-up commands stay in step with CI and with the verdicts."""

import re
from pathlib import Path

from bash_policy import check

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def sh_blocks():
    return re.findall(r"```sh\n(.*?)\n```", README, re.S)


def test_ci_runs_the_readme_test_command():
    test_command = next(b for b in sh_blocks() if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text()
    apt_readme = set(re.search(r"apt-get install -y ([^&]+)&&", test_command)[1].split())
    apt_ci = set(re.search(r"apt-get install -y -q ([^>]+)>", ci)[1].split())
    assert apt_readme == apt_ci
    assert test_command.split("&& ", 2)[-1] in ci


def test_readme_check_examples_give_documented_verdicts():
    first = next(b for b in sh_blocks() if "bash-policy check" in b)
    assert check('rg -n "foo bar" src | head -20').allowed
    verdict = check("rg --pre cat x")
    assert not verdict.allowed and verdict.denials[0].code == "BP400" and verdict.denials[0].hint
    assert 'rg -n "foo bar" src | head -20' in first and "rg --pre cat x" in first


def test_readme_example_output_is_what_the_cli_prints(capsys):
    from bash_policy.cli import main

    shown = re.search(r"```\n\$ bash-policy check 'rg --pre cat x'\n(.*?)\n```", README, re.S)[1]
    assert main(["check", "rg --pre cat x"]) == 1
    assert shown == capsys.readouterr().out.rstrip("\n")


def test_the_first_set_up_command_shows_both_verdicts_and_exits_zero():
    import os
    import subprocess
    import sys

    first = next(b for b in sh_blocks() if "bash-policy check" in b)
    checks = first.removeprefix("pip install . && ")
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    proc = subprocess.run(["bash", "-c", checks], capture_output=True, text=True,
                          env={**os.environ, "PATH": path, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("allowed\n") and "\ndenied (1 problem)\n  BP400" in proc.stdout


def test_readme_confinement_example_is_what_the_cli_prints(tmp_path):
    import os
    import subprocess
    import sys

    import pytest

    from bash_policy.confine import support

    if not support().complete or not support().netns:
        pytest.skip("the README shows a machine with full confinement, as root")
    shown = re.search(r"```\n(\$ bash-policy doctor\n.*?)\n```", README, re.S)[1]
    for block in re.split(r"^\$ ", shown, flags=re.M)[1:]:
        command, _, expected = block.partition("\n")
        path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
        proc = subprocess.run(["bash", "-c", command.split("  #")[0]], capture_output=True, text=True,
                              cwd=tmp_path, env={**os.environ, "PATH": path, "NO_COLOR": "1", "HOME": str(tmp_path)})
        assert (proc.stdout + proc.stderr).rstrip("\n") == expected.rstrip("\n")
    assert not (tmp_path / "canary").exists()


def _shown(prompt: str) -> tuple[str, str]:
    """The command after `$ ` in a README block starting with `prompt`, and the output shown."""
    block = re.search(r"```\n\$ (" + re.escape(prompt) + r"[^\n]*)\n(.*?)\n```", README, re.S)
    assert block, prompt
    return block[1], block[2]


def test_readme_fix_and_audit_examples_are_what_the_cli_prints():
    """Run as shown, from the repository root, with the CLI of this checkout."""
    import os
    import subprocess
    import sys

    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    for prompt in ("bash-policy check --fix", "bash-policy audit"):
        command, shown = _shown(prompt)
        proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, "PATH": path, "NO_COLOR": "1"})
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.rstrip("\n") == shown
