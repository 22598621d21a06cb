"""One program's argv: who the program is, and what its spec's option grammar reads.

`check_argv` judges the program word (whitelisted, trusted path, literal),
its response files and project files; `ArgvReader` then reads the words as
the program does (getopt_long or git's parse-options: clusters, attached
and separate values, `--`, permutation or the POSIX stop at the first
operand, subcommands) and judges what it read: flags, modes, operands, the
files they name; then the spec's rules run.
"""

from __future__ import annotations

import os
import re

from ..read.model import (
    GLOB,
    Span,
    Word,
)
from . import fixes, rules, shapes
from .codes import Code, Effect
from .context import Appended, Context, FlagUse, Invocation
from .expansions import EXPANSION
from .rules import RuleName, engine_rule
from .rules.files import check_around, check_special_operands
from .spec import CommandSpec, Flag, Reason, abbreviated, installed_in
from .special import on_disk, special_in, special_operand_in, stdin_in
from .verdict import SAFE, Edit, Fix

PROGRAM = engine_rule("program", """Programs outside the whitelist, denied whole, named by a path or not literally.
    Only programs whose every allowed use was checked against their manual
    may run, and only the trusted copy of each.""",
    codes=[Code.BP300, Code.BP301, Code.BP302, Code.BP304],
    deny=["vim x", "./rg x", "$EDITOR x", "go version"], allow=["/usr/bin/rg x"])
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
OPERANDS = engine_rule("operands", """Operands a program writes to or acts on, too many, or words that may be flags.
    Some programs take an output file or a new name as a plain operand; a
    file named `--pre=sh` turns an unanchored glob into a flag.""",
    codes=[Code.BP406, Code.BP203, Code.BP404],
    deny=["rg foo *.py", "pwd x", "ls | xargs rg x"], allow=["rg foo ./*.py"])
SPECIAL = engine_rule("special_files", """Files to read under /dev, /proc and /sys, other than a few harmless ones.
    Reading a device or kernel file may never end (`cat /dev/zero`, `/proc/kmsg`)
    or reach another file (`/proc/self/root/dev/zero`); only /dev/null, the
    standard streams and a short list of /proc files may be read.  This applies
    to operands that may be files and to flags whose value names a file to read.""",
    codes=[Code.BP406, Code.BP403],
    deny=["cat /dev/zero", "wc -c /proc/self/root/dev/zero", "grep -f /dev/zero x"],
    allow=["cat /dev/null", "cat /proc/cpuinfo", "ls /dev", "grep -e /dev/zero x"])

_NUMBER = re.compile(r"[0-9]+")
_DEFAULT_FIX = {
    Effect.EXEC: "drop it; running other programs needs leaving plan mode",
    Effect.WRITE: "drop it and read the output directly; writing files needs leaving plan mode",
    Effect.NETWORK: "drop it; network calls that change things need leaving plan mode",
    Effect.HANG: "drop it; plan-mode commands must finish on their own",
    Effect.STATE: "drop it; changing state needs leaving plan mode",
    Effect.LEAK: "drop it",
    Effect.INTERACTIVE: "drop it; interactive programs cannot run in plan mode",
}


def check_argv(words: tuple[Word, ...], ctx: Context, appended: Appended | None = None) -> None:
    """Check one program's argv (the program word first).  `appended` names
    the wrapper that appends operands from standard input, if any."""
    program = words[0]
    if program.value is None:
        expansion = program.expansions[0]
        ctx.deny(Code.BP302, program.span,
                 f"the program name `{program.text}` holds {expansion.kind.replace('-', ' ')}",
                 "name the program literally", rule=PROGRAM)
        return
    name = program.value
    if "/" in name:
        directory, _, base = name.rpartition("/")
        own = ctx.policy.spec(base) if base and name.startswith("/") else None
        if not name.startswith("/") or not base or (
                directory not in ctx.policy.trusted_dirs and not (own and installed_in(own, directory))):
            ctx.deny(Code.BP301, program.span,
                     f"`{name}` is a path, not a trusted program"
                     + ("" if name.startswith("/") else " (relative paths run whatever file is there)"),
                     f"call it by its bare name: `{base or name}`", rule=PROGRAM)
            return
        name = base
    spec = ctx.policy.spec(name) if name else None
    if spec is None:
        ctx.deny(Code.BP300, program.span, f"`{name}` is not in the read-only whitelist",
                 "use a whitelisted program (`bash-policy programs`), add a spec in bash-policy.toml, "
                 "or leave plan mode", rule=PROGRAM)
        return
    if spec.denied is not None:
        ctx.deny(Code.BP300, program.span, f"`{name}` {spec.denied.why}",
                 spec.denied.fix or _DEFAULT_FIX[spec.denied.effect], spec.denied.effect, rule=PROGRAM)
        return
    if spec.response_files and _response_file(spec, words, appended, ctx):
        return
    if spec.project_files and _special_project_file(spec, program, ctx):
        return
    ArgvReader(spec, words, 1, ctx, appended).read()


