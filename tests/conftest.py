"""Fixtures for every test."""

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def stand_in_client():
    """A process with a plain command line (`sleep 3600`), started before any test runs."""
    process = subprocess.Popen(["sleep", "3600"])
    yield process.pid
    process.kill()
    process.wait()


@pytest.fixture(autouse=True)
def the_client_is_a_stand_in(monkeypatch, stand_in_client):
    """Hooks look up the client that started them among their ancestors (its
    command line and start time: integrations/processes.py).  A test that
    calls a hook in process has no client: its nearest non-shell ancestor is
    whatever started pytest, which differs between machines (none at all
    where only shells stand between pytest and PID 1, as under CI, where a
    hook then fails safe and rewrites nothing), and pytest's own command line
    may hold `-p`, which reads as `gemini -p`.  Tests take a stand-in whose
    command line sets no client option and which started before anything a
    test writes.  Tests of the lookup itself run the hook under a parent
    process they make (test_rewriting.hook_under_a_client)."""
    from bash_policy.integrations import client_rules, processes

    def client_process(env, pid_variable):
        return stand_in_client

    monkeypatch.setattr(processes, "client_process", client_process)
    monkeypatch.setattr(client_rules, "client_process", client_process)


@pytest.fixture(autouse=True)
def own_trust_file(monkeypatch, tmp_path_factory):
    """Each test starts with no config trusted (judge/trust.py), whatever the
    machine's user has trusted; a test trusts what it needs."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture
def trusted():
    """`trusted(path)`: trust a config file as `bash-policy trust PATH` does."""
    from bash_policy.judge import trust
    from bash_policy.judge.policy import settings_of

    def trust_file(path):
        trust.trust(path, settings_of(Path(path)))
        return path

    return trust_file
