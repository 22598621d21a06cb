"""Hooks for system and miscellaneous programs whose operands data cannot judge.

Each hook reads the `Invocation` the engine built and adds denials to the
check `Context`; none of them allows what the generic checks denied.
"""

from __future__ import annotations

import math
import re

SLEEP_LIMIT_SECONDS = 30
SEQ_LIMIT_LINES = 1_000_000
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def printf_no_assign(inv, ctx) -> None:
    """`printf -vNAME` (value attached) assigns a shell variable, like `printf -v NAME`."""
    if len(inv.words) > 1:
        first = inv.words[1]
        if first.value and first.value.startswith("-v") and first.value != "-v":
            ctx.deny("BP400", first.span,
                     f"`printf {first.value}` assigns the output to the shell variable "
                     f"`{first.value[2:]}` instead of printing it",
                     "drop -v and let printf print", "state")


def date_format_only(inv, ctx) -> None:
    """`date` operands: one literal `+FORMAT`; any other operand sets the clock."""
    for index, word in enumerate(inv.positionals):
        if word.value is None:
            ctx.deny("BP406", word.span, f"`{word.text}` as an operand of date is not literal",
                     "write the +FORMAT operand literally, in quotes")
        elif not word.value.startswith("+"):
            ctx.deny("BP406", word.span,
                     f"`date {word.value}` sets the system clock (an operand without `+` is a new date)",
                     "show a date with `date -d 'STRING'`, or format with `date +FORMAT`", "state")
        elif index > 0:
            ctx.deny("BP406", word.span, "`date` takes one +FORMAT operand",
                     f"drop `{word.text}`")


def test_no_variable_tests(inv, ctx) -> None:
    """`test -v NAME` / `-R NAME` look up a variable, and bash evaluates an array
    subscript in NAME (`a[$(cmd)]`) as arithmetic, which runs commands."""
    for word in inv.positionals:
        if word.value in ("-v", "-R"):
            ctx.deny("BP400", word.span,
                     f"`{inv.spec.display} {word.value}` evaluates the array subscript in the "
                     "variable name it tests, which can run commands",
                     "test files and strings only (-e, -f, -d, -n, -z, =, !=)", "exec")


def sleep_bounded(inv, ctx) -> None:
    """`sleep` may wait only a literal total of at most SLEEP_LIMIT_SECONDS."""
    total = 0.0
    for word in inv.positionals:
        match = _DURATION.fullmatch(word.value or "")
        if match is None:
            ctx.deny("BP406", word.span,
                     f"`sleep {word.text}` is not a plain duration; it may never end",
                     f"write a number of seconds up to {SLEEP_LIMIT_SECONDS}, e.g. `sleep 2`", "hang")
            return
        total += float(match[1]) * _UNIT_SECONDS[match[2]]
    if total > SLEEP_LIMIT_SECONDS:
        ctx.deny("BP406", inv.positionals[-1].span,
                 f"`sleep` for {total:g} seconds exceeds the plan-mode limit of {SLEEP_LIMIT_SECONDS}",
                 f"sleep at most {SLEEP_LIMIT_SECONDS} seconds", "hang")


def seq_bounded(inv, ctx) -> None:
    """`seq` may print at most SEQ_LIMIT_LINES lines (`seq inf` never ends).

    Negative numbers reach the hook as numeric flags (`-5`), so the operands
    are gathered from both, in the order they were written."""
    numbers = sorted([w for w in inv.positionals]
                     + [w for flag, _, w in inv.flags if flag.names == ("-NUM",)],
                     key=lambda w: w.span.start)
    values = []
    for word in numbers:
        if word.value is None or not _DECIMAL.fullmatch(word.value):
            ctx.deny("BP406", word.span,
                     f"`seq {word.text}` is not a plain decimal number, so the length of the "
                     "output is unknown (`inf` never ends)",
                     "write decimal numbers, e.g. `seq 1 100`", "hang")
            return
        values.append(float(word.value))
    if not 1 <= len(values) <= 3:
        return  # seq itself rejects the call
    first, step, last = ([1.0, 1.0] + values if len(values) == 1
                         else [values[0], 1.0, values[1]] if len(values) == 2 else values)
    lines = 0 if step == 0 else math.floor((last - first) / step) + 1
    if step == 0 or lines > SEQ_LIMIT_LINES:
        ctx.deny("BP406", numbers[-1].span,
                 f"`seq` would print {'endlessly' if step == 0 else f'{lines} lines'}; "
                 f"the plan-mode limit is {SEQ_LIMIT_LINES}",
                 "print a shorter range", "hang")


def interpreter_needs_flag(inv, ctx) -> None:
    """A bare interpreter (`python3`, `node`) runs the code it reads from standard input."""
    if len(inv.words) == 1:
        name = inv.spec.display
        ctx.deny("BP406", inv.words[0].span,
                 f"`{name}` without arguments runs the code it reads from standard input",
                 f"only `{name} --version` is allowed; running code needs leaving plan mode", "exec")


def cargo_metadata_no_deps(inv, ctx) -> None:
    """`cargo metadata` without --no-deps resolves dependencies: it may download
    them and write Cargo.lock."""
    if not any("--no-deps" in flag.names for flag, _, _ in inv.flags):
        ctx.deny("BP406", inv.words[0].span,
                 "`cargo metadata` without --no-deps resolves dependencies, which may download "
                 "them and rewrite Cargo.lock",
                 "write `cargo metadata --no-deps --format-version 1`", "network")
