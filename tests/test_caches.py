"""No cache may change a verdict: every corpus case gets the same verdict
with every cache on (read a first and a second time, so the second comes
from the caches) as with every cache off.  Speed itself is measured by
benchmarks/speed.py, never asserted here."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bash_policy import Policy, check
from bash_policy.corpus import corpus_files, read_cases
from bash_policy.judge import engine, flow, spec_cache
from bash_policy.judge import policy as policy_module
from bash_policy.judge.policy import SPEC_DIR, _stem_to_name
from bash_policy.read import parse_cache, words
from bash_policy.repo import gitconfig, gitrepo

CASES = [c for f in corpus_files([Path(__file__).parent.parent / "corpora"]) for c in read_cases(f)]


def _summary(verdict) -> tuple:
    return (verdict.allowed, verdict.notes,
            [(d.code, d.message, d.hint, d.span, d.segment, d.effect, d.rule)
             for d in verdict.denials])


_NEVER = re.compile(r"(?!)")


def _all_off(off) -> None:
    """Every cache and fast path off: the verdicts then come the long way."""
    off.setattr(parse_cache, "MAX_ENTRIES", 0)
    off.setattr(spec_cache, "ENABLED", False)
    parse_cache.clear()
    # The directory-flow walk even when no command runs cd.
    off.setattr(engine, "command_directories", lambda body, cwd, commands=None, **options:
                flow.command_directories(body, cwd, **options))
    off.setattr(engine, "_PLAIN_TEXT", _NEVER)  # screen every character
    off.setattr(words, "_ORDINARY", _NEVER)  # scan every word character by character
    off.setattr(gitconfig, "_KEEP_CHARS", -1)  # parse every config text
    for module, kept in ((gitrepo, gitrepo._INDEXES), (policy_module, policy_module._TABLES)):
        off.setattr(module, "_SETTLED_NS", 1 << 62)  # keep no index's gitlinks, no pyproject's answer
        kept.clear()


def test_caches_change_no_verdict(monkeypatch):
    with monkeypatch.context() as off:
        _all_off(off)
        fresh = Policy.from_mapping({})  # builds each spec from its TOML
        expected = [_summary(check(c.command, fresh, cwd=c.cwd)) for c in CASES]
        assert not parse_cache._kept
    policy, mismatched, hits = Policy.default(), [], 0
    for case, want in zip(CASES, expected):
        first = check(case.command, policy, cwd=case.cwd)
        again = check(case.command, policy, cwd=case.cwd)  # read from the cache
        hits += again.script is not None and again.script is first.script
        if not _summary(first) == _summary(again) == want:
            mismatched.append((case.path, case.line, case.command))
    assert not mismatched
    assert hits > len(CASES) // 2


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(spec_cache, "_memo", {})
    return tmp_path / "cache" / "bash-policy" / "specs"


def test_every_cached_spec_is_its_built_twin(cache_home, monkeypatch):
    names = [_stem_to_name(p.stem) for p in sorted(SPEC_DIR.glob("*.toml"))]
    written = {n: Policy.from_mapping({}).spec(n) for n in names}  # built, then stored
    assert len(list(cache_home.glob("*.pickle"))) == len(names) + 1  # and the defaults
    monkeypatch.setattr(spec_cache, "_memo", {})
    loaded = Policy.from_mapping({})
    monkeypatch.setattr(Policy, "_builtin_spec", None)  # nothing may be built now
    for name in names:
        assert loaded.spec(name) == written[name] and loaded.spec(name) is not written[name]


def test_subcommands_are_read_when_asked_and_a_damaged_one_is_built_again(cache_home, monkeypatch):
    built = Policy.from_mapping({}).spec("git")  # built, then stored
    monkeypatch.setattr(spec_cache, "_memo", {})
    subcommands = Policy.from_mapping({}).spec("git").subcommands
    assert isinstance(subcommands, spec_cache.Subcommands) and not subcommands._made
    assert subcommands["status"] == built.subcommands["status"] and list(subcommands._made) == ["status"]
    subcommands._blobs["log"] = b"damaged"
    assert subcommands["log"] == built.subcommands["log"]


def _counting(path, calls):
    def build():
        calls.append(path.read_bytes())
        return path.read_text(), [(path, path.read_bytes())]
    return build


def test_an_entry_is_used_only_for_the_same_bytes(cache_home, tmp_path, monkeypatch):
    path, calls = tmp_path / "x.toml", []
    path.write_text("a = 1\n")
    assert spec_cache.load(path, _counting(path, calls)) == "a = 1\n"
    monkeypatch.setattr(spec_cache, "_memo", {})
    assert spec_cache.load(path, _counting(path, calls)) == "a = 1\n"
    assert len(calls) == 1  # the second came from the disk
    path.write_text("a = 2\n")
    assert spec_cache.load(path, _counting(path, calls)) == "a = 2\n"
    assert len(calls) == 2


def test_a_changed_alias_target_rebuilds(cache_home, tmp_path, monkeypatch):
    path, base = tmp_path / "x.toml", tmp_path / "base.toml"
    path.write_text("x")
    base.write_text("one")

    def build():
        return base.read_text(), [(path, path.read_bytes()), (base, base.read_bytes())]

    assert spec_cache.load(path, build) == "one"
    base.write_text("two")
    monkeypatch.setattr(spec_cache, "_memo", {})
    assert spec_cache.load(path, build) == "two"


def test_the_same_alias_in_two_checkouts_merges_each_ones_base(cache_home, tmp_path, monkeypatch):
    # Found when fd's -l was allowed in a worktree: fdfind.toml (unchanged) came
    # from the entry another checkout wrote, merged with that checkout's fd.toml.
    built = {}
    for name, text in (("one", "base one"), ("two", "base two")):
        (tmp_path / name).mkdir()
        path, base = tmp_path / name / "x.toml", tmp_path / name / "base.toml"
        path.write_text("alias")
        base.write_text(text)

        def build(path=path, base=base):
            return base.read_text(), [(path, path.read_bytes()), (base, base.read_bytes())]

        monkeypatch.setattr(spec_cache, "_memo", {})
        built[name] = spec_cache.load(path, build)
    assert built == {"one": "base one", "two": "base two"}


@pytest.mark.parametrize("content", [b"", b"garbage", pickle.dumps((print, [], {})),
                                     pickle.dumps(("v", [], {"h": "os"}))])
def test_a_bad_entry_is_rebuilt_never_trusted(cache_home, tmp_path, content):
    path, calls = tmp_path / "x.toml", []
    path.write_text("a = 1\n")
    spec_cache.load(path, _counting(path, calls))
    (entry,) = cache_home.glob("x-*.pickle")
    entry.write_bytes(content)
    spec_cache._memo.clear()
    assert spec_cache.load(path, _counting(path, calls)) == "a = 1\n"
    assert len(calls) == 2


def test_an_unwritable_cache_only_builds(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file, so no directory can be made
    monkeypatch.setattr(spec_cache, "_memo", {})
    assert Policy.from_mapping({}).spec("rg") == Policy.default().spec("rg")


def test_an_edited_pyproject_is_read_again(tmp_path, monkeypatch):
    from bash_policy.judge import policy as config

    monkeypatch.setattr(config, "_SETTLED_NS", -1)  # keep even a file changed just now
    (tmp_path / ".git").mkdir()
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[project]\nname = 'x'\n")
    assert config.find_config(tmp_path) is None
    assert config.find_config(tmp_path) is None  # from the memo
    pyproject.write_text("[tool.bash-policy]\ncrosscheck = 'off'\n")
    assert config.find_config(tmp_path) == pyproject


def test_pyproject_answers_are_kept_for_the_next_process(tmp_path):
    """A hook starts a process for every call: the next one answers from the
    cache directory, without the TOML parser; an edit or a damaged file reads the TOML again."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    pyproject = tmp_path / "repo" / "pyproject.toml"
    pyproject.write_text("[tool.bash-policy]\ncrosscheck = 'off'\n")
    parser = "tomllib" if sys.version_info >= (3, 11) else "tomli"
    script = ("import sys\nfrom bash_policy.judge import policy\npolicy._SETTLED_NS = -1\n"
              f"{{block}}print(policy.find_config(sys.argv[1]), sys.modules.get({parser!r}) is not None)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run(block=""):
        return subprocess.run([sys.executable, "-c", script.format(block=block), str(pyproject.parent)],
                              env=env, capture_output=True, text=True, check=True).stdout.split()

    assert run() == [str(pyproject), "True"]
    assert run(f"sys.modules[{parser!r}] = None\n") == [str(pyproject), "False"]
    (tmp_path / "cache" / "bash-policy" / "pyproject-tables.json").write_text("[[1, 2]")
    assert run() == [str(pyproject), "True"]
    pyproject.write_text("[project]\nname = 'x'\n")
    assert run() == ["None", "True"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_changed_index_is_read_again(tmp_path, monkeypatch):
    """The gitlinks of an index are kept by its stat: a gitlink added later is seen."""
    from bash_policy.repo import gitrepo

    monkeypatch.setattr(gitrepo, "_SETTLED_NS", -1)  # keep even an index written just now
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}

    def git(*args, cwd):
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)

    repo, sub = tmp_path / "repo", tmp_path / "repo" / "vendored"
    git("init", "-q", str(repo), cwd=tmp_path)
    git("init", "-q", str(sub), cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=sub)
    with open(sub / ".git" / "config", "a") as fh:
        fh.write('[filter "x"]\n\tclean = ./evil\n')
    (repo / "f").write_text("x")
    git("add", "f", cwd=repo)
    assert check("git status", cwd=str(repo)).allowed
    assert check("git status", cwd=str(repo)).allowed  # the index's gitlinks from the memo
    assert any(key[1] == str(repo / ".git" / "index") for key in gitrepo._INDEXES)
    git("add", "vendored", cwd=repo)
    assert [d.code for d in check("git status", cwd=str(repo)).denials] == ["BP601"]
