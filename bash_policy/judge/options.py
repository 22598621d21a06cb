"""The argv reader: a program's words read as its spec's option grammar reads them.

`ArgvReader` reads the words as the program does (getopt_long or git's
parse-options: clusters, attached and separate values, `--`, permutation or
the POSIX stop at the first operand, subcommands, a program's obsolete
first-word syntax), denies the flags its spec denies or does not know and
the values it does not allow, then has what it read judged
(judge/operands.py) and runs the spec's rules.
"""

from __future__ import annotations

import re

from ..read.model import FOUND_PATHS, GLOB, Expansion, Span, Word
from ..records import dataclass
from . import fixes, operands, rules, shapes
from .argv import NeedsEnvironment
from .codes import Code, Effect
from .context import Appended, Context, FlagUse, Invocation
from .expansions import EXPANSION
from .operands import (
    GlobMayBeFlag,
    ObsoleteFormGlob,
    SplitMayBeFlag,
    StartsFromFile,
    WordMayBeFlag,
    glob_hint,
    quote_hint,
)
from .problems import FromReason, Problem
from .rules import engine_rule
from .spec import CommandSpec, Flag, Reason, abbreviated
from .verdict import Fix

SUBCOMMAND = engine_rule("subcommand", """Subcommands that are not read-only, or missing and unknown ones.
    `git push`, `gh pr merge` and the like change state.""",
    codes=[Code.BP405], deny=["git push"], allow=["git status"])


FLAGS = engine_rule("flags", """Flags that are denied, unknown, abbreviated, or given a wrong value.
    Read-only programs have flags that run programs or write files, and accept
    them in other spellings; only flags checked against the manual pass.""",
    codes=[Code.BP400, Code.BP401, Code.BP402, Code.BP403],
    deny=["rg --pre cat x", "rg --frob x", "sort --out=f x", "rg --color=sometimes x",
          'git log --format="$F"'],
    allow=["rg -n x", 'git log --author="$USER"'])


MODES = engine_rule("modes", """Options that select different modes where the program refuses them together.
    A spec's `modes` say which options select what the program does and how it
    combines several (program rules judge the mode that results: `xz -t -z f`
    compresses f, since xz obeys the last); where the program refuses two, a
    version that took one instead would do what was not judged.""",
    codes=[Code.BP400], deny=["git cat-file -t -p HEAD", "git branch --list --show-current"],
    allow=["git cat-file -t HEAD", "git branch --show-current"])


_NUMBER = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class SubcommandNotLiteral(Problem):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{program}` needs a literal subcommand"
    hint_format = "write the subcommand literally"
    program: str


@dataclass(frozen=True)
class UnknownSubcommand(Problem):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{program} {name}` is not a read-only subcommand"
    hint_format = "use one of: {allowed}; other subcommands need leaving plan mode"
    program: str
    name: str
    allowed: str


