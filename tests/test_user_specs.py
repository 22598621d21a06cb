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


def test_the_first_config_block_loads(tmp_path):
    first = DOC.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "bash-policy.toml").write_text(first)
    policy = Policy.from_file(tmp_path / "bash-policy.toml")
    assert check("acme-report -f json -n 5", policy).allowed
    assert codes("acme-report -f json builds/", policy) == ["BP602"]  # scope_roots, no directory


def test_add_an_own_tool_with_its_upload_flag_denied(tmp_path):
    policy = policy_for("Add your team's own tool, with its upload flag denied", tmp_path)
    assert codes("acme-report -f json -n 20 builds/", policy) == []
    assert codes("acme-report --upload builds/", policy) == ["BP400"]
    assert codes("acme-report --open builds/", policy) == ["BP400"]
    assert codes("acme-report -f html builds/", policy) == ["BP403"]
    assert codes("acme-report -q builds/", Policy.default()) == ["BP300"]


def test_add_a_tool_with_subcommands(tmp_path):
    policy = policy_for("Add a tool with subcommands", tmp_path)
    assert codes("acmectl status -o json api", policy) == []
    assert codes("acmectl logs -n 50 api", policy) == []
    assert codes("acmectl logs -f api", policy) == ["BP400"]
    assert codes("acmectl deploy api", policy) == ["BP405"]
    assert codes("acmectl restart api", policy) == ["BP405"]
    assert codes("acmectl", policy) == ["BP405"]


def test_forbid_git_log_patch(tmp_path):
    policy = policy_for("Forbid `git log -p`", tmp_path)
    assert codes("git log --stat -n 5", policy) == []
    assert check("git log -p", Policy.default()).allowed
    verdict = check("git log -p", policy)
    assert [d.code for d in verdict.denials] == ["BP400"]
    assert "git log --stat" in verdict.denials[0].hint


def test_a_worked_example_that_no_longer_holds_fails_to_load(tmp_path):
    import pytest

    from bash_policy import ConfigError

    text = EXAMPLES["Add your team's own tool, with its upload flag denied"]
    (tmp_path / "bash-policy.toml").write_text(text.replace('"-q/--quiet",\n', '"-q/--quiet", "--upload",\n')
                                               .replace('[programs.acme-report.deny."--upload"]\n'
                                                        'effect = "network"\n', '[programs.x]\n')
                                               .replace('why = "sends the report to the team\'s dashboard"\n'
                                                        'fix = "drop --upload and read the report it prints"\n',
                                                        'positionals = "read"\n'))
    with pytest.raises(ConfigError, match=r"examples\.deny: `acme-report --upload builds/` is allowed"):
        Policy.from_file(tmp_path / "bash-policy.toml")
