"""The generic engine: a `Script` and a `Policy` in, a `Verdict` out.

It holds no program names.  What a program may do is in its spec; what
needs real logic is a hook named by the spec (bash_policy/judge/rules/).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from . import rules
from ..read.model import (
    ANSI_C, ARITHMETIC, BRACE, COMMAND_SUB, EXTGLOB, GLOB, LOCALE, PARAMETER, PROCESS_SUB, TILDE,
    Segment, Span, Word,
)
from ..read.treesitter import parse
from .scope import check_scope
from .policy import Policy
from .spec import CommandSpec, Flag
from .verdict import Denial, Verdict

_EXPANSION_CODES = {
    COMMAND_SUB: ("BP200", "runs a command inside the word"),
    PROCESS_SUB: ("BP200", "runs a command inside the word"),
    PARAMETER: ("BP201", "expands a variable whose value is unknown until run time"),
    ARITHMETIC: ("BP202", "evaluates arithmetic, which can assign variables and run code"),
    BRACE: ("BP204", "brace expansion turns one word into several"),
    ANSI_C: ("BP206", "`$'…'` quoting turns escapes into other characters"),
    LOCALE: ("BP206", "`$\"…\"` quoting translates the text at run time"),
    EXTGLOB: ("BP207", "an extended glob pattern expands to file names"),
    GLOB: ("BP203", "an unquoted glob expands to file names"),
    TILDE: ("BP205", "`~` expands to a home directory the checker cannot see"),
}
_EXPANSION_HINTS = {
    "BP200": "run the inner command by itself first, then write its output literally",
    "BP201": "write the value literally",
    "BP202": "write the number literally",
    "BP204": "write the words out, or quote the braces",
    "BP206": "use plain single quotes around the exact characters",
    "BP207": "quote the pattern and let the program match it",
    "BP205": "write the absolute path, or put the operand after `--`",
}
_PLAIN_VARIABLE = re.compile(r'"?\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})"?', re.ASCII)
_SIMPLE_BRACE = re.compile(r"([^{}'\"\\$`\s]*)\{([^{}'\"\\$`\s]*,[^{}'\"\\$`\s]*)\}([^{}'\"\\$`\s]*)")
_DEFAULT_FIX = {
    "exec": "drop it; running other programs needs leaving plan mode",
    "write": "drop it and read the output directly; writing files needs leaving plan mode",
    "network": "drop it; network calls that change things need leaving plan mode",
    "hang": "drop it; plan-mode commands must finish on their own",
    "state": "drop it; changing state needs leaving plan mode",
    "leak": "drop it",
    "interactive": "drop it; interactive programs cannot run in plan mode",
}
_BIDI = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
         "\u200e", "\u200f", "\u061c"}


@dataclass
class Invocation:
    """What the engine read from one program's argv, for hooks to inspect."""

    spec: CommandSpec
    words: tuple[Word, ...]
    flags: list[tuple[Flag, str | None, Word]] = field(default_factory=list)
    positionals: list[Word] = field(default_factory=list)
    after_double_dash: bool = False


class Context:
    """State of one check: the policy, the denials so far, the segment."""

    def __init__(self, policy: Policy, source: str, cwd: str | None):
        self.policy = policy
        self.source = source
        self.cwd = cwd
        self.denials: list[Denial] = []
        self.notes: list[str] = []
        self.segment: int | None = None
        # The literal per-command assignments of the segment being checked.
        self.assignments: dict[str, str | None] = {}
        self.segments: tuple[Segment, ...] = ()  # the whole script, for hooks that follow `cd`

    def deny(self, code: str, span: Span, message: str, hint: str, effect: str | None = None):
        self.denials.append(Denial(code, message, hint, span, self.segment, effect))

    def deny_word(self, word: Word, context: str = "") -> None:
        """Deny the first expansion of a word that is not allowed where it stands."""
        expansion = word.expansions[0]
        code, why = _EXPANSION_CODES[expansion.kind]
        shown = word.text
        where = f" {context}" if context else ""
        if code == "BP203":
            hint = (f"quote it so the program matches it itself ('{word.value or shown}'), "
                    "give it a fixed prefix such as ./, or put it after `--`")
        elif code == "BP201":
            hint = _variable_hint(self.source[expansion.span.start:expansion.span.end])
        elif code == "BP204":
            hint = _brace_hint(shown)
        else:
            hint = _EXPANSION_HINTS[code]
        self.deny(code, expansion.span if code in ("BP200", "BP201", "BP202") else word.span,
                  f"`{shown}`{where}: {why}", hint)


