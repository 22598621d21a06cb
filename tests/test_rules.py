"""Every code and every rule carries examples, and they run: each denied
example yields its code (and rule), each allowed example passes.  Like
ShellCheck's prop_ examples and Codex's should_match/should_not_match, the
examples live beside the rule and cannot drift from what it does."""

import pytest

from bash_policy import check
from bash_policy.judge.codes import CODES
from bash_policy.judge.policy import SPEC_DIR, Policy, spec_file_stem
from bash_policy.judge.rules import load_all

RULES = load_all()
POLICY = Policy.default()


def _shown(verdict):
    return [(d.code, d.rule) for d in verdict.denials]


@pytest.mark.parametrize("code", [c for c in CODES.values() if c.runnable], ids=lambda c: c.code)
def test_code_example_yields_its_code(code):
    verdict = check(code.example)
    assert code.code in [d.code for d in verdict.denials], _shown(verdict)


@pytest.mark.parametrize("code", list(CODES.values()), ids=lambda c: c.code)
def test_code_fix_passes(code):
    assert check(code.passes).allowed, _shown(check(code.passes))


@pytest.mark.parametrize("name, example", [(r.name, e) for r in RULES.values() for e in r.deny])
def test_rule_denies_its_examples(name, example):
    verdict = check(example)
    assert name in [d.rule for d in verdict.denials], _shown(verdict)
    assert {d.code for d in verdict.denials if d.rule == name} <= {c.value for c in RULES[name].codes}


@pytest.mark.parametrize("name, example", [(r.name, e) for r in RULES.values() for e in r.allow])
def test_rule_passes_its_examples(name, example):
    verdict = check(example)
    assert name not in [d.rule for d in verdict.denials], _shown(verdict)


def _all_specs():
    names = sorted(POLICY.program_names())
    stack = [POLICY.spec(n) for n in names]
    while stack:
        spec = stack.pop()
        yield spec
        stack.extend(spec.subcommands.values())


def test_every_program_rule_is_named_by_a_spec_and_every_hook_exists():
    named = {hook for spec in _all_specs() for hook in spec.hooks}
    program_rules = {r.name for r in RULES.values() if r.check is not None}
    assert named <= program_rules
    assert program_rules <= named, f"rules no spec uses: {sorted(program_rules - named)}"


def test_a_spec_naming_an_unknown_rule_fails_at_load():
    from bash_policy.judge.policy import ConfigError

    with pytest.raises(ConfigError, match="no rule named 'nope'"):
        Policy.from_mapping({"programs": {"tool": {"positionals": "read", "hook": "nope"}}})


@pytest.mark.parametrize("spec", [s for s in _all_specs() if s.examples_allow or s.examples_deny],
                         ids=lambda s: s.display)
def test_spec_examples(spec):
    for command in spec.examples_allow:
        assert check(command).allowed, (command, _shown(check(command)))
    for command, code in spec.examples_deny:
        assert code in [d.code for d in check(command).denials], (command, _shown(check(command)))


def test_every_spec_file_builds():
    for path in SPEC_DIR.glob("*.toml"):
        assert path.stem == spec_file_stem(path.stem) or path.stem.startswith("x-")


# -- several rules for one program (spec `hooks`) ------------------------------

@pytest.fixture
def two_rules(monkeypatch):
    """Two program rules of a test's own, registered for the test only."""
    from bash_policy.judge import rules
    from bash_policy.judge.codes import Code
    from bash_policy.judge.problems import Problem
    from bash_policy.records import dataclass

    monkeypatch.setattr(rules, "RULES", dict(rules.load_all()))
    seen = []

    @dataclass(frozen=True)
    class Named(Problem):
        code = Code.BP406
        message_format = "{value}"
        hint_format = "drop it"
        value: str

    @rules.rule("test_no_a", codes=[Code.BP406], deny=["tool a"], allow=["tool b"])
    def no_a(inv, ctx):
        """`tool a`.
        A test rule."""
        seen.append("test_no_a")
        for word in inv.positionals:
            if word.value == "a":
                ctx.deny(Named("a"), word.span)

    @rules.rule("test_no_b", codes=[Code.BP406], deny=["tool b"], allow=["tool a"],
                unknown_operands=True)
    def no_b(inv, ctx):
        """`tool b`.
        A test rule."""
        seen.append("test_no_b")
        for word in inv.positionals:
            if word.value == "b":
                ctx.deny(Named("b"), word.span)

    return seen


def _tool(**keys):
    return Policy.from_mapping({"programs": {"tool": {"positionals": "read", **keys}}})


def test_a_spec_may_name_several_rules_and_each_runs_in_order(two_rules):
    policy = _tool(hooks=["test_no_a", "test_no_b"])
    assert policy.spec("tool").hooks == ("test_no_a", "test_no_b")
    verdict = check("tool a b c", policy)
    assert [(d.rule, d.message) for d in verdict.denials] == [("test_no_a", "a"), ("test_no_b", "b")]
    assert two_rules == ["test_no_a", "test_no_b"]
    assert check("tool c", policy).allowed


def test_an_operand_computed_at_run_time_is_denied_unless_every_rule_judges_it(two_rules):
    assert check('tool -- "$X"', _tool(hooks=["test_no_b"])).allowed
    assert not check('tool -- "$X"', _tool(hooks=["test_no_a", "test_no_b"])).allowed


@pytest.mark.parametrize("keys, error", [
    ({"hook": "test_no_a", "hooks": ["test_no_b"]}, "give one of them"),
    ({"hooks": ["test_no_a", "test_no_a"]}, "names a rule twice"),
    ({"hooks": ["test_no_a", "nope"]}, "hooks: no rule named 'nope'"),
    ({"hooks": "test_no_a"}, "expected a list of strings"),
])
def test_rules_a_spec_names_are_checked_at_load(two_rules, keys, error):
    from bash_policy.judge.policy import ConfigError

    with pytest.raises(ConfigError, match=error):
        _tool(**keys)


def test_one_rule_may_be_named_with_hook():
    assert Policy.default().spec("seq").hooks == ("seq_bounded",)


def test_rule_modules_are_found_where_they_live():
    from pathlib import Path

    from bash_policy.judge import rules

    here = Path(rules.__file__).parent
    assert rules.modules() == sorted(p.stem for p in here.glob("*.py") if p.stem != "__init__")
    for name, rule in RULES.items():
        if rule.check is not None:
            assert rule.check.__module__.rpartition(".")[2] in rules.modules(), name


def test_every_denial_has_a_code_its_rule_declares():
    """docs/rules.md lists each rule's codes: a denial's code is among them
    for every corpus case and example (a rule that calls another's check
    declares that one's codes too)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from messages import ROOT, commands

    wrong = {}
    for command, cwd in commands():
        for d in check(command, cwd=None if cwd is None else str(ROOT / cwd)).denials:
            if d.code not in RULES[d.rule].codes:
                wrong.setdefault((d.rule, d.code.value), command)
    assert not wrong, wrong
