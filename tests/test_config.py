"""User configuration: same format as built-in specs, clear errors on bad input."""

import pytest

from bash_policy import ConfigError, Policy, check


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_user_program_is_added(tmp_path):
    policy = Policy.from_file(write(tmp_path, "bash-policy.toml", """
[programs.tokei]
summary = "count lines of code"
positionals = "read"
flags = ["-o/--output=FORMAT{json,yaml}", "-s/--sort=COLUMN"]
"""))
    assert check("tokei -o json src", policy).allowed
    assert not check("tokei -o toml src", policy).allowed
    assert not check("tokei src", Policy.default()).allowed


def test_a_subcommand_alias_is_the_same_subcommand(tmp_path):
    policy = Policy.from_file(write(tmp_path, "bash-policy.toml", """
[programs.tool.sub.list]
aliases = ["ls"]
flags = ["--all"]
positionals = "none"
"""))
    assert check("tool ls --all", policy).allowed
    assert [d.code for d in check("tool ls x", policy).denials] == ["BP406"]
    assert [d.code for d in check("tool l", policy).denials] == ["BP405"]


def test_user_can_deny_one_flag_of_a_builtin(tmp_path):
    policy = Policy.from_file(write(tmp_path, "bash-policy.toml", """
[programs.rg.deny."-n/--line-number"]
effect = "leak"
why = "is not wanted here"
fix = "drop -n"
"""))
    verdict = check("rg -n foo src", policy)
    assert [d.code for d in verdict.denials] == ["BP400"]
    assert "drop -n" in verdict.denials[0].hint
    assert check("rg -i foo src", policy).allowed


def test_pyproject_table_is_discovered(tmp_path, trusted):
    write(tmp_path, "pyproject.toml", """
[project]
name = "x"
[tool.bash-policy.env]
MY_FLAG = "*"
""")
    policy = Policy.discover(trusted(tmp_path / "pyproject.toml").parent)
    assert check("MY_FLAG=1 rg foo", policy).allowed
    assert not check("MY_FLAG=1 rg foo").allowed


def test_bash_policy_toml_wins_over_pyproject(tmp_path, trusted):
    write(tmp_path, "pyproject.toml", "[tool.bash-policy]\ntrusted_dirs = ['/opt/x']\n")
    write(tmp_path, "bash-policy.toml", "trusted_dirs = ['/opt/y']\n")
    trusted(tmp_path / "bash-policy.toml")
    assert Policy.discover(tmp_path).trusted_dirs == ("/opt/y",)


def test_no_config_means_defaults(tmp_path):
    assert Policy.discover(tmp_path) is Policy.default()


@pytest.mark.parametrize("text, needle", [
    ("frobnicate = 1\n", "frobnicate"),
    ("[programs.rg]\nflagz = []\n", "flagz"),
    ("[programs.rg]\nflags = ['not a flag']\n", "programs.rg.flags"),
    ("[programs.rg.deny.'--x']\neffect = 'boom'\nwhy = 'x'\n", "effect"),
    ("[programs.rg.deny.'--x']\neffect = 'exec'\n", "why"),
    ("[programs.x]\npositionals = 'sometimes'\n", "role"),
    ("[programs.x]\nsummary = 'no operand role'\n", "positionals: required"),
    ("[env]\nFOO = 3\n", "env.FOO"),
    ("[env]\nFOO = { match = '[' }\n", "env.FOO.match"),
    ("[env]\nFOO = { pattern = 'x' }\n", "env.FOO"),
    ("[limits]\nmax_length = -1\n", "max_length"),
    ("trusted_dirs = '/usr/bin'\n", "trusted_dirs"),
    ("this is = = not toml\n", "invalid TOML"),
    ("[programs.x]\npositionals = 'read'\naliases = ['y']\n", "only a subcommand has aliases"),
    ("[programs.x.sub.a]\npositionals = 'none'\naliases = ['b']\n[programs.x.sub.b]\n"
     "positionals = 'none'\n", "'b' already names a subcommand"),
])
def test_bad_config_names_file_and_key(tmp_path, text, needle):
    path = write(tmp_path, "bash-policy.toml", text)
    with pytest.raises(ConfigError) as info:
        Policy.from_file(path)
    assert str(path) in str(info.value) or "programs." in str(info.value)
    assert needle in str(info.value)