def _variable_hint(text: str) -> str:
    """For a plain `$NAME`, say how to learn the value in a command of its own."""
    match = _PLAIN_VARIABLE.fullmatch(text)
    if match is None:
        return _EXPANSION_HINTS["BP201"]
    return (f"write the value literally; to learn it, run `printenv {match[1] or match[2]}` "
            "as a command of its own first")


def _brace_hint(text: str) -> str:
    """For one simple `{a,b}`, spell out the words it becomes."""
    match = _SIMPLE_BRACE.fullmatch(text)
    if match is None:
        return _EXPANSION_HINTS["BP204"]
    prefix, alternatives, suffix = match.groups()
    words = " ".join(prefix + a + suffix for a in alternatives.split(","))
    return f"write the words out: `{words}`"


def check(command: str, policy: Policy | None = None, *, cwd: str | None = None) -> Verdict:
    """Decide whether `command` may run in plan mode.  Never raises on input."""
    policy = policy or Policy.default()
    if not isinstance(command, str):
        raise TypeError("command must be str")
    ctx = Context(policy, command, cwd)
    if _screen(command, ctx):
        return Verdict(command, False, tuple(ctx.denials), ())
    script = parse(command)
    ctx.segments = script.segments
    for code, span, message, hint in script.problems:
        ctx.deny(code, span, message, hint or "rewrite it as simple commands")
    if len(script.segments) > policy.max_segments:
        ctx.deny("BP103", Span(0, len(command)),
                 f"{len(script.segments)} commands in one line exceed the limit of {policy.max_segments}",
                 "split the work into several commands")
        return Verdict(command, False, tuple(ctx.denials), script.segments)
    if not script.segments and not script.problems:
        ctx.notes.append("empty command")
    for index, segment in enumerate(script.segments):
        ctx.segment = index
        check_segment(segment, ctx)
    if not ctx.denials:  # only an allow needs a second opinion; bashlex loads lazily
        from ..read.crosscheck import cross_check
        cross_check(script, ctx)
    return Verdict(command, not ctx.denials, tuple(ctx.denials), script.segments, tuple(ctx.notes))


def _screen(command: str, ctx: Context) -> bool:
    """Deny input that no parser should see: too long, NUL, control, bidi."""
    if len(command) > ctx.policy.max_length:
        ctx.deny("BP103", Span(0, len(command)),
                 f"the command is {len(command)} characters long; the limit is {ctx.policy.max_length}",
                 "split the work into smaller commands")
        return True
    for index, ch in enumerate(command):
        if ch in "\n\t" or " " <= ch < "\x7f":
            continue
        if ch == "\x00":
            what = "a NUL byte"
        elif "\ud800" <= ch <= "\udfff":
            what = "invalid UTF-8"
        elif ch < " " or ch == "\x7f" or "\x80" <= ch < "\xa0":
            what = f"the control character U+{ord(ch):04X}"
        elif ch in _BIDI:
            what = f"the bidirectional control U+{ord(ch):04X}"
        elif unicodedata.category(ch) in ("Cf", "Co", "Cn", "Zl", "Zp"):
            what = f"the invisible or unassigned character U+{ord(ch):04X}"
        else:
            continue
        ctx.deny("BP104", Span(index, index + 1), f"the command contains {what}",
                 "retype the command with plain characters")
        return True
    return False


