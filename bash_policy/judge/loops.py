"""Loops that provably end (issue 20): counting `for (( ))` loops with literal
bounds, and `while true` loops whose every path reaches `break`.

A loop may never end, so the engine allows only those whose end it can see:
`for NAME in WORDS` (one pass a word), `while read` on input it consumes
(judge/descriptors.py), and the two shapes here.  Both follow bash 5.2.15,
each case run with /bin/bash (tests/test_loops.py):

- `for ((i = 0; i < 3; i++))`: the three expressions are arithmetic on one
  name, so the passes are computed exactly: an assignment of a decimal
  literal, a comparison of the name with one (`<`, `<=`, `>`, `>=`, `!=`),
  a step of `++`, `--`, `+= N`, `-= N` or `= NAME ± N`.  A leading 0 would be
  octal, so only `0` may start a number.  At most MAX_PASSES passes.
- `while true` (or `:`; `until false`): its body must reach `break` on every
  path in its first pass.  `break` and `break N` (digits, 0 included, which
  bash 5.2.15 reports as out of range yet still obeys) leave the loop; a
  `break` in a pipeline, subshell or substitution only ends that subshell;
  one inside an inner loop leaves the inner loop; `break x` breaks nothing.
  `exit` with at most one word ends the shell, and so the loop (`exit 1 2`
  says "too many arguments", which an interactive shell survives);
  `continue` ends the pass without leaving the loop.
"""

from __future__ import annotations

import re

from ..read.model import ArithFor, Command, Group, If, List, Pipeline

MAX_PASSES = 1000
_NUMBER = r"-?(?:0|[1-9][0-9]{0,5})"
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# Compiled on first use (re keeps them): few commands hold a `for (( ))`.
_INIT = rf"({_NAME})\s*=\s*({_NUMBER})"
_TEST = rf"({_NAME})\s*(<=|>=|<|>|!=)\s*({_NUMBER})"
_STEPS = (
    (rf"({_NAME})\s*(\+\+|--)", lambda m: (m[1], 1 if m[2] == "++" else -1)),
    (rf"(\+\+|--)\s*({_NAME})", lambda m: (m[2], 1 if m[1] == "++" else -1)),
    (rf"({_NAME})\s*([+-])=\s*({_NUMBER})",
     lambda m: (m[1], int(m[3]) if m[2] == "+" else -int(m[3]))),
    (rf"({_NAME})\s*=\s*({_NAME})\s*([+-])\s*({_NUMBER})",
     lambda m: (m[1], int(m[4]) if m[3] == "+" else -int(m[4])) if m[1] == m[2] else None),
)
_COMPARE = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "!=": int.__ne__}

OK, FAIL, BREAK, CONTINUE = "ok", "fail", "break", "continue"
_ANY = frozenset({OK, FAIL})


def counting_passes(node: ArithFor) -> tuple[str, list[int]] | str:
    """The loop variable of a counting `for (( ))` and the value it holds in
    each pass, or why the loop is not one the checker can count."""
    init, test = re.fullmatch(_INIT, node.init), re.fullmatch(_TEST, node.test)
    step = next((make(m) for pattern, make in _STEPS if (m := re.fullmatch(pattern, node.update))), None)
    if init is None or test is None or step is None:
        return ("only counting loops are checked: `NAME = NUMBER; NAME < NUMBER; NAME++` "
                "(or <=, >, >=, !=, --, += N, -= N)")
    name, (stepped, by) = init[1], step
    if test[1] != name or stepped != name:
        return f"the loop's three expressions must use one name (`{name}`)"
    value, bound, compare = int(init[2]), int(test[3]), _COMPARE[test[2]]
    passes: list[int] = []
    while compare(value, bound):
        if len(passes) == MAX_PASSES:
            return f"the loop would run more than {MAX_PASSES} times, or never end"
        passes.append(value)
        value += by
    return name, passes


def endless_test(test: List, until: bool) -> bool:
    """`while true`, `while :` or `until false`: a test that never ends the loop."""
    if len(test.items) != 1 or test.items[0].negated or len(test.items[0].commands) != 1:
        return False
    command = test.items[0].commands[0]
    return (isinstance(command, Command) and not command.redirects and not command.assignments
            and command.argv in ((("false",),) if until else (("true",), (":",))))


def always_breaks(body: List) -> bool:
    """Whether every path through `body` reaches a `break` of this loop."""
    return _list(body) == {BREAK}


def _list(node: List) -> frozenset:
    """The ways a list can end: OK, FAIL (its last status) or BREAK."""
    if "&" in node.ops:
        return _ANY  # a background job's `break` breaks nothing here
    ends = frozenset({OK})
    for index, item in enumerate(node.items):
        op = node.ops[index - 1] if index else ";"
        runs = {"&&": {OK}, "||": {FAIL}}.get(op, {OK, FAIL})
        if ends & runs:
            ends = (ends - runs) | _pipeline(item)
    return ends


def _pipeline(node: Pipeline) -> frozenset:
    if len(node.commands) > 1:
        return _ANY  # each member runs in a subshell
    ends = _node(node.commands[0])
    if node.negated:
        ends = frozenset({OK: FAIL, FAIL: OK}.get(end, end) for end in ends)
    return ends


def _node(node) -> frozenset:
    if isinstance(node, Command):
        if node.assignments or node.redirects:
            return _ANY | {BREAK}  # a redirection may fail, and then nothing runs
        argv = node.argv
        if argv[:1] == ("break",) and (len(argv) == 1 or (len(argv) == 2 and argv[1] is not None
                                                          and argv[1].isascii() and argv[1].isdigit())):
            return frozenset({BREAK})
        if argv[:1] == ("exit",) and (len(argv) == 1 or (len(argv) == 2 and argv[1] is not None)):
            return frozenset({BREAK})
        if argv[:1] == ("continue",):
            return frozenset({CONTINUE, FAIL})  # `continue x` fails and the pass goes on
        known: dict[tuple[str | None, ...], frozenset] = {
            ("true",): frozenset({OK}), (":",): frozenset({OK}), ("false",): frozenset({FAIL})}
        return known.get(argv, _ANY)
    extra = _ANY if node.redirects else frozenset()
    if isinstance(node, Group):
        return _list(node.body) | extra
    if isinstance(node, If):
        ends: set = set()
        for test, body in node.branches:
            tested = _list(test)
            ends |= tested & {BREAK}
            if OK in tested:
                ends |= _list(body)
            if FAIL not in tested:
                return frozenset(ends) | extra
        return frozenset(ends | (_list(node.orelse) if node.orelse is not None else {OK})) | extra
    return _ANY  # subshells, inner loops (a `break` there is theirs), case, tests
