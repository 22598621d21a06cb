"""A config in the directory being explored may tighten the policy, but may
loosen it only once the user has trusted it (judge/trust.py; red team
RT-B: a cloned repository's pyproject.toml set `confine = "off"` and
allowed touch, and the hooks adopted it)."""

import subprocess
import sys

import pytest

from bash_policy import Policy, check
from bash_policy.judge.policy import UntrustedConfig, _defaults
from bash_policy.judge.trust import widenings


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bash_policy", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("text, loosened", [
    ('[programs.touch]\npositionals = "read"\n', "programs.touch"),
    ('[env]\nLD_PRELOAD = "*"\n', "env.LD_PRELOAD"),
    ('[env]\nTERM = "*"\n', "env.TERM"),  # wider than the built-in list
    ('write_targets = ["/dev/null", "out.txt"]\n', "write_targets adds out.txt"),
    ('trusted_dirs = ["/usr/bin", "/home/me/bin"]\n', "trusted_dirs adds /home/me/bin"),
    ('network_paths = ["/dev/tcp/"]\n', "network_paths drops /dev/udp/"),
    ('confine = "off"\n', 'confine = "off"'),
    ('crosscheck = "off"\n', 'crosscheck = "off"'),
    ("stdin_script = false\n", "stdin_script = false"),
    ("persistent_shell = false\n", "persistent_shell = false"),
    ('cdpath = ""\n', "cdpath"),
    ("[limits]\nmax_length = 1000000\n", "limits.max_length"),
    ('[trusted_repo_keys]\ngit = ["core.pager"]\n', "trusted_repo_keys.git"),
])
def test_what_loosens_is_refused_until_trusted(tmp_path, trusted, text, loosened):
    (tmp_path / "bash-policy.toml").write_text(text)
    with pytest.raises(UntrustedConfig) as refused:
        Policy.discover(tmp_path)
    assert loosened in str(refused.value) and "bash-policy trust" in str(refused.value)
    trusted(tmp_path / "bash-policy.toml")
    assert Policy.discover(tmp_path).source == str(tmp_path / "bash-policy.toml")
    # A file named by the caller is the caller's choice.
    assert Policy.from_file(tmp_path / "bash-policy.toml").source.endswith("bash-policy.toml")


@pytest.mark.parametrize("text", [
    'scope_roots = ["."]\n', 'crosscheck = "required"\n', 'confine = "required"\n',
    'write_targets = []\n', 'trusted_dirs = ["/usr/bin"]\n',
    'network_paths = ["/dev/tcp/", "/dev/udp/", "/proc/net/"]\n', "[limits]\nmax_segments = 10\n",
    '[env]\nPAGER = ["cat"]\n',  # as built in
])
def test_what_only_tightens_needs_no_trust(tmp_path, text):
    (tmp_path / "bash-policy.toml").write_text(text)
    assert Policy.discover(tmp_path).source == str(tmp_path / "bash-policy.toml")


def test_the_defaults_loosen_nothing():
    assert widenings(_defaults(), _defaults()) == []


def test_changed_settings_need_trusting_again_but_other_tables_do_not(tmp_path, trusted):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "a"\n[tool.bash-policy.programs.tokei]\npositionals = "read"\n')
    trusted(pyproject)
    assert check("tokei src", Policy.discover(tmp_path)).allowed
    pyproject.write_text('[project]\nname = "b"\nversion = "2"\n'
                         '[tool.bash-policy.programs.tokei]\npositionals = "read"\n')
    assert check("tokei src", Policy.discover(tmp_path)).allowed
    pyproject.write_text('[project]\nname = "b"\n[tool.bash-policy.programs.tokei]\npositionals = "read"\n'
                         '[tool.bash-policy.programs.touch]\npositionals = "read"\n')
    with pytest.raises(UntrustedConfig):
        Policy.discover(tmp_path)


def test_the_cli_trusts_lists_and_forgets(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "bash-policy.toml").write_text('confine = "off"\n[programs.tokei]\npositionals = "read"\n')
    (tmp_path / "src").mkdir()
    denied = cli("check", "tokei src", cwd=tmp_path / "src")
    assert denied.returncode == 2 and "bash-policy trust" in denied.stderr
    shown = cli("check", "--show-config", "ls", cwd=tmp_path)
    assert shown.returncode == 0 and "# trust: NOT trusted" in shown.stdout
    done = cli("trust", cwd=tmp_path / "src")
    assert done.returncode == 0 and "programs.tokei" in done.stdout and 'confine = "off"' in done.stdout
    assert cli("check", "tokei src", cwd=tmp_path / "src").returncode == 0
    listed = cli("trust", "--list", cwd=tmp_path)
    assert listed.stdout == f"{tmp_path / 'bash-policy.toml'}: trusted\n"
    (tmp_path / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "none"\n')
    assert "changed since" in cli("trust", "--list", cwd=tmp_path).stdout
    assert cli("trust", "--remove", "bash-policy.toml", cwd=tmp_path).returncode == 0
    assert cli("trust", "--remove", "bash-policy.toml", cwd=tmp_path).returncode == 1
    assert cli("trust", cwd=tmp_path / "src" / "..").returncode == 0
    assert cli("trust", "/", cwd=tmp_path).returncode == 2  # no config governs /


def test_corpus_tests_use_the_repository_s_own_config(tmp_path):
    """`bash-policy test` decides nothing that runs: it tests the repository's
    config as it is, trusted or not."""
    (tmp_path / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "own.txt").write_text("allow  tokei src\n")
    assert cli("test", cwd=tmp_path).returncode == 0
