"""Dataclasses without their start-up cost.

`dataclasses.dataclass` writes and compiles every method of a class when the
class is made, and imports `inspect` to do it: with the package's 300
classes that was half of a check's start-up (120 ms of 230 on a 2-vCPU VM),
though one check uses a few dozen of them.  `dataclass` here takes the same
declarations, for the subset the package uses (`frozen`, `slots`, `eq`;
`field(default=, default_factory=, kw_only=, compare=, repr=)`;
`__post_init__`), and makes the same methods, but compiles a class's
`__init__`, `__eq__` and `__hash__` when one of them is first called.

`fields` and `replace` stand for the functions of `dataclasses`; those
still work on these classes too (`dataclasses.fields`, `replace`, `asdict`,
`is_dataclass`), from a `__dataclass_fields__` made when first asked: the
README promises that a Verdict is a frozen dataclass.  Two things differ:
a frozen class's subclasses cannot set attributes of their own either, and a
subclass is made with this `dataclass`, not the standard one (whose fields
`fields` would not see).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform, overload

    T = TypeVar("T")
else:
    def dataclass_transform(**_):
        return lambda decorated: decorated


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen instance (as dataclasses raises it)."""


class Field:
    """One field: its name, its annotation and how `__init__`, `==` and `repr` treat it."""

    __slots__ = ("name", "type", "default", "default_factory", "kw_only", "compare", "repr")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, kw_only: bool = False,
                 compare: bool = True, repr: bool = True) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.kw_only = kw_only
        self.compare = compare
        self.repr = repr

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r}, default={self.default!r})"


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING,
          kw_only: bool = False, compare: bool = True, repr: bool = True) -> Any:
    """A field with a default, a default factory, keyword-only, or left out of `==` or `repr`."""
    return Field(default, default_factory, kw_only, compare, repr)