def check_segment(segment: Segment, ctx: Context) -> None:
    ctx.assignments = {a.name: a.value.value for a in segment.assignments}
    for assignment in segment.assignments:
        _check_assignment(assignment, ctx)
    opened = {0, 1, 2}  # descriptors this command line can name: standard ones, then its own
    for redirect in segment.redirects:
        _check_redirect(redirect, ctx, opened)
        if redirect.fd is not None:
            opened.add(redirect.fd)
    if ctx.policy.scope_roots:
        check_scope(segment, ctx)
    if not segment.words:
        if segment.assignments:
            ctx.deny("BP303", segment.span,
                     "an assignment without a command changes the shell for every later command",
                     "drop the assignment")
        return
    check_argv(segment.words, ctx)


def _check_assignment(assignment, ctx: Context) -> None:
    allowed = ctx.policy.env.get(assignment.name)
    value = assignment.value
    if allowed is None:
        ctx.deny("BP600", assignment.span,
                 f"`{assignment.name}=` changes what the program runs or reads; only harmless "
                 "variables may be set",
                 f"drop `{assignment.name}=…`; harmless ones such as LC_ALL, TZ or NO_COLOR are "
                 "allowed (docs/config.md)")
        return
    if value.value is None:
        ctx.deny_word(value, f"in the value of {assignment.name}")
        return
    if allowed != "*" and value.value not in allowed:
        ctx.deny("BP600", assignment.span,
                 f"`{assignment.name}` may only be set to {', '.join(allowed)}",
                 f"write {assignment.name}={allowed[0]} or drop it")


def _check_redirect(redirect, ctx: Context, opened: set[int]) -> None:
    op, target = redirect.op, redirect.target
    if op in ("<<", "<<-"):
        body = redirect.body or ""
        if not redirect.quoted and any(ch in body for ch in "$`\\"):
            ctx.deny("BP105", redirect.span,
                     "the here-document's delimiter is unquoted, so `$`, backquotes and `\\` in its "
                     "body are expanded", "quote the delimiter: <<'EOF'")
        return
    if op in (">&-", "<&-"):
        return
    if target is None:
        ctx.deny("BP500", redirect.span, f"unsupported redirection `{op}`", "drop the redirection")
        return
    if target.value is None:
        if op == "<<<" or not target.pathname_only:
            ctx.deny_word(target, "in a here-string" if op == "<<<" else "as a redirection target")
        else:
            ctx.deny("BP501", target.span,
                     f"the redirection target `{target.text}` is not a literal path",
                     "write the file name literally, in quotes if needed")
        return
    path = target.value
    if op in (">&", "<&") and (path.isdigit() or (path[:-1].isdigit() and path.endswith("-"))):
        source_fd = int(path.rstrip("-"))
        if op == ">&" and source_fd not in opened:
            # Another descriptor may be a file the harness holds open for writing.
            ctx.deny("BP500", redirect.span,
                     f"`{ctx.source[redirect.span.start:redirect.span.end]}` writes to descriptor "
                     f"{source_fd}, which this command did not open: it may be a file the caller "
                     "holds open", "redirect to the standard streams only (2>&1, >&2) or to /dev/null",
                     "write")
        return  # duplicating or moving a standard or own descriptor opens nothing
    if op == "<<<":
        return
    if op in ("<", "<&"):
        if any(path.startswith(p) for p in ctx.policy.network_paths):
            ctx.deny("BP501", target.span, f"reading `{path}` makes bash open a network connection",
                     "read a local file instead", "network")
        elif op == "<&":
            ctx.deny("BP500", redirect.span, f"`<&{path}` is not a descriptor number",
                     "use <file to read a file")
        return
    if op in (">", ">>", "&>", "&>>", ">|", ">&") and path in ctx.policy.write_targets:
        return
    written = f"{'' if redirect.fd is None else redirect.fd}{op}{target.text}"
    ctx.deny("BP500", Span(redirect.span.start, target.span.end),
             f"`{written}` opens `{path}` for writing",
             "drop the redirection and read the output directly, or redirect to /dev/null",
             "write")


