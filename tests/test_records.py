"""bash_policy.records makes the classes dataclasses would: same fields, `__init__`,
`==`, hash, repr, frozenness, pickling, and the dataclasses functions work on them."""

import copy
import dataclasses
import pickle

import pytest

from bash_policy.records import FrozenInstanceError, dataclass, field, fields, replace


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0


@dataclass(frozen=True)
class Base:
    note: str | None = field(default=None, kw_only=True, compare=False)


@dataclass(frozen=True)
class Child(Base):
    name: str
    tags: list = field(default_factory=list, repr=False)


@dataclass
class Mutable:
    count: int = 0
    seen: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.count += 1


# The same declarations with the standard library, to compare against.
@dataclasses.dataclass(frozen=True, slots=True)
class StdPoint:
    x: int
    y: int = 0


@dataclasses.dataclass(frozen=True)
class StdBase:
    note: str | None = dataclasses.field(default=None, kw_only=True, compare=False)


@dataclasses.dataclass(frozen=True)
class StdChild(StdBase):
    name: str
    tags: list = dataclasses.field(default_factory=list, repr=False)


def test_the_methods_are_those_of_dataclasses():
    for mine, theirs in ((Point, StdPoint), (Child, StdChild)):
        assert mine.__match_args__ == theirs.__match_args__
        assert [f.name for f in fields(mine)] == [f.name for f in dataclasses.fields(theirs)]
    assert repr(Point(1)) == repr(StdPoint(1)).replace("StdPoint", "Point")
    assert repr(Child("a", note="n")) == repr(StdChild("a", note="n")).replace("StdChild", "Child")
    assert Point(1, 2) == Point(1, 2) != Point(2, 1) and hash(Point(1, 2)) == hash(StdPoint(1, 2))
    assert Child("a", note="x") == Child("a", note="y")  # not compared
    assert Point(1) != StdPoint(1) and Child("a").tags is not Child("a").tags
    assert not hasattr(Point(1), "__dict__") and Mutable.__hash__ is None
    assert Mutable().count == 1 and Mutable(5) == Mutable(5, {}) != Mutable(6)


def test_frozen_pickled_copied_and_replaced():
    point, child = Point(1, 2), Child("a", ["t"], note="n")
    with pytest.raises(FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del child.name  # type: ignore[misc]
    for value in (point, child):
        assert pickle.loads(pickle.dumps(value)) == value == copy.deepcopy(value)
    assert replace(child, name="b") == Child("b", ["t"], note="n")
    assert dataclasses.replace(point, y=5) == Point(1, 5) and dataclasses.is_dataclass(Child)
    assert dataclasses.asdict(child) == {"note": "n", "name": "a", "tags": ["t"]}


def test_declarations_dataclasses_refuses_are_refused():
    with pytest.raises(TypeError, match="non-default argument 'b'"):
        @dataclass
        class Order:
            a: int = 1
            b: int
    with pytest.raises(ValueError, match="mutable default"):
        @dataclass
        class Shared:
            a: list = []  # noqa: RUF012