PROJECT_FILES = engine_rule("project_files", """Project files a program reads by itself that are FIFOs or devices.
    cargo reads Cargo.toml, npm package.json, go go.mod in the directory it
    runs in or above it; a committed `Cargo.toml -> /dev/zero` or a FIFO
    from an archive never ends (red team RT3: cargo metadata hung).""",
    codes=[Code.BP603], deny=[], allow=["cargo --version"],
    untestable="needs a directory holding a special project file: tests/test_special_files.py")


def _special_project_file(spec: CommandSpec, program: Word, ctx: Context) -> bool:
    """Deny (True) when a project file in a directory the command may run in,
    or above it, is not a regular file (a link to /dev/stdin reads the script)."""
    for directory in sorted(d for d in ctx.directories() if d is not None):
        while True:
            for name in spec.project_files:
                what = on_disk(os.path.join(directory, name))
                if what is None:
                    continue
                ctx.deny(Code.BP603, program.span,
                         f"`{spec.display}` reads {os.path.join(directory, name)}, which is "
                         f"{'a link to standard input' if what == 'stdin' else what}: reading it "
                         "blocks or never ends", "make it a regular file, or leave plan mode",
                         Effect.HANG, rule=PROJECT_FILES)
                return True
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return False


RESPONSE_FILE = engine_rule("response_file", """Words that are or may be `@FILE` where arguments are read from FILE.
    binutils (strings, readelf), ruff, mypy and 7-Zip read further
    options and file names from FILE, even after `--`: a FIFO or a listed
    /dev/zero never ends, a listed /dev/stdin reads the script, and the
    options are ones the checker never saw.""",
    codes=[Code.BP406], deny=["strings @args", "ruff rule @args", "7z l x.zip @list", "readelf -h *"],
    allow=["strings -n 8 data.bin", "readelf -h src/*.o", "strings ~/x", "7z l x.zip"])