def check_argv(words: tuple[Word, ...], ctx: Context, trailing_unknown: str | None = None) -> None:
    """Check one program's argv (the program word first).  `trailing_unknown`
    names the wrapper that appends operands from standard input, if any."""
    program = words[0]
    if program.value is None:
        expansion = program.expansions[0]
        ctx.deny("BP302", program.span,
                 f"the program name `{program.text}` holds {expansion.kind.replace('-', ' ')}",
                 "name the program literally")
        return
    name = program.value
    if "/" in name:
        directory, _, base = name.rpartition("/")
        if not name.startswith("/") or directory not in ctx.policy.trusted_dirs or not base:
            ctx.deny("BP301", program.span,
                     f"`{name}` is a path, not a trusted program"
                     + ("" if name.startswith("/") else " (relative paths run whatever file is there)"),
                     f"call it by its bare name: `{base or name}`")
            return
        name = base
    spec = ctx.policy.spec(name) if name else None
    if spec is None:
        ctx.deny("BP300", program.span, f"`{name}` is not in the read-only whitelist",
                 "use a whitelisted program (`bash-policy programs`), add a spec in bash-policy.toml, "
                 "or leave plan mode")
        return
    if spec.denied is not None:
        ctx.deny("BP300", program.span, f"`{name}` {spec.denied.why}",
                 spec.denied.fix or _DEFAULT_FIX[spec.denied.category], spec.denied.category)
        return
    evaluate(spec, words, 1, ctx, trailing_unknown)


def evaluate(spec: CommandSpec, words: tuple[Word, ...], start: int, ctx: Context,
             trailing_unknown: str | None = None) -> None:
    """Read `words[start:]` with `spec`'s option grammar, then judge it."""
    for name, (values, effect) in spec.requires_env.items():
        if ctx.assignments.get(name) not in values:
            ctx.deny("BP304", words[start - 1].span, f"`{spec.display}` {effect.why}",
                     effect.fix or f"prefix the command with {name}={values[0]}", effect.category)
    inv = Invocation(spec, words)
    i = start
    n = len(words)
    options_done = False
    while i < n:
        word = words[i]
        i += 1
        value = word.value
        if value is None:
            if not word.pathname_only:
                ctx.deny_word(word)
            elif spec.subcommands and not inv.positionals:
                ctx.deny("BP405", word.span, f"`{spec.display}` needs a literal subcommand",
                         "write the subcommand literally")
            elif options_done or word.cannot_start_with_dash:
                inv.positionals.append(word)
            elif GLOB in {e.kind for e in word.expansions}:
                ctx.deny("BP203", word.span,
                         f"`{word.text}` expands to file names, and one starting with `-` "
                         f"would be read by {spec.display} as a flag",
                         _glob_hint(word.text))
            else:
                ctx.deny_word(word)
            if spec.style == "posix" and inv.positionals:
                options_done = True
            continue
        if spec.style == "text" and value not in spec.flags:
            options_done = True  # echo-like: the first word that is not a flag starts the text
        if options_done or value == "-" or not value.startswith("-") or (
                spec.style == "posix" and inv.positionals):
            if spec.subcommands and not inv.positionals and not options_done:
                sub = spec.subcommands.get(value)
                if sub is None:
                    allowed = sorted(name for name, sub in spec.subcommands.items() if sub.denied is None)
                    ctx.deny("BP405", word.span,
                             f"`{spec.display} {value}` is not a read-only subcommand",
                             f"use one of: {', '.join(allowed)}; "
                             "other subcommands need leaving plan mode")
                    return
                if sub.denied is not None:
                    ctx.deny("BP405", word.span, f"`{sub.display}` {sub.denied.why}",
                             sub.denied.fix or _DEFAULT_FIX[sub.denied.category], sub.denied.category)
                    return
                _finish(inv, ctx, trailing_unknown=None, has_sub=True)
                evaluate(sub, words, i, ctx, trailing_unknown)
                return
            inv.positionals.append(word)
            if spec.style == "posix":
                options_done = True
            continue
        if value == "--" and spec.double_dash:
            options_done = True
            inv.after_double_dash = True
            continue
        if spec.style == "single" or value.startswith("--"):
            i = _long_option(spec, words, i, word, inv, ctx)
        else:
            i = _short_cluster(spec, words, i, word, inv, ctx)
    _finish(inv, ctx, trailing_unknown)


