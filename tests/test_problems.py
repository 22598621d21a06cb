"""Problems: a kind of denial owns its code, effect, message and hint, so a
denial cannot be built with a code or effect that is not its kind's."""

import pytest

from bash_policy import check
from bash_policy.judge.codes import Code, Effect
from bash_policy.judge.problems import Problem
from bash_policy.judge.verdict import Denial
from bash_policy.read.model import Span
from bash_policy.records import dataclass


def test_a_kind_says_everything_a_denial_needs():
    @dataclass(frozen=True)
    class SetsClock(Problem):
        code = Code.BP406
        effect = Effect.STATE
        message_format = "`date {value}` sets the clock"
        hint_format = "drop `{value}`"
        value: str

    problem = SetsClock("0101")
    assert (problem.code, problem.consequence(), problem.message(), problem.hint(), problem.kind) == \
        (Code.BP406, Effect.STATE, "`date 0101` sets the clock", "drop `0101`", "SetsClock")


@pytest.mark.parametrize("body, error", [
    ({"message_format": "x", "hint_format": "y"}, "needs a code"),
    ({"code": "BP406", "message_format": "x", "hint_format": "y"}, "needs a code"),
    ({"code": Code.BP406, "hint_format": "y"}, "needs a message"),
    ({"code": Code.BP406, "message_format": "x"}, "needs a hint"),
    ({"code": Code.BP406, "message_format": "{nope}", "hint_format": "y"}, "'nope', which is not a field"),
])
def test_a_kind_without_its_parts_fails_when_it_is_made(body, error):
    with pytest.raises(TypeError, match=error):
        type("Broken", (Problem,), {"__annotations__": {"value": "str"}, **body})


def test_a_denial_holds_typed_codes_and_effects():
    denial = Denial("BP400", "m", "h", Span(0, 1), effect="exec")
    assert denial.code is Code.BP400 and denial.effect is Effect.EXEC
    with pytest.raises(ValueError):
        Denial("BP999", "m", "h", Span(0, 1))
    with pytest.raises(ValueError):
        Denial(Code.BP400, "m", "h", Span(0, 1), effect="explode")


def test_the_json_form_keeps_plain_strings():
    data = check("rg --pre cat x").to_dict()["denials"][0]
    assert type(data["code"]) is str and type(data["effect"]) is str and type(data["rule"]) is str
    assert (data["code"], data["effect"], data["rule"]) == ("BP400", "exec", "flags")


def test_a_field_may_not_hide_what_every_kind_has():
    with pytest.raises(TypeError, match="may not be named 'kind'"):
        type("Broken", (Problem,), {"__annotations__": {"kind": "str"}, "code": Code.BP406,
                                    "message_format": "x", "hint_format": "y"})


def _kinds():
    from bash_policy.judge import engine  # noqa: F401  (imports every module that declares kinds)
    from bash_policy.judge.rules import load_all

    load_all()
    stack, found = list(Problem.__subclasses__()), {}
    while stack:
        kind = stack.pop()
        stack.extend(kind.__subclasses__())
        if hasattr(kind, "code") and kind.__module__.startswith("bash_policy."):
            found[f"{kind.__module__}.{kind.__name__}"] = kind
    return [found[k] for k in sorted(found)]


def _sample(annotation: str):
    """A value of a field's type, to render a kind that no corpus case reaches."""
    from bash_policy.judge.rules.script import Finding
    from bash_policy.judge.spec import Flag, Reason
    from bash_policy.read.crosscheck import Difference
    from bash_policy.read.model import Word
    from bash_policy.repo.gitrepo import Finding as RepositoryFinding

    reason = Reason(Effect.HANG, "waits", "")
    samples = {"Word": Word("x", Span(0, 1), "x"), "str": "x", "int": 1, "float": 1.5, "bool": True,
               "Reason": reason, "Flag": Flag(("-x",), denied=reason), "Effect": Effect.HANG,
               "Exception": ValueError("bad"), "tuple[str, ...]": ("a", "b"),
               "Finding": Finding(0, 1, "exec", "runs", "drop it"),
               "Difference": Difference(Span(0, 1), "x", "a", "b", "tree-sitter")}
    if annotation == "repository Finding":
        return RepositoryFinding("core.pager", "/r/.git/config", "sh", "runs a program")
    return samples[annotation.split(" | ")[0]]


@pytest.mark.parametrize("kind", _kinds(), ids=lambda k: k.__name__)
def test_every_kind_renders(kind):
    """Each kind, reached by a corpus case or not, makes a message and a hint
    from its fields (a misspelt attribute there would turn its denial into an
    internal error)."""
    import dataclasses

    values = {}
    for f in dataclasses.fields(kind):
        if f.name == "fix" or f.default is not dataclasses.MISSING:
            continue
        annotation = f.type if isinstance(f.type, str) else f.type.__name__
        if f.name == "finding" and kind.__module__.endswith("repository"):
            annotation = "repository Finding"
        values[f.name] = _sample(annotation)
    problem = kind(**values)
    assert problem.message() and problem.hint()
    assert problem.consequence() is None or isinstance(problem.consequence(), Effect)