def test_env_values_may_be_matched_by_an_expression(tmp_path):
    path = write(tmp_path, "bash-policy.toml", "[env]\nRUST_LOG = { match = '[a-z_=,]*' }\n")
    policy = Policy.from_file(path)
    assert check("RUST_LOG=debug rg x", policy).allowed
    assert [d.code for d in check("RUST_LOG=/x rg x", policy).denials] == ["BP600"]


def test_missing_config_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        Policy.from_file(tmp_path / "nope.toml")


def test_trusted_dirs_are_configurable(tmp_path):
    policy = Policy.from_file(write(tmp_path, "bash-policy.toml", "trusted_dirs = ['/opt/tools']\n"))
    assert check("/opt/tools/rg foo", policy).allowed
    assert not check("/usr/bin/rg foo", policy).allowed


def test_docs_config_md_documents_every_key_and_agrees_with_the_defaults():
    """The first TOML block of docs/config.md names every top-level key, loads,
    and gives the defaults where it says it does; its list of denied
    variables leaves out those the defaults allow with any value (IFS)."""
    import re
    from pathlib import Path

    import tomllib

    from bash_policy.judge.policy import _CONFIG_KEYS, _defaults

    doc = (Path(__file__).resolve().parent.parent / "docs" / "config.md").read_text()
    block = re.search(r"```toml\n(.*?)```", doc, re.S)[1]
    table = tomllib.loads(block)
    assert set(table) == _CONFIG_KEYS
    Policy.from_mapping(table)
    defaults = _defaults()
    assert table["network_paths"] == defaults["network_paths"]
    denied = re.search(r"Every other\s+assignment is denied \(BP600\)(.*?)\.\n", doc, re.S)[1]
    for name, allowed in defaults["env"].items():
        if allowed == "*":  # allowed with any value: never in the denied list
            assert not re.search(rf"`{name}`", denied), name


# -- a user's spec examples run when the policy loads ---------------------------

_LINT = {"summary": "the team's linter", "positionals": "read", "flags": ["-q/--quiet"]}


def test_user_examples_that_hold_load():
    policy = Policy.from_mapping({"programs": {"acme-lint": {
        **_LINT, "examples": {"allow": ["acme-lint -q src"],
                              "deny": [{"cmd": "acme-lint --fix src", "code": "BP401"}]}}}})
    assert check("acme-lint -q src", policy).allowed


@pytest.mark.parametrize("examples, error", [
    ({"allow": ["acme-lint --fix src"]},
     r"programs\.acme-lint\.examples\.allow: `acme-lint --fix src` is denied \(BP401 unknown-flag: "
     r"`--fix` is not an allowed flag of `acme-lint`\), but the example says it passes"),
    ({"deny": [{"cmd": "acme-lint -q src", "code": "BP400"}]},
     r"programs\.acme-lint\.examples\.deny: `acme-lint -q src` is allowed, but the example says "
     r"it is denied with BP400"),
    ({"deny": [{"cmd": "acme-lint --fix src", "code": "BP400"}]},
     r"`acme-lint --fix src` is denied with BP401 only, but the example says it is denied with BP400"),
])
def test_a_user_example_that_fails_is_a_config_error_naming_it(examples, error):
    with pytest.raises(ConfigError, match=error):
        Policy.from_mapping({"programs": {"acme-lint": {**_LINT, "examples": examples}}}, "team.toml")


def test_subcommand_examples_run_too():
    table = {"sub": {"status": {"positionals": "none", "examples": {"allow": ["acmectl status x"]}}}}
    with pytest.raises(ConfigError, match=r"programs\.acmectl\.sub\.status\.examples\.allow: "
                                          r"`acmectl status x` is denied \(BP406"):
        Policy.from_mapping({"programs": {"acmectl": table}})


def test_examples_are_judged_with_the_policy_they_belong_to():
    with pytest.raises(ConfigError, match="BP600"):
        Policy.from_mapping({"programs": {"acme-lint": {**_LINT, "examples": {
            "allow": ["ACME_HOME=/tmp acme-lint src"]}}}})
    policy = Policy.from_mapping({"env": {"ACME_HOME": "*"}, "programs": {"acme-lint": {
        **_LINT, "examples": {"allow": ["ACME_HOME=/tmp acme-lint src"]}}}})
    assert check("ACME_HOME=/tmp acme-lint src", policy).allowed