def _glob_hint(text: str) -> str:
    """How to keep a glob from becoming flags: quote a flag's pattern, anchor an operand's."""
    name, eq, pattern = text.partition("=")
    if text.startswith("-") and eq and "'" not in pattern:
        return f"quote the pattern so the program matches it: `{name}='{pattern}'`"
    return f"quote it for the program to match, write it as ./{text}, or put it after `--`"


def _finish(inv: Invocation, ctx: Context, trailing_unknown: str | None,
            has_sub: bool = False) -> None:
    spec = inv.spec
    if not has_sub:
        _check_positionals(inv, ctx, trailing_unknown)
    if spec.hook:
        rules.get(spec.hook)(inv, ctx)


def _with_double_dash(inv: Invocation) -> str:
    """The inner command's text with `--` before its first operand (or at its end)."""
    texts = [w.text for w in inv.words]
    at = inv.words.index(inv.positionals[0]) if inv.positionals else len(texts)
    return " ".join(texts[:at] + ["--"] + texts[at:])


def _check_positionals(inv: Invocation, ctx: Context, trailing_unknown: str | None) -> None:
    spec, pos = inv.spec, inv.positionals
    role = spec.positionals.role
    if role == "command":
        skip = spec.positionals.skip
        if len(pos) > skip:
            inner = pos[skip:]
            if any(w.value is None for w in inner[:1]):
                ctx.deny("BP302", inner[0].span, "the inner program name is not literal",
                         "name the program literally")
                return
            start = inv.words.index(inner[0])
            appender = spec.display if spec.positionals.appends else None
            check_argv(inv.words[start:], ctx, trailing_unknown or appender)
        elif trailing_unknown:  # `xargs nice`: the appended operands would be the command
            ctx.deny("BP404", inv.words[0].span,
                     f"`{spec.display}` would run a command named by standard input",
                     f"name the command after {spec.display}, with its operands after `--`")
        return
    if trailing_unknown and not (role == "read" and inv.after_double_dash
                                 and spec.positionals.max is None):
        anchor = inv.words[0].span
        ctx.deny("BP404", anchor,
                 f"`{spec.display}` gets extra operands from standard input, which could be read as flags",
                 f"put `--` before the operands of {spec.display}: "
                 f"`{trailing_unknown} {_with_double_dash(inv)}`")
    if role == "none" and pos:
        ctx.deny("BP406", pos[0].span, f"`{spec.display}` takes no operands here",
                 f"drop `{pos[0].text}`")
        return
    limit = spec.positionals.max
    if limit is not None:
        # A glob may expand to any number of operands; a tilde is always one.
        expanding = [w for w in pos if w.value is None and any(e.kind == GLOB for e in w.expansions)]
        if len(pos) > limit or expanding:
            culprit = expanding[0] if expanding else pos[limit]
            over = spec.positionals.over_max
            if over is not None:
                ctx.deny("BP406", culprit.span, f"`{spec.display}` {over.why}",
                         over.fix or _DEFAULT_FIX[over.category], over.category)
            elif expanding:
                ctx.deny("BP203", culprit.span,
                         f"`{culprit.text}` may expand to more operands than `{spec.display}` takes "
                         f"({limit})", f"quote it so it stays one word: `'{culprit.text}'`")
            else:
                ctx.deny("BP406", culprit.span,
                         f"`{spec.display}` takes at most {limit} operand{'s' if limit != 1 else ''}",
                         f"drop `{culprit.text}`")


def _flag_denial(spec: CommandSpec, flag: Flag, written: str, word: Word, ctx: Context) -> None:
    effect = flag.denied
    ctx.deny("BP400", word.span, f"`{spec.display} {written}` {effect.why}",
             effect.fix or _DEFAULT_FIX[effect.category], effect.category)


def _take_value(spec, flag, words, i, word, written, ctx) -> tuple[int, str | None, bool]:
    """Consume the separate value word of `flag`; return (next index, value, ok)."""
    if i >= len(words):
        ctx.deny("BP403", word.span, f"`{spec.display} {written}` needs a value",
                 f"give it one: {written} {flag.metavar or 'VALUE'}")
        return i, None, False
    value_word = words[i]
    if value_word.value is None:
        if value_word.pathname_only:
            ctx.deny("BP203", value_word.span,
                     f"`{value_word.text}` as the value of {written} expands to file names; "
                     "the first becomes the value and the rest become operands",
                     f"quote it: {written} '{value_word.text}'")
        else:
            ctx.deny_word(value_word, f"as the value of {written}")
        return i + 1, None, False
    return i + 1, value_word.value, True


