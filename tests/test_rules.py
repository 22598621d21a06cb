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
    named = {spec.hook for spec in _all_specs() if spec.hook}
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
