"""git and gh hooks: the parts a corpus line cannot pin down by itself."""

import pytest

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy
from bash_policy.judge.rules.gh import graphql_operations


@pytest.mark.parametrize("document, operations", [
    ("{ viewer { login } }", ["query"]),
    ("query Q($n: Int = 3) { a(first: $n) { b } }", ["query"]),
    ("query Q { ...F } fragment F on Query { x }", ["query", "fragment"]),
    ('{ search(query: "mutation { x }") { c } }', ["query"]),
    ('{ a(text: """ } mutation { """) { b } }', ["query"]),
    ("# mutation\n{ a }", ["query"]),
    ("{ a } mutation M { b }", ["query", "mutation"]),
    ("subscription { s }", ["subscription"]),
    ("schema { query: Q }", ["schema"]),
    ('"description" type T { a: Int }', ["?"]),
])
def test_graphql_operation_types(document, operations):
    assert graphql_operations(document) == operations


@pytest.mark.parametrize("document", [
    "{ a ", "{ a ) }", '{ a(s: "unterminated) }', "{ a } }",
])
def test_malformed_graphql_is_unknown(document):
    assert graphql_operations(document) is None


def _codes(command):
    return [d.code for d in check(command).denials]


def test_gh_api_last_method_wins():
    assert _codes("gh api -X PUT -X GET repos/o/r") == []
    assert _codes("gh api -X GET -X PUT repos/o/r") == ["BP403"]


def test_gh_api_graphql_checks_every_query_field():
    assert _codes("gh api graphql -f query='{ a }' -f query='mutation { b }'") == ["BP407"]


@pytest.mark.parametrize("fmt, allowed", [
    ("'%h %s'", True),
    ("'%%G literal'", True),
    ("format:%H", True),
    ("oneline", True),
    ("'%G?'", False),
    ("'tformat:%h %GK'", False),
    ("'%%%GS'", False),
    ("myalias", False),
])
def test_pretty_signature_placeholders(fmt, allowed):
    assert check(f"git log --format={fmt} -1").allowed is allowed


def test_stash_subcommand_must_come_first():
    assert check("git stash show -p").allowed
    assert _codes("git stash -p show") == ["BP405"]


def test_git_denials_name_their_effect():
    by_command = {
        "git -c core.pager=sh log": "exec",
        "git branch new": "state",
        "git remote show origin": "network",
        "git grep -O foo": "exec",
        "git log --output=x": "write",
    }
    for command, effect in by_command.items():
        assert [d.effect for d in check(command).denials] == [effect], command


@pytest.mark.parametrize("name, version", [("git", "2.39.5"), ("gh", "2.23.0")])
def test_specs_name_the_checked_version(name, version):
    assert version in Policy.default().spec(name).checked


@pytest.mark.parametrize("cmd, extension", [
    ("gh cache list", "gh-cache"), ("gh variable list", "gh-variable"), ("gh org ls", "gh-org"),
    ("gh ruleset view 1", "gh-ruleset"), ("gh rs list", "gh-rs"),
])
def test_gh_newer_command_denies_over_an_installed_extension(tmp_path, monkeypatch, cmd, extension):
    # gh 2.23 has no `cache`/`variable`/`org`/`ruleset`: it runs the extension gh-NAME.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("GH_DATA_DIR", raising=False)
    assert check(cmd).allowed
    (tmp_path / "gh" / "extensions" / extension).mkdir(parents=True)
    verdict = check(cmd)
    assert not verdict.allowed and verdict.denials[0].rule == "gh_newer_command"
    assert check("gh label list").allowed   # built in since before 2.23