def _check_value(spec, flag, written, value, word, ctx) -> bool:
    if flag.choices is not None and value not in flag.choices:
        ctx.deny("BP403", word.span,
                 f"`{spec.display} {written}` does not allow the value `{value}`",
                 f"use one of: {', '.join(sorted(flag.choices))}")
        return False
    return True


def _long_option(spec, words, i, word, inv, ctx) -> int:
    text = word.value
    name, eq, attached = text.partition("=")
    flag = spec.flags.get(name)
    if flag is None and spec.style == "single" and text in spec.flags:
        flag, name, eq, attached = spec.flags[text], text, "", ""
    if flag is None:
        _unknown_flag(spec, name, word, ctx)
        return i
    if flag.denied is not None:
        _flag_denial(spec, flag, name, word, ctx)
        return i + (1 if flag.value == "required" and not eq and i < len(words) else 0)
    if flag.value == "none":
        if eq:
            ctx.deny("BP403", word.span, f"`{spec.display} {name}` takes no value",
                     f"write `{name}` alone")
            return i
        inv.flags.append((flag, None, word))
        return i
    return _flag_with_value(spec, flag, name, attached if eq else None, words, i, word, inv, ctx)


def _flag_with_value(spec, flag, name, attached, words, i, word, inv, ctx) -> int:
    """Record a value-taking flag: its attached value, none (optional), or the next word."""
    if attached is not None:
        value = attached
    elif flag.value == "optional":
        inv.flags.append((flag, None, word))
        return i
    else:
        i, value, ok = _take_value(spec, flag, words, i, word, name, ctx)
        if not ok:
            return i
    if _check_value(spec, flag, name, value, word, ctx):
        inv.flags.append((flag, value, word))
    return i


def _short_cluster(spec, words, i, word, inv, ctx) -> int:
    text = word.value
    if spec.numeric_flag and text[1:].isdigit():
        inv.flags.append((Flag(("-NUM",), "none"), text[1:], word))
        return i
    k = 1
    while k < len(text):
        name = "-" + text[k]
        flag = spec.flags.get(name)
        if flag is None:
            _unknown_flag(spec, name, word, ctx, cluster=text if len(text) > 2 else None)
            return i
        if flag.denied is not None:
            _flag_denial(spec, flag, name if len(text) == 2 else f"{name} (in {text})", word, ctx)
            return i + (1 if flag.value == "required" and k + 1 == len(text) else 0)
        if flag.value == "none":
            inv.flags.append((flag, None, word))
            k += 1
            continue
        return _flag_with_value(spec, flag, name, text[k + 1:] or None, words, i, word, inv, ctx)
    return i


def _unknown_flag(spec, name, word, ctx, cluster: str | None = None) -> None:
    if name.startswith("--") and len(name) > 2:
        matches = sorted({n for n in spec.flags if n.startswith(name) and n != name})
        if matches:
            denied = [m for m in matches if spec.flags[m].denied is not None]
            extra = f"; `{denied[0]}` is denied: {spec.flags[denied[0]].denied.why}" if denied else ""
            ctx.deny("BP402", word.span,
                     f"`{name}` abbreviates {', '.join(f'`{m}`' for m in matches)}{extra}",
                     f"write the option in full" + (f": {matches[0]}" if len(matches) == 1 and not denied else ""),
                     spec.flags[denied[0]].denied.category if denied else None)
            return
    where = f" (in `{cluster}`)" if cluster else ""
    ctx.deny("BP401", word.span,
             f"`{name}`{where} is not an allowed flag of `{spec.display}`",
             f"see `bash-policy programs {spec.path[0]}` for the allowed flags; if `{name}` only "
             "shapes output, add it to the spec in bash-policy.toml")
