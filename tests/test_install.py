"""What ships: a regular (non-editable) `pip install .` without extras.

The default install must be exactly as safe as any extra: bashlex is not
there, the specs and defaults must be package data that really got
installed, and every corpus must give the same verdicts from the installed
copy as from this tree.
"""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.oracle  # builds a virtualenv and installs from PyPI's mirror (a minute)

ROOT = Path(__file__).resolve().parent.parent


def test_a_regular_install_without_extras_passes_every_corpus(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    environ = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    environ.pop("PYTHONPATH", None)
    install = subprocess.run([python, "-m", "pip", "install", "-q", str(ROOT)], env=environ,
                             capture_output=True, text=True, timeout=600)
    if install.returncode != 0 and "No matching distribution" in install.stderr:
        pytest.skip("the package index is not reachable")
    assert install.returncode == 0, install.stderr
    where = subprocess.run([python, "-c", "import bash_policy, importlib.util; "
                            "print(bash_policy.__file__); print(importlib.util.find_spec('bashlex'))"],
                           env=environ, cwd=tmp_path, capture_output=True, text=True, check=True)
    installed, bashlex = where.stdout.split()
    assert "site-packages" in installed and not installed.startswith(str(ROOT)), installed
    assert bashlex == "None"
    _typed(python, installed, tmp_path, environ)
    profiles = subprocess.run([python, "-c", "from bash_policy.integrations.profiles import load_profile; "
                               "print(sorted(load_profile(n).client for n in ('claude-code', 'gemini')))"],
                              env=environ, cwd=tmp_path, capture_output=True, text=True)
    assert profiles.stdout.strip() == "['Claude Code', 'Gemini CLI']", profiles.stderr  # package data
    run = subprocess.run([env_dir / "bin" / "bash-policy", "test", str(ROOT / "corpora")],
                         env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " 0 failed" in run.stdout.splitlines()[-1]


def _typed(python: Path, installed: str, tmp_path: Path, environ: dict) -> None:
    """The installed package ships py.typed, so mypy reads its types (PEP 561)
    from the install, public names included."""
    assert (Path(installed).parent / "py.typed").is_file()
    snippet = tmp_path / "use.py"
    snippet.write_text("from bash_policy import Verdict, check\n"
                       "verdict: Verdict = check('ls')\n"
                       "reveal_type(verdict.allowed)\n"
                       "reveal_type(verdict.denials[0].span.start)\n"
                       "verdict.allowd\n")
    import sys

    out = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(python), "--no-incremental",
                          str(snippet)], env=environ, cwd=tmp_path, capture_output=True, text=True).stdout
    assert "py.typed" not in out and "missing library stubs" not in out, out
    import re

    assert re.search(r'Revealed type is "(builtins\.)?bool"', out), out  # mypy's spelling varies
    assert re.search(r'Revealed type is "(builtins\.)?int"', out), out
    assert '"Verdict" has no attribute "allowd"' in out, out