@dataclass(frozen=True)
class DeniedSubcommand(FromReason):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{subcommand}` {reason.why}"
    subcommand: str


@dataclass(frozen=True)
class SubcommandMissing(Problem):
    code = Code.BP405
    rule = SUBCOMMAND
    message_format = "`{program}` needs a subcommand"
    hint_format = "use one of: {allowed}"
    program: str
    allowed: str


@dataclass(frozen=True)
class GlobAsValue(Problem):
    code = Code.BP203
    rule = EXPANSION
    message_format = "`{word.text}` expands to file names, which become the value of {name} and further words"
    word: Word
    name: str

    def hint(self) -> str:
        return glob_hint(self.word.text)


@dataclass(frozen=True)
class ValueMayBeEmpty(Problem):
    code = Code.BP201
    rule = EXPANSION
    message_format = ("`{word.text}`: the value attached to {name} may expand to nothing, and then {program} "
                      "takes the next word as the value of {name}, and reads the words after it differently")
    hint_format = "write the value literally, or give it as a word of its own: {name} \"VALUE\""
    word: Word
    name: str
    program: str


@dataclass(frozen=True)
class GlobAsNextValue(Problem):
    code = Code.BP203
    rule = EXPANSION
    message_format = ("`{word.text}` as the value of {name} expands to file names; the first becomes the "
                      "value and the rest become operands")
    hint_format = "quote it: {name} '{word.text}'"
    word: Word
    name: str


@dataclass(frozen=True)
class ComputedValueChecked(Problem):
    code = Code.BP403
    rule = FLAGS
    hint_format = "write the value of {name} literally"
    program: str
    name: str
    choices: bool  # the flag allows some values only; else a rule reads its value

    def message(self) -> str:
        which = "only some values are allowed" if self.choices else "its value is checked"
        return f"the value of `{self.program} {self.name}` is computed at run time, and {which}"


@dataclass(frozen=True)
class TakesNoValue(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = "`{program} {name}` takes no value"
    hint_format = "write `{name}` alone"
    program: str
    name: str


@dataclass(frozen=True)
class InnerCommandMissing(Problem):
    code = Code.BP403
    rule = FLAGS
    hint_format = "write {name} COMMAND {{}} \\;"
    program: str
    name: str
    ends: tuple[str, ...]

    def message(self) -> str:
        ends = ", ".join(f"`{end}`" for end in self.ends)
        return f"`{self.program} {self.name}` needs a command and one of {ends} after it"


def _attached(name: str, metavar: str) -> str:
    """`--name=VALUE` or `-nVALUE`: a value written attached to its flag."""
    return f"{name}{'=' if name.startswith('--') else ''}{metavar or 'VALUE'}"


@dataclass(frozen=True)
class ComputedOptionalValue(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = ("`{word.text}` is computed, so it may be the value of `{program} {name}` or, "
                      "starting with `-`, an option of its own")
    word: Word
    program: str
    name: str
    metavar: str

    def hint(self) -> str:
        return f"write {_attached(self.name, self.metavar)} attached"


@dataclass(frozen=True)
class OnlyAttached(Problem):
    code = Code.BP403
    rule = FLAGS
    program: str
    name: str
    metavar: str

    def message(self) -> str:
        return (f"`{self.program} {self.name}` takes its value only attached "
                f"(`{_attached(self.name, self.metavar)}`); the next word is not its value")

    def hint(self) -> str:
        return f"write {_attached(self.name, self.metavar)}"


@dataclass(frozen=True)
class ValueNotAChoice(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = "`{program} {name}` does not allow the value `{value}`"
    hint_format = "use one of: {choices}"
    program: str
    name: str
    value: str | None
    choices: str


@dataclass(frozen=True)
class ValueMissing(Problem):
    code = Code.BP403
    rule = FLAGS
    message_format = "`{program} {name}` needs a value"
    hint_format = "give it one: {name} {metavar}"
    program: str
    name: str
    metavar: str


@dataclass(frozen=True)
class DeniedFlag(FromReason):
    code = Code.BP400
    rule = FLAGS
    message_format = "`{program} {shown}` {reason.why}"
    program: str
    shown: str  # the flag as written, with its cluster: `-i (in -ni)`


@dataclass(frozen=True)
class AbbreviatedFlag(Problem):
    code = Code.BP402
    rule = FLAGS
    name: str
    matches: tuple[str, ...]
    denied: str | None  # the first denied flag it abbreviates
    reason: Reason | None

    def message(self) -> str:
        extra = f"; `{self.denied}` is denied: {self.reason.why}" if self.reason else ""
        return f"`{self.name}` abbreviates {', '.join(f'`{m}`' for m in self.matches)}{extra}"

    def hint(self) -> str:
        one = len(self.matches) == 1 and not self.denied
        return "write the option in full" + (f": {self.matches[0]}" if one else "")

    def consequence(self) -> Effect | None:
        return self.reason.effect if self.reason else None


@dataclass(frozen=True)
class UnknownFlag(Problem):
    code = Code.BP401
    rule = FLAGS
    hint_format = ("see `bash-policy programs {top}` for the allowed flags; if `{name}` only shapes output, "
                   "add it to the spec in bash-policy.toml")
    name: str
    cluster: str | None
    program: str
    top: str

    def message(self) -> str:
        where = f" (in `{self.cluster}`)" if self.cluster else ""
        return f"`{self.name}`{where} is not an allowed flag of `{self.program}`"


@dataclass(frozen=True)
class ModesRefused(Problem):
    code = Code.BP400
    rule = MODES
    message_format = "`{program}` {first} and {other} select different modes, which {top} refuses together"
    hint_format = "give one of them: `{program} {first}` or `{program} {other}`"
    program: str
    first: str
    other: str
    top: str


class ArgvReader:
    """Reads `words[start:]` with one spec's option grammar, as the program does
    (getopt_long or git's parse-options: clusters, attached and separate values,
    `--`, permutation or the POSIX stop at the first operand), then judges it.
    A subcommand hands the rest of the words to a reader of its own."""

    def __init__(self, spec: CommandSpec, words: tuple[Word, ...], start: int, ctx: Context,
                 appended: Appended | None):
        self.spec = spec
        self.words = words
        self.named_by = words[start - 1]  # the program or subcommand word
        self.i = start
        self.ctx = ctx
        self.appended = appended
        self.inv = Invocation(spec, words)
        self.options_done = False
        self.double_dash: Fix | None = None  # the `--` that fixes this command's operands, once found

    def read(self) -> None:
        spec, ctx = self.spec, self.ctx
        for name, (required, reason) in spec.requires_env.items():
            if ctx.assignments.get(name) not in required:
                ctx.deny(NeedsEnvironment(reason, spec.display, name, required[0]), self.words[self.i - 1].span)
        if spec.obsolete is not None and self.i < len(self.words):
            self.obsolete_form()
        while self.i < len(self.words):
            word = self.words[self.i]
            self.i += 1
            if word.value is None:
                self.expanding_word(word)
            elif self.is_operand(word.value):
                if spec.subcommands and not self.inv.positionals and not self.options_done:
                    self.subcommand(word, word.value)
                    return
                self.inv.positionals.append(word)
                if not spec.permute:
                    self.options_done = True
            elif word.value == "--" and spec.double_dash and not (spec.subcommands
                                                                 and not self.inv.positionals):
                # Before a subcommand `--` means something else to each program
                # (git rejects it); it falls through to be denied as a flag.
                self.options_done = True
                self.inv.after_double_dash = True
            elif spec.style == "single" or word.value.startswith("--"):
                self.long_option(word, word.value)
            else:
                self.short_cluster(word, word.value)
        self.finish(has_sub=False)

    def is_operand(self, value: str) -> bool:
        spec = self.spec
        if spec.style == "text" and value not in spec.flags:
            self.options_done = True  # echo-like: the first word that is not a flag starts the text
        starts = ("-", "+") if spec.plus_options else ("-",)
        return self.options_done or value in ("-", "+") or not value.startswith(starts)

    def expanding_word(self, word: Word) -> None:
        """A word whose value bash computes: allowed where no value it can take
        does harm (judge/shapes.py) — after `--`, or one word that cannot start
        with `-`, or any word for a program whose every flag is harmless."""
        spec, inv, ctx = self.spec, self.inv, self.ctx
        if spec.subcommands and not inv.positionals and not self.options_done:
            if word.pathname_only:
                ctx.deny(SubcommandNotLiteral(spec.display), word.span)
            else:
                ctx.deny_word(word)
            return
        if not self.options_done and self.flag_with_unknown_value(word):
            return
        if not shapes.unknown_kinds_allowed(word):
            ctx.deny_word(word)
            return
        single = shapes.single(word, ctx.source, ctx.variables)
        safe = shapes.dash_safe(word, ctx.source, ctx.variables)
        sign = "`-`"
        if spec.plus_options:
            safe, sign = safe and shapes.plus_safe(word, ctx.source), "`-` or `+`"
        if not word.pathname_only and any(not rules.get(h).unknown_operands for h in spec.hooks):
            ctx.deny_word(word)  # a rule of the program reads its operands: they must be known
        elif (self.options_done or safe or (spec.harmless and spec.positionals.role == "read")
              or (spec.style == "text" and not spec.flags)):  # test: every word is its expression
            inv.positionals.append(word)
            if not (self.options_done or safe):
                inv.option_like.append(word)
        elif GLOB in {e.kind for e in word.expansions}:
            ctx.deny(GlobMayBeFlag(word, sign, spec.display, fix=self.operand_fix(word) or fixes.dot_slash(word)),
                     word.span)
        elif not single and shapes.dash_safe(shapes.quoted(word), ctx.source, ctx.variables):
            ctx.deny(SplitMayBeFlag(word, sign, spec.display, quote_hint(word, self.rewritten),
                                    fix=self.operand_fix(word)), word.span)
        else:
            ctx.deny(WordMayBeFlag(word, single, sign, spec.display, self.double_dash_hint(word),
                                   fix=self.operand_fix(word)), word.span)
        if not spec.permute and inv.positionals:
            self.options_done = True

    def operand_fix(self, word: Word) -> Fix | None:
        """`--` before the first operand of this command that may become a
        flag; every later one is covered by the same `--`."""
        if self.double_dash is None and self.spec.double_dash:
            at = next(k for k, w in enumerate(self.words) if w is word)
            self.double_dash = fixes.double_dash(self.words, at, ("-", "+") if self.spec.plus_options
                                                 else ("-",))
        return self.double_dash


    def drop_flag(self, word: Word, flag: Flag, with_next: bool) -> Fix | None:
        """Dropping a denied flag (and its separate value), where its spec's
        fix says to (`drop -i and read the edited text on standard output`):
        unsafe, since what the flag did no longer happens.  A flag whose spec
        says something else is a mode of its own (`md5sum -c`, `tar
        --delete`), and dropping it would mean another command."""
        reason = flag.denied
        if reason is None or not any(reason.fix == f"drop {name}" or reason.fix.startswith(f"drop {name} ")
                                     or reason.fix.startswith(f"drop {name};")
                                     for name in ("it", *flag.names)):
            return None
        at = next(k for k, w in enumerate(self.words) if w is word)
        end = self.words[at + 1] if with_next and at + 1 < len(self.words) else word
        return fixes.drop(self.ctx.source, Span(word.span.start, end.span.end))

    def double_dash_hint(self, word: Word) -> str:
        """The command with `--` before `word`, when no flag follows it.  A
        variable is quoted (one value); a command substitution is not (it is
        usually a list of files)."""
        words = self.words
        at = next(k for k, w in enumerate(words) if w is word)
        if any(w.value is None or w.value.startswith("-") for w in words[at + 1:]):
            return "put it after `--`, or give it a fixed prefix such as `./`"
        listing = word.text.startswith(("$(", "`"))
        text = word.text if word.text.startswith('"') or listing else f'"{word.text}"'
        return f"put it after `--`: `{self.rewritten(word, '-- ' + text)}`"

    def rewritten(self, word: Word, replacement: str) -> str:
        """The command's words with `word` replaced."""
        return " ".join(replacement if w is word else w.text for w in self.words)

    def flag_with_unknown_value(self, word: Word) -> bool:
        """`--author="$USER"` or `-n"$N"`: a known flag whose attached value is
        computed at run time.  True when the word was judged here."""
        prefix = word.prefix
        if prefix.startswith("--"):
            name, eq, _ = prefix.partition("=")
            if not eq:
                return False
        elif prefix[:1] == "-" or (prefix[:1] == "+" and self.spec.plus_options):
            if len(prefix) != 2:
                return False
            name = prefix
        else:
            return False
        flag = self.spec.flags.get(name)
        if flag is None or flag.denied is not None or flag.value == "none":
            return False
        self.unknown_value(flag, name, word, word)
        return True

    def unknown_value(self, flag: Flag, name: str, word: Word, holder: Word) -> None:
        """A value computed at run time: fine for a flag whose values all only
        shape output (no choices, not read by the program's rule), when it
        stays one word."""
        ctx = self.ctx
        read = any(rule.reads is None or bool(rule.reads & set(flag.names))
                   for rule in map(rules.get, self.spec.hooks))
        kinds = {e.kind for e in holder.expansions}
        if kinds == {GLOB} and holder is word and word.prefix.startswith("--") and not read \
                and _shapes_output(flag):
            # `--include=*.py`: every word the glob gives starts with `--include=`, so
            # each is this flag again, with a value that only shapes output.  Not
            # `-g*`: a file named `-g` would make the next word its value, and a
            # `--` there would free the words after it to be flags.
            self.record(flag, name, None, word, holder, known=False)
        elif GLOB in kinds:
            flag_text = holder.prefix[:len(name) + (holder.prefix[len(name):len(name) + 1] == "=")]
            ctx.deny(GlobAsValue(holder, name, fix=fixes.quote_pattern(holder, flag_text if holder is word else "",
                                                                       flag.metavar)), holder.span)
        elif not shapes.unknown_kinds_allowed(holder) or not shapes.single(holder, ctx.source,
                                                                           ctx.variables):
            ctx.deny_word(holder, f"as the value of {name}")
        elif flag.choices is not None or read:
            ctx.deny(ComputedValueChecked(self.spec.display, name, bool(flag.choices)), holder.span)
        elif (holder is word and not word.prefix.startswith("--") and flag.value not in ("optional", "attached")
              and self.i < len(self.words) and shapes.may_be_empty_after_prefix(word)):
            # Empty, `-g` takes the next word as its value: `rg -g"$(echo)" -- --pre=sh x`
            # gave `--` to -g and left --pre=sh a flag.
            ctx.deny(ValueMayBeEmpty(word, name, self.spec.display), word.span)
        else:
            self.record(flag, name, None, word, holder, known=False)

    def obsolete_form(self) -> None:
        """The program's obsolete first-argument syntax (`tail -cf FILE` is
        `tail -c 10 -f FILE`): the letters it names are judged as their flags.
        Where the form depends on operands the checker cannot count (a glob),
        it is taken to apply."""
        form, word = self.spec.obsolete, self.words[self.i]
        if form is None:
            return
        if word.value is None:
            if word.pathname_only and (not word.prefix or word.prefix[0] in form.starts):
                self.i += 1
                self.ctx.deny(ObsoleteFormGlob(word, self.spec.display), word.span)
            return
        match = form.form.fullmatch(word.value)
        if match is None:
            return
        if form.max_operands is not None:
            rest = list(self.words[self.i + 1:])
            if rest and rest[0].value == "--":
                rest.pop(0)
            known = all(w.value is not None for w in rest)
            dashed = any(w.value is not None and w.value.startswith("-") and w.value != "-"
                         for w in rest)
            if known and (len(rest) > form.max_operands or dashed):
                return
        self.i += 1
        for group, name in form.flags.items():
            if match[group]:
                flag = self.spec.flags[name]
                if flag.denied is not None:
                    alone = len(word.value) == 2 and word.text == word.value  # `-f`, nothing else
                    self.denied_flag(flag.denied, f"{name} (in {word.value})", word, consumes_next=False,
                                     fix=self.drop_flag(word, flag, False) if alone else None)
                else:
                    self.record(flag, name, None, word, None)

    def subcommand(self, word: Word, value: str) -> None:
        spec = self.spec
        sub = spec.subcommands.get(spec.sub_aliases.get(value, value))
        if sub is None:
            allowed = sorted(name for name, s in spec.subcommands.items() if s.denied is None)
            self.ctx.deny(UnknownSubcommand(spec.display, value, ", ".join(allowed)), word.span)
            return
        if sub.denied is not None:
            self.ctx.deny(DeniedSubcommand(sub.denied, sub.display), word.span)
            return
        self.finish(has_sub=True)
        ArgvReader(sub, self.words, self.i, self.ctx, self.appended).read()

    # -- options -------------------------------------------------------------
    def long_option(self, word: Word, text: str) -> None:
        spec = self.spec
        name, eq, attached = text.partition("=")
        if spec.abbreviations:
            name = abbreviated(spec, name) or name
        flag = spec.flags.get(name)
        if flag is None and spec.style == "single" and text in spec.flags:
            flag, name, eq, attached = spec.flags[text], text, "", ""
        if flag is None:
            self.unknown_flag(name, word)
            return
        if flag.denied is not None:
            consumes = flag.value in ("required", "lastarg", "unless_flag") and not eq
            self.denied_flag(flag.denied, name, word, consumes_next=consumes,
                             fix=self.drop_flag(word, flag, consumes))
            return
        if flag.value == "none":
            if eq:
                self.ctx.deny(TakesNoValue(spec.display, name), word.span)
                return
            self.record(flag, name, None, word, None)
            if flag.runs:
                self.inner_command(flag, name, word)
            return
        self.with_value(flag, name, word, attached if eq else None)

    def inner_command(self, flag: Flag, name: str, word: Word) -> None:
        """`find -exec CMD ;`: the words up to the terminator are a command the
        program runs, checked like any other; each `{}` in it is a path the
        program fills in, which never starts with `-` (judge/shapes.py)."""
        words = self.words
        end = next((k for k in range(self.i, len(words)) if words[k].value in flag.runs), None)
        if end is None or end == self.i:
            self.ctx.deny(InnerCommandMissing(self.spec.display, name, flag.runs), word.span)
            self.i = len(words)
            return
        flags = self.spec.flags
        supplied = next((w for w in words if w.value is not None and w.value in flags
                         and flags[w.value].operands_from), None)
        if supplied is not None:  # find -files0-from LIST: starting points, so paths, may start with `-`
            self.ctx.deny(StartsFromFile(self.spec.display, name, supplied.value), word.span)
            self.i = end + 1
            return
        many = words[end].value == "+"
        inner = tuple(shapes.found_path(w, many) for w in words[self.i:end])
        self.i = end + 1
        ctx = self.ctx
        outer, ctx.elsewhere = ctx.elsewhere, ctx.elsewhere or flag.runs_elsewhere
        try:
            ctx.check_inner(inner, repeated=True)
        finally:
            ctx.elsewhere = outer

    def short_cluster(self, word: Word, text: str) -> None:
        """`-abc`, or lsof's `+abc`: each letter is a flag with the cluster's
        sign, and a value-taking one takes the rest of the word or the next."""
        spec = self.spec
        if spec.numeric_flag and text[0] == "-" and _NUMBER.fullmatch(text, 1):
            self.record(Flag(("-NUM",), "none"), text, text[1:], word, word)
            return
        for k in range(1, len(text)):
            name = text[0] + text[k]
            flag = spec.flags.get(name)
            if flag is None:
                self.unknown_flag(name, word, cluster=text if len(text) > 2 else None)
                return
            if flag.denied is not None:
                shown = name if len(text) == 2 else f"{name} (in {text})"
                consumes = flag.value in ("required", "lastarg", "unless_flag") and k + 1 == len(text)
                fix = None
                if k == 1 and (len(text) == 2 or flag.value == "required"):  # the flag and its value
                    fix = self.drop_flag(word, flag, consumes)
                self.denied_flag(flag.denied, shown, word, consumes_next=consumes, fix=fix)
                return
            if flag.value == "none":
                self.record(flag, name, None, word, None)
                continue
            self.with_value(flag, name, word, text[k + 1:] or None)
            return

    def with_value(self, flag: Flag, name: str, word: Word, attached: str | None) -> None:
        """A value-taking flag: its attached value, none (optional), or the next word."""
        value: str | None
        holder: Word | None
        if attached is not None:
            value, holder = attached, word
        elif flag.value == "optional" or (flag.value in ("lastarg", "unless_flag") and self.i >= len(self.words)) \
                or (flag.value == "unless_flag" and (self.words[self.i].value or "").startswith("-")):
            self.record(flag, name, None, word, None)
            return
        elif flag.value == "unless_flag" and self.words[self.i].value is None:
            self.ctx.deny(ComputedOptionalValue(self.words[self.i], self.spec.display, name, flag.metavar),
                          self.words[self.i].span)
            return
        elif flag.value == "attached":
            self.ctx.deny(OnlyAttached(self.spec.display, name, flag.metavar), word.span)
            return
        else:
            holder = self.take_value(flag, name, word)
            if holder is None:
                return
            value = holder.value
        if flag.choices is not None and value not in flag.choices:
            self.ctx.deny(ValueNotAChoice(self.spec.display, name, value, ", ".join(sorted(flag.choices))),
                          word.span)
            return
        self.record(flag, name, value, word, holder)

    def take_value(self, flag: Flag, name: str, word: Word) -> Word | None:
        """Consume the separate value word of `flag`, or deny and return None."""
        if self.i >= len(self.words):
            self.ctx.deny(ValueMissing(self.spec.display, name, flag.metavar or "VALUE"), word.span)
            return None
        holder = self.words[self.i]
        self.i += 1
        if holder.value is None:
            if GLOB in {e.kind for e in holder.expansions}:
                self.ctx.deny(GlobAsNextValue(holder, name, fix=fixes.quote_pattern(holder, "", flag.metavar)),
                              holder.span)
            else:
                self.unknown_value(flag, name, word, holder)
            return None
        return holder

    def record(self, flag: Flag, name: str, value: str | None, word: Word,
               holder: Word | None, known: bool = True) -> None:
        index = next(k for k, w in enumerate(self.words) if w is word)
        self.inv.flags.append(FlagUse(flag, name, value, word, holder, index, known))

    def denied_flag(self, reason: Reason, shown: str, word: Word, consumes_next: bool,
                    fix: Fix | None = None) -> None:
        self.ctx.deny(DeniedFlag(reason, self.spec.display, shown, fix=fix), word.span)
        if consumes_next and self.i < len(self.words):
            self.i += 1

    def unknown_flag(self, name: str, word: Word, cluster: str | None = None) -> None:
        spec = self.spec
        if name.startswith("--") and len(name) > 2:
            matches = sorted({n for n in spec.flags if n.startswith(name) and n != name})
            if matches:
                denied = [m for m in matches if spec.flags[m].denied is not None]
                reason = spec.flags[denied[0]].denied if denied else None
                self.ctx.deny(AbbreviatedFlag(name, tuple(matches), denied[0] if denied else None, reason),
                              word.span)
                return
        self.ctx.deny(UnknownFlag(name, cluster, spec.display, spec.path[0]), word.span)

    # -- judging what was read (judge/operands.py) ------------------------------
    def finish(self, has_sub: bool) -> None:
        spec = self.spec
        if not has_sub and spec.subcommands and spec.subcommand_required:
            allowed = sorted(name for name, s in spec.subcommands.items() if s.denied is None)
            self.ctx.deny(SubcommandMissing(spec.display, ", ".join(allowed)), self.named_by.span)
        if not has_sub:
            self.check_modes()
            operands.check_positionals(self)
            use = operands.stdin_use(self)
            if use is not None:
                self.ctx.reads_stdin = True
                self.ctx.names_stdin = self.ctx.names_stdin or use == "named"
            operands.check_special_files(self)
        wrapper = self.appended.wrapper if self.appended is not None else None
        appended = (wrapper is not None and not has_sub and bool(self.spec.hooks)
                    and self.spec.positionals.role == "read")
        if appended:
            # The program's rules see the operands xargs appends as one operand they
            # cannot know: `echo f | xargs gzip --` replaced f (red team RT-I).
            name = self.inv.words[0]
            self.inv.positionals.append(Word(f"<operands {wrapper} appends>", name.span, None,
                                             (Expansion(FOUND_PATHS, name.span),)))
        try:
            for hook in self.spec.hooks:
                self.ctx.run_rule(hook, self.inv)
        finally:
            if appended:
                self.inv.positionals.pop()

    def check_modes(self) -> None:
        """Two different modes where the program refuses them (`combine = "error"`):
        the run would fail, and a version that took one of them instead would
        do what the checker did not judge."""
        modes = self.spec.modes
        if modes is None or modes.combine != "error":
            return
        given = self.inv.given_modes()
        other = next((use for use in given if use.flag is not given[0].flag), None)
        if other is not None:
            self.ctx.deny(ModesRefused(self.spec.display, given[0].name, other.name, self.spec.path[0]),
                          other.word.span)

    def opened(self) -> list[Word]:
        """The operands the program may open as files (judge/operands.py)."""
        return operands.opened(self)


def _shapes_output(flag: Flag) -> bool:
    """A flag whose value, whatever it is, names no file, no command and no
    choice: its value only shapes what the program prints."""
    return (flag.choices is None and not flag.reads and not flag.reads_stdin and not flag.runs
            and not flag.operands_from and not flag.separator)
