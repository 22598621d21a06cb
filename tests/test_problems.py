"""Problems: a kind of denial owns its code, effect, message and hint, so a
denial cannot be built with a code or effect that is not its kind's."""

from dataclasses import dataclass

import pytest

from bash_policy import check
from bash_policy.judge.codes import Code, Effect
from bash_policy.judge.problems import Problem
from bash_policy.judge.verdict import Denial
from bash_policy.read.model import Span


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