if TYPE_CHECKING:
    @overload
    def dataclass(cls: type[T], /) -> type[T]: ...
    @overload
    def dataclass(*, frozen: bool = False, slots: bool = False,
                  eq: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls: Any = None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True) -> Any:
    """The class with the methods `dataclasses.dataclass` would give it."""
    def wrap(cls: type) -> type:
        return _process(cls, frozen, slots, eq)

    return wrap if cls is None else wrap(cls)


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """The fields, in `__init__`'s order (base classes' first)."""
    try:
        return class_or_instance.__record_fields__
    except AttributeError:
        raise TypeError("must be called with a record type or instance") from None


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record `obj` with `changes` to its fields, made by its `__init__`."""
    for f in fields(obj):
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    typing = sys.modules.get("typing")  # a non-string ClassVar was imported from it
    return typing is not None and (annotation is typing.ClassVar
                                   or getattr(annotation, "__origin__", None) is typing.ClassVar)


def _process(cls: Any, frozen: bool, slots: bool, eq: bool) -> Any:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record_fields__", ()):
            found[f.name] = f
    own = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        default = cls.__dict__.get(name, MISSING)
        f = default if isinstance(default, Field) else Field(default)
        if f.default is not MISSING and type(f.default).__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: "
                             "use default_factory")
        f.name, f.type = name, annotation
        found[name] = f  # a field declared again keeps its place
        own.append(f)
        if isinstance(default, Field):  # the class attribute is the default, as in dataclasses
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    defaulted = None
    for f in found.values():
        if f.kw_only:
            continue
        if f.default is not MISSING or f.default_factory is not MISSING:
            defaulted = f.name
        elif defaulted is not None:
            raise TypeError(f"non-default argument {f.name!r} follows default argument {defaulted!r}")
    if slots:
        cls = _with_slots(cls, [f.name for f in own])
    namespace = cls.__dict__
    forced: dict[str, Any] = {  # what dataclasses sets whatever the class defines
        "__record_fields__": tuple(found.values()), "__record_frozen__": frozen,
        "__dataclass_fields__": _Shadow("__dataclass_fields__"),
        "__dataclass_params__": _Shadow("__dataclass_params__")}
    unless_defined: dict[str, Any] = {
        "__match_args__": tuple(f.name for f in found.values() if not f.kw_only),
        "__init__": _stub(cls, "__init__"), "__repr__": _repr}
    if eq:
        unless_defined["__eq__"] = _stub(cls, "__eq__")
        if not ("__hash__" in namespace and not (namespace["__hash__"] is None and "__eq__" in namespace)):
            forced["__hash__"] = _stub(cls, "__hash__") if frozen else None
    if frozen:
        for name in ("__setattr__", "__delattr__"):
            if name in namespace:
                raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
        forced.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
        if slots:
            unless_defined.update(__getstate__=_getstate, __setstate__=_setstate)
    forced.update((name, value) for name, value in unless_defined.items() if name not in namespace)
    for name, value in forced.items():
        setattr(cls, name, value)
    return cls


def _with_slots(cls: type, names: list[str]) -> type:
    """The class made again with `__slots__` for its own fields (as dataclasses does)."""
    inherited = {slot for base in cls.__mro__[1:-1] for slot in base.__dict__.get("__slots__", ())}
    namespace = dict(cls.__dict__)
    namespace["__slots__"] = tuple(n for n in names if n not in inherited)
    for name in names:
        namespace.pop(name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    made = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


def _stub(cls: type, name: str) -> Any:
    """A method that compiles the class's generated methods, then calls the real one."""
    def method(self, *args, **kwargs):
        _compile(cls)
        return getattr(cls, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    return method


def _compile(cls: Any) -> None:
    """Write and compile `__init__`, `__eq__` and `__hash__` as dataclasses would,
    in place of their stubs (compiling twice, from two threads, makes the same)."""
    all_fields = cls.__record_fields__
    frozen = cls.__record_frozen__
    scope: dict[str, Any] = {"MISSING": MISSING, "__object_setattr": object.__setattr__}
    params: list[str] = ["self"]
    kw_params: list[str] = []
    body: list[str] = []
    for f in all_fields:
        name = f.name
        if f.default_factory is not MISSING:
            scope[f"__factory_{name}"] = f.default_factory
            param, value = f"{name}=MISSING", f"__factory_{name}() if {name} is MISSING else {name}"
        elif f.default is not MISSING:
            scope[f"__default_{name}"] = f.default
            param, value = f"{name}=__default_{name}", name
        else:
            param, value = name, name
        (kw_params if f.kw_only else params).append(param)
        body.append(f"__object_setattr(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    signature = ", ".join(params + (["*"] + kw_params if kw_params else []))
    compared = [f.name for f in all_fields if f.compare]
    mine = "".join(f"self.{n}," for n in compared)
    theirs = "".join(f"other.{n}," for n in compared)
    methods = {
        "__init__": f"def __init__({signature}):\n    " + "\n    ".join(body or ["pass"]),
        "__eq__": (f"def __eq__(self, other):\n    if other.__class__ is self.__class__:\n"
                   f"        return ({mine}) == ({theirs})\n    return NotImplemented"),
        "__hash__": f"def __hash__(self):\n    return hash(({mine}))",
    }
    wanted = [name for name in methods if getattr(cls.__dict__.get(name), "__code__", None) is _STUB_CODE]
    exec("\n".join(methods[name] for name in wanted), scope)  # text made above from the field names
    for name in wanted:
        function = scope[name]
        function.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, function)


_STUB_CODE = _stub(object, "__init__").__code__


def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__record_fields__ if f.repr)
    return f"{self.__class__.__qualname__}({shown})"


def _frozen_setattr(self, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self) -> list:
    return [getattr(self, f.name) for f in self.__record_fields__]


def _setstate(self, state: list) -> None:
    for f, value in zip(self.__record_fields__, state):
        object.__setattr__(self, f.name, value)


class _Shadow:
    """`__dataclass_fields__` or `__dataclass_params__`, for the functions of
    `dataclasses`: those of a dataclass with the same fields, made when first
    asked and then kept on the class."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, obj: Any, owner: Any) -> Any:
        import dataclasses

        made = dataclasses.make_dataclass(owner.__name__, [
            (f.name, f.type, dataclasses.field(
                default=f.default if f.default is not MISSING else dataclasses.MISSING,
                default_factory=(f.default_factory if f.default_factory is not MISSING
                                 else dataclasses.MISSING),
                kw_only=f.kw_only, compare=f.compare, repr=f.repr))
            for f in owner.__record_fields__], frozen=owner.__record_frozen__)
        for attribute in ("__dataclass_fields__", "__dataclass_params__"):
            type.__setattr__(owner, attribute, getattr(made, attribute))
        return getattr(made, self.attribute)