def _response_file(spec: CommandSpec, words: tuple[Word, ...], appended: Appended | None,
                   ctx: Context) -> bool:
    """Deny (True) a word that is or may become `@FILE`: a literal one, or one
    whose start is not a fixed literal or a tilde; operands xargs appends may
    be anything."""
    for word in words[1:]:
        if word.value is not None:
            risky = word.value.startswith("@")
        else:
            risky = not (word.text.startswith("~") or (word.prefix and not word.prefix.startswith("@")))
        if risky:
            ctx.deny(Code.BP406, word.span,
                     f"`{spec.display}` reads options and file names from a word starting with `@`, "
                     f"and `{word.text}` is or may become one",
                     "name the files literally, or with a glob that starts with a directory (`./*.o`)",
                     Effect.HANG, rule=RESPONSE_FILE)
            return True
    if appended is not None:
        ctx.deny(Code.BP406, words[0].span,
                 f"`{spec.display}` reads options and file names from an operand starting with `@`, "
                 f"and {appended.wrapper} appends operands it cannot see", f"run {spec.display} on named files",
                 Effect.HANG, rule=RESPONSE_FILE)
        return True
    return False


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

    def deny(self, code: Code, span: Span, message: str, hint: str,
             effect: Effect | None = None, rule: RuleName = FLAGS, fix: Fix | None = None) -> None:
        self.ctx.deny(code, span, message, hint, effect, rule=rule, fix=fix)

    def read(self) -> None:
        spec, ctx = self.spec, self.ctx
        for name, (required, reason) in spec.requires_env.items():
            if ctx.assignments.get(name) not in required:
                ctx.deny(Code.BP304, self.words[self.i - 1].span, f"`{spec.display}` {reason.why}",
                         reason.fix or f"prefix the command with {name}={required[0]}", reason.effect,
                         rule=PROGRAM)
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
                self.deny(Code.BP405, word.span, f"`{spec.display}` needs a literal subcommand",
                          "write the subcommand literally", rule=SUBCOMMAND)
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
        elif GLOB in {e.kind for e in word.expansions}:
            self.deny(Code.BP203, word.span,
                      f"`{word.text}` expands to file names, and one starting with {sign} "
                      f"would be read by {spec.display} as a flag", _glob_hint(word.text),
                      rule=OPERANDS, fix=self.operand_fix(word) or fixes.dot_slash(word))
        elif not single and shapes.dash_safe(shapes.quoted(word), ctx.source, ctx.variables):
            self.deny(Code.BP404, word.span,
                      f"unquoted, `{word.text}` is split at blanks into words, and one may start "
                      f"with {sign}, which {spec.display} would read as a flag",
                      _quote_hint(word, self.rewritten), rule=OPERANDS, fix=self.operand_fix(word))
        else:
            kind = "is split into words; one" if not single else "is a word that"
            self.deny(Code.BP404, word.span,
                      f"`{word.text}` {kind} may start with {sign}, which {spec.display} would read "
                      "as a flag", self.double_dash_hint(word), rule=OPERANDS,
                      fix=self.operand_fix(word))
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

    def appended_fix(self) -> Fix | None:
        """`--` before the operands a wrapper's command is given (`xargs rg
        foo` -> `xargs rg -- foo`), or after its last word when it has none:
        what the wrapper appends then stays operands."""
        if not self.spec.double_dash:
            return None
        words, pos = self.inv.words, self.inv.positionals
        if pos:
            at = next(k for k, w in enumerate(words) if w is pos[0])
            return fixes.double_dash(words, at, ("-", "+") if self.spec.plus_options else ("-",))
        end = words[-1].span.end
        return Fix((Edit(Span(end, end), " --"),), SAFE)

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
        if GLOB in {e.kind for e in holder.expansions}:
            flag_text = holder.prefix[:len(name) + (holder.prefix[len(name):len(name) + 1] == "=")]
            self.deny(Code.BP203, holder.span,
                      f"`{holder.text}` expands to file names, which become the value of {name} "
                      "and further words", _glob_hint(holder.text), rule=EXPANSION,
                      fix=fixes.quote_pattern(holder, flag_text if holder is word else "",
                                              flag.metavar))
        elif not shapes.unknown_kinds_allowed(holder) or not shapes.single(holder, ctx.source,
                                                                           ctx.variables):
            ctx.deny_word(holder, f"as the value of {name}")
        elif flag.choices is not None or read:
            self.deny(Code.BP403, holder.span,
                      f"the value of `{self.spec.display} {name}` is computed at run time, and "
                      f"{'only some values are allowed' if flag.choices else 'its value is checked'}",
                      f"write the value of {name} literally")
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
                self.deny(Code.BP203, word.span,
                          f"`{word.text}` may expand to a file name that {self.spec.display} reads "
                          "as its obsolete option syntax", _glob_hint(word.text), rule=OPERANDS)
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
            self.deny(Code.BP405, word.span, f"`{spec.display} {value}` is not a read-only subcommand",
                      f"use one of: {', '.join(allowed)}; other subcommands need leaving plan mode",
                      rule=SUBCOMMAND)
            return
        if sub.denied is not None:
            self.deny(Code.BP405, word.span, f"`{sub.display}` {sub.denied.why}",
                      sub.denied.fix or _DEFAULT_FIX[sub.denied.effect], sub.denied.effect,
                      rule=SUBCOMMAND)
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
                self.deny(Code.BP403, word.span, f"`{spec.display} {name}` takes no value",
                          f"write `{name}` alone")
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
            self.deny(Code.BP403, word.span, f"`{self.spec.display} {name}` needs a command and "
                      f"one of {', '.join(f'`{r}`' for r in flag.runs)} after it",
                      f"write {name} COMMAND {{}} \\;")
            self.i = len(words)
            return
        flags = self.spec.flags
        supplied = next((w for w in words if w.value is not None and w.value in flags
                         and flags[w.value].operands_from), None)
        if supplied is not None:  # find -files0-from LIST: starting points, so paths, may start with `-`
            self.deny(Code.BP404, word.span,
                      f"`{self.spec.display} {name}` fills in paths under starting points that "
                      f"`{supplied.value}` reads from a file, where a name may start with `-`",
                      "name the starting points on the command line", rule=OPERANDS)
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
            self.deny(Code.BP403, self.words[self.i].span,
                      f"`{self.words[self.i].text}` is computed, so it may be the value of "
                      f"`{self.spec.display} {name}` or, starting with `-`, an option of its own",
                      f"write {name}{'=' if name.startswith('--') else ''}{flag.metavar or 'VALUE'} attached")
            return
        elif flag.value == "attached":
            self.deny(Code.BP403, word.span,
                      f"`{self.spec.display} {name}` takes its value only attached "
                      f"(`{name}{'=' if name.startswith('--') else ''}{flag.metavar or 'VALUE'}`); "
                      "the next word is not its value",
                      f"write {name}{'=' if name.startswith('--') else ''}{flag.metavar or 'VALUE'}")
            return
        else:
            holder = self.take_value(flag, name, word)
            if holder is None:
                return
            value = holder.value
        if flag.choices is not None and value not in flag.choices:
            self.deny(Code.BP403, word.span,
                      f"`{self.spec.display} {name}` does not allow the value `{value}`",
                      f"use one of: {', '.join(sorted(flag.choices))}")
            return
        self.record(flag, name, value, word, holder)

    def take_value(self, flag: Flag, name: str, word: Word) -> Word | None:
        """Consume the separate value word of `flag`, or deny and return None."""
        if self.i >= len(self.words):
            self.deny(Code.BP403, word.span, f"`{self.spec.display} {name}` needs a value",
                      f"give it one: {name} {flag.metavar or 'VALUE'}")
            return None
        holder = self.words[self.i]
        self.i += 1
        if holder.value is None:
            if GLOB in {e.kind for e in holder.expansions}:
                self.deny(Code.BP203, holder.span,
                          f"`{holder.text}` as the value of {name} expands to file names; "
                          "the first becomes the value and the rest become operands",
                          f"quote it: {name} '{holder.text}'", rule=EXPANSION,
                          fix=fixes.quote_pattern(holder, "", flag.metavar))
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
        self.deny(Code.BP400, word.span, f"`{self.spec.display} {shown}` {reason.why}",
                  reason.fix or _DEFAULT_FIX[reason.effect], reason.effect, fix=fix)
        if consumes_next and self.i < len(self.words):
            self.i += 1

    def unknown_flag(self, name: str, word: Word, cluster: str | None = None) -> None:
        spec = self.spec
        if name.startswith("--") and len(name) > 2:
            matches = sorted({n for n in spec.flags if n.startswith(name) and n != name})
            if matches:
                denied = [m for m in matches if spec.flags[m].denied is not None]
                reason = spec.flags[denied[0]].denied if denied else None
                extra = f"; `{denied[0]}` is denied: {reason.why}" if reason else ""
                self.deny(Code.BP402, word.span,
                          f"`{name}` abbreviates {', '.join(f'`{m}`' for m in matches)}{extra}",
                          "write the option in full"
                          + (f": {matches[0]}" if len(matches) == 1 and not denied else ""),
                          reason.effect if reason else None)
                return
        where = f" (in `{cluster}`)" if cluster else ""
        self.deny(Code.BP401, word.span,
                  f"`{name}`{where} is not an allowed flag of `{spec.display}`",
                  f"see `bash-policy programs {spec.path[0]}` for the allowed flags; if `{name}` only "
                  "shapes output, add it to the spec in bash-policy.toml")

    # -- judging what was read -----------------------------------------------
    def finish(self, has_sub: bool) -> None:
        spec = self.spec
        if not has_sub and spec.subcommands and spec.subcommand_required:
            allowed = sorted(name for name, s in spec.subcommands.items() if s.denied is None)
            self.deny(Code.BP405, self.named_by.span, f"`{spec.display}` needs a subcommand",
                      f"use one of: {', '.join(allowed)}", rule=SUBCOMMAND)
        if not has_sub:
            self.check_modes()
            self.check_positionals()
            if self.reads_stdin():
                self.ctx.reads_stdin = True
            self.check_special_files()
        for hook in self.spec.hooks:
            self.ctx.run_rule(hook, self.inv)

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
            self.deny(Code.BP400, other.word.span,
                      f"`{self.spec.display}` {given[0].name} and {other.name} select different "
                      f"modes, which {self.spec.path[0]} refuses together",
                      f"give one of them: `{self.spec.display} {given[0].name}` or "
                      f"`{self.spec.display} {other.name}`", rule=MODES)

    def reads_stdin(self) -> bool:
        """Whether the program may read standard input: its spec's `stdin`, a
        flag that reads it, or a file it opens that is or may be `-` or
        /dev/stdin (`diff f -`, `jq --rawfile a /dev/stdin`)."""
        spec, inv, dirs = self.spec, self.inv, self.ctx.directories()
        if any(use.flag.reads_stdin
               or (use.value is None and use.flag.reads and use.flag.value != "none")
               or (use.value is not None and any(p == "-" or stdin_in(p, dirs)
                                                 for p in use.flag.paths(use.value)))
               for use in inv.flags):
            return True  # `--stdin`, or a flag's value given `-` (`grep -f -`)
        if any(w.value in (None, "-") or stdin_in(w.value, dirs) for w in self.opened()):
            return True
        if spec.stdin != "no-files":
            return spec.stdin == "always"
        if spec.positionals.pattern is not None:  # grep -e x f: no pattern operand to skip
            return not self.opened()
        return not inv.positionals[spec.stdin_skip:]

    def opened(self) -> list[Word]:
        """The operands the program may open as files (not a pattern or program
        given first, not names it never opens)."""
        p, inv, ctx = self.spec.positionals, self.inv, self.ctx
        if p.role != "read" or not p.files:
            return []
        operands = inv.positionals
        if p.pattern is not None and not inv.has(*p.pattern):
            operands = operands[1:]
        return [one for word in operands for one in shapes.instances(word, ctx.source, ctx.variables)]

    def looked_up(self) -> list[Word]:
        """The operands the program may open that are looked up on disk: not
        those under /dev, /proc or /sys, which `check_special_files` denies
        by their name (one denial for one cause: `cat /dev/zero` is BP406,
        never BP603 as well)."""
        return [word for word in self.opened() if not special_operand_in(word, self.ctx.directories())]

    def check_positionals(self) -> None:
        spec, inv, ctx, appended = self.spec, self.inv, self.ctx, self.appended
        pos = inv.positionals
        role = spec.positionals.role
        if role == "command":
            skip = spec.positionals.skip
            spread = next((w for w in pos[:skip + 1]
                           if not shapes.single(w, ctx.source, ctx.variables)), None)
            if spread is not None:  # `timeout -- $(echo 5 rm x)`: one word is DURATION and a program
                self.deny(Code.BP302, spread.span,
                          f"`{spread.text}` may become several words, one of them the program "
                          f"{spec.display} runs", "write the operands and the program literally",
                          rule=PROGRAM)
                return
            if len(pos) > skip:
                inner = pos[skip:]
                if inner[0].value is None:
                    self.deny(Code.BP302, inner[0].span, "the inner program name is not literal",
                              "name the program literally", rule=PROGRAM)
                    return
                start = next(k for k, w in enumerate(inv.words) if w is inner[0])
                appender = Appended(spec.display) if spec.positionals.appends else None
                ctx.check_inner(inv.words[start:], appended or appender)
            elif appended:  # `xargs nice`: the appended operands would be the command
                self.deny(Code.BP404, inv.words[0].span,
                          f"`{spec.display}` would run a command named by standard input",
                          f"name the command after {spec.display}, with its operands after `--`",
                          rule=OPERANDS)
            return
        if appended and not (role == "read" and spec.positionals.max is None
                             and (inv.after_double_dash or spec.harmless
                                  or (appended.dash_safe and not spec.plus_options))):
            self.deny(Code.BP404, inv.words[0].span,
                      f"`{spec.display}` gets extra operands from standard input, which could be read "
                      "as flags",
                      f"put `--` before the operands of {spec.display}: "
                      f"`{appended.wrapper} {_with_double_dash(inv)}`", rule=OPERANDS,
                      fix=self.appended_fix())
        if role == "none" and pos:
            self.deny(Code.BP406, pos[0].span, f"`{spec.display}` takes no operands here",
                      f"drop `{pos[0].text}`", rule=OPERANDS)
            return
        if role == "read" and pos:
            check_special_operands(self.looked_up(), ctx)  # FIFOs and devices (rules/files.py)
        limit = spec.positionals.max
        if limit is None:
            return
        # A glob or an unquoted expansion may become any number of operands.
        expanding = [w for w in pos if not shapes.single(w, ctx.source, ctx.variables)]
        if len(pos) <= limit and not expanding:
            return
        culprit = expanding[0] if expanding else pos[limit]
        over = spec.positionals.over_max
        if over is not None:
            self.deny(Code.BP406, culprit.span, f"`{spec.display}` {over.why}",
                      over.fix or _DEFAULT_FIX[over.effect], over.effect, rule=OPERANDS)
        elif expanding:
            self.deny(Code.BP203, culprit.span,
                      f"`{culprit.text}` may expand to more operands than `{spec.display}` takes "
                      f"({limit})", f"quote it so it stays one word: `'{culprit.text}'`", rule=OPERANDS)
        else:
            self.deny(Code.BP406, culprit.span,
                      f"`{spec.display}` takes at most {limit} operand{'s' if limit != 1 else ''}",
                      f"drop `{culprit.text}`", rule=OPERANDS)

    def check_special_files(self) -> None:
        """Operands that may be files, and values of flags that name a file to
        read, must not be devices or kernel files (see `special_file`)."""
        spec, inv, ctx = self.spec, self.inv, self.ctx
        read_values = []
        around: dict[str, list[Word]] = {}
        for use in inv.flags:
            if use.flag.reads and use.value is None and use.value_word not in (None, use.word):
                read_values.append(use.value_word)  # `grep -f ~+/p`: `~+` and $PWD are looked up
                around.setdefault(use.flag.reads, []).append(use.value_word)
            if not use.flag.reads or use.value is None:
                continue
            shown = use.value_word if use.value_word is not None else use.word
            for path in use.flag.paths(use.value):
                if use.flag.reads == "file-if-slash" and "/" not in path:
                    continue  # a name (iconv's charset), not a file
                if special_in(path, ctx.directories()):
                    self.deny(Code.BP403, use.word.span,
                              f"`{spec.display} {use.name}` would read `{path}`, a device or kernel "
                              "file whose reading may never end", "read a regular file",
                              Effect.HANG, rule=SPECIAL)
                else:
                    read_values.append(Word(path, shown.span, path))
                    around.setdefault(use.flag.reads, []).append(read_values[-1])
        if read_values:  # `grep -f p` where p is a FIFO (rules/files.py)
            check_special_operands(read_values, ctx)
        for shape, words in around.items():  # `kubectl -f DIR`: the files under DIR
            check_around(words, shape, ctx, spec.display)
        check_around(self.looked_up(), spec.positionals.shape, ctx, spec.display)
        for word in self.opened():
            if special_operand_in(word, ctx.directories()):
                self.deny(Code.BP406, word.span,
                          f"`{spec.display}` would read `{word.text}`, which is or may be a device "
                          "or kernel file whose reading may never end (only /dev/null, /dev/stdin "
                          "and a few /proc files may be read)", "read a regular file",
                          Effect.HANG, rule=SPECIAL)


def _quote_hint(word: Word, rewritten) -> str:
    """Quote `./$f` as `"./$f"`; a word already quoted in parts is not rewritten."""
    if any(c in word.text for c in "\"'\\"):
        return "put every expansion in it inside double quotes so it stays one word"
    quoted = '"' + word.text + '"'
    return f"quote it so it stays one word: `{rewritten(word, quoted)}`"


def _glob_hint(text: str) -> str:
    """How to keep a glob from becoming flags: quote a flag's pattern, anchor an operand's."""
    name, eq, pattern = text.partition("=")
    if text.startswith("-") and eq and "'" not in pattern:
        return f"quote the pattern so the program matches it: `{name}='{pattern}'`"
    return f"quote it for the program to match, write it as ./{text}, or put it after `--`"


def _with_double_dash(inv: Invocation) -> str:
    """The inner command's text with `--` before its first operand (or at its end)."""
    texts = [w.text for w in inv.words]
    at = next((k for k, w in enumerate(inv.words) if w is inv.positionals[0]), len(texts)) \
        if inv.positionals else len(texts)
    return " ".join(texts[:at] + ["--"] + texts[at:])
