"""The worked examples in docs/config.md, loaded from the doc itself."""

import re
from pathlib import Path

from bash_policy import Policy, check

DOC = (Path(__file__).resolve().parent.parent / "docs" / "config.md").read_text()
EXAMPLES = dict(re.findall(r"### (.+?)\n.*?```toml\n(.*?)```", DOC.split("## Worked examples")[1], re.S))


def policy_for(title, tmp_path):
    path = tmp_path / "bash-policy.toml"
    path.write_text(EXAMPLES[title])
    return Policy.from_file(path)


def codes(command, policy):
    return [d.code for d in check(command, policy).denials]


def test_three_examples_are_documented():
    assert len(EXAMPLES) == 3


def test_add_bat_with_pager_denied(tmp_path):
    policy = policy_for("Add `bat`, with its pager flag denied", tmp_path)
    assert codes("bat -n --paging=never src/app.py", policy) == []
    assert codes("bat --pager 'sh -c id' x", policy) == ["BP400"]
    assert codes("bat --paging=always x", policy) == ["BP403"]
    assert codes("bat -n x", Policy.default()) == ["BP300"]


def test_add_tokei(tmp_path):
    policy = policy_for("Add `tokei`", tmp_path)
    assert codes("tokei -o json src", policy) == []
    assert codes("tokei --input stats.json", policy) == ["BP401"]


def test_forbid_git_log_patch(tmp_path):
    policy = policy_for("Forbid `git log -p`", tmp_path)
    assert codes("git log --stat -n 5", policy) == []
    assert check("git log -p", Policy.default()).allowed
    verdict = check("git log -p", policy)
    assert [d.code for d in verdict.denials] == ["BP400"]
    assert "git log --stat" in verdict.denials[0].hint
