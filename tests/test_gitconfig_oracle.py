"""The config reader against git itself: random config text, read by both.

Repository config is judged by reading it as git would (repo/gitconfig.py);
a text the two read differently hides a key (red team RT2: `path = "" x`
and `path = x<VT>` named another include file than git opened).  Each
example is written to a file and listed with `git config -f FILE --list -z`;
the entries, or the refusal, must be the same.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bash_policy.repo.gitconfig import ConfigSyntaxError, parse

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
EXAMPLES = int(os.environ.get("BASH_POLICY_GITCONFIG_EXAMPLES", "300"))

_VALUE_CHARS = st.sampled_from(list(' \t\v\f\r"\\#;=ab.-/') + ["\\n", "\\t", "\\b", '\\"', "\\\\",
                                                                  "\\\n", "\\x", "é", "\r\n"])
_NAME_CHARS = st.sampled_from(list("aZ9-._ \t\"\\]["))


@st.composite
def config_text(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["section", "key", "key", "key", "junk"]))
        indent = draw(st.sampled_from(["", " ", "\t", "\v", "\f"]))
        if kind == "section":
            name = "".join(draw(st.lists(_NAME_CHARS, max_size=6))) or "s"
            sub = "".join(draw(st.lists(_VALUE_CHARS, max_size=5)))
            form = draw(st.sampled_from(["[{n}]", '[{n} "{s}"]', "[{n}.{s}]", '[{n}\t"{s}"]']))
            lines.append(indent + form.format(n=name, s=sub))
        elif kind == "key":
            key = draw(st.sampled_from(["path", "Key", "a-b", "x9", "fsmonitor"]))
            sep = draw(st.sampled_from([" = ", "=", " =", "\t=\t", "", " "]))
            value = "".join(draw(st.lists(_VALUE_CHARS, max_size=10)))
            lines.append(f"{indent}{key}{sep}{value}")
        else:
            lines.append(indent + "".join(draw(st.lists(_VALUE_CHARS, max_size=8))))
    return draw(st.sampled_from(["", "\ufeff"])) + "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


def _git_entries(path) -> list[tuple[str, str | None]] | None:
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}
    run = subprocess.run(["git", "config", "-f", str(path), "--list", "-z"], env=env,
                         capture_output=True, stdin=subprocess.DEVNULL)
    if run.returncode != 0:
        return None
    out = []
    for item in run.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]:
        name, newline, value = item.partition("\n")
        out.append((name, value if newline else None))
    return out


def _ours(text: str) -> list[tuple[str, str | None]] | None:
    try:
        return [(e.name, e.value) for e in parse(text)]
    except ConfigSyntaxError:
        return None


@settings(max_examples=EXAMPLES, deadline=None, derandomize="BASH_POLICY_GITCONFIG_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=config_text())
@example(text='[include]\n\tpath = "" evil.cfg\n')
@example(text="[include]\n\tpath = evil.cfg\v\n")
@example(text="[core]\n\v pager = x\n")
@example(text='[a "b\\"c"]\nk = "x ; y" ; z\n')
def test_the_reader_lists_what_git_lists(tmp_path, text):
    path = tmp_path / "config"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert _ours(text) == _git_entries(path), repr(text)
