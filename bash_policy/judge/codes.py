"""Denial codes: one class of problem each, documented in docs/codes.md.

The table here is the single source: the engine uses the names and the docs
generator renders the rest (tests fail when docs/codes.md drifts).
"""

from __future__ import annotations

from enum import Enum

from ..records import dataclass


class Effect(str, Enum):
    """What a denied thing would do: the categories every denial is sorted into."""

    EXEC = "exec"
    WRITE = "write"
    NETWORK = "network"
    HANG = "hang"
    STATE = "state"
    LEAK = "leak"
    INTERACTIVE = "interactive"

    def __str__(self) -> str:
        return self.value


class Code(str, Enum):
    """The stable denial codes: the public contract (docs/codes.md)."""

    BP100 = "BP100"
    BP101 = "BP101"
    BP102 = "BP102"
    BP103 = "BP103"
    BP104 = "BP104"
    BP105 = "BP105"
    BP106 = "BP106"
    BP107 = "BP107"
    BP108 = "BP108"
    BP200 = "BP200"
    BP201 = "BP201"
    BP202 = "BP202"
    BP203 = "BP203"
    BP204 = "BP204"
    BP205 = "BP205"
    BP206 = "BP206"
    BP207 = "BP207"
    BP300 = "BP300"
    BP301 = "BP301"
    BP302 = "BP302"
    BP303 = "BP303"
    BP304 = "BP304"
    BP400 = "BP400"
    BP401 = "BP401"
    BP402 = "BP402"
    BP403 = "BP403"
    BP404 = "BP404"
    BP405 = "BP405"
    BP406 = "BP406"
    BP407 = "BP407"
    BP500 = "BP500"
    BP501 = "BP501"
    BP600 = "BP600"
    BP601 = "BP601"
    BP602 = "BP602"
    BP603 = "BP603"
    BP700 = "BP700"
    BP701 = "BP701"
    BP702 = "BP702"
    BP703 = "BP703"

    def __str__(self) -> str:
        return self.value


# The codes' documentation, relative to the repository root: generated from
# this table (docgen.py) and tested for drift, so the page at any commit is the
# page of that commit's codes.
DOCS = "docs/codes.md"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    name: str
    blocks: str
    why: str
    example: str  # a command that yields the code, or "# …" describing one the default policy cannot show
    fix: str
    passes: str  # its fixed form, or a close neighbour that is allowed

    @property
    def runnable(self) -> bool:
        return not self.example.startswith("#")

    @property
    def anchor(self) -> str:
        """The code's section in docs/codes.md."""
        return f"{self.code.lower()}-{self.name}"

    @property
    def url(self) -> str:
        """Where the code's page is: its section of docs/codes.md, relative to
        the repository (docs/model.md, "Documentation links", says why)."""
        return f"{DOCS}#{self.anchor}"


_TABLE: tuple[CodeInfo, ...] = (
    CodeInfo("BP100", "parse-error",
         "Text that does not parse as bash, or that the parser did not account for.",
         "If the checker cannot read a command exactly as bash will, it cannot know what will run.",
         "rg \"foo", "Close the quote or bracket; write the command on one line.",
         'rg "foo"'),
    CodeInfo("BP101", "unsupported-syntax",
         "Constructs outside what the checker models: functions, `select`, `coproc`, loops it "
         "cannot see end (other than `for … in`, `while read` on input it consumes, counting "
         "`for (( ))` with literal bounds, `while true` broken out of on every path), `(( ))` with "
         "names, regular expressions after `=~` outside the plain forms, here-documents in "
         "substitutions, and inside substitutions what bash 5.2 prints back differently before "
         "running it (a case arm whose first pattern is `esac`, a word ending in `\\&`, `time` at the "
         "start).  (Subshells, groups, `if`, `case` and those loops are checked command by "
         "command.)",
         "Each can hide commands, never end, or change the shell's state in ways the checker "
         "does not follow; none is needed to explore.",
         "f() { rg foo; }", "Write the commands themselves: `rg foo`.",
         'cd src && rg foo'),
    CodeInfo("BP102", "background",
         "A command run in the background with `&`.",
         "A background job outlives the check and may run after plan mode ends.",
         "rg foo src &", "Drop the `&`.",
         'rg foo src'),
    CodeInfo("BP103", "input-limit",
         "Commands longer, deeper or with more segments than the checker's limits.",
         "Unbounded input could make the checker slow; anything past a limit is denied, never skipped.",
         "# a 1 MB command", "Split the work into smaller commands.",
         'rg foo src'),
    CodeInfo("BP104", "bad-characters",
         "NUL bytes, invalid UTF-8, control characters (carriage return, escape) and bidirectional overrides.",
         "Such characters make a command look different to a person, the checker and bash.",
         "rg foo\r", "Retype the command with plain characters.",
         'rg foo'),
    CodeInfo("BP105", "heredoc-expands",
         "A here-document whose delimiter is unquoted and whose body holds `$`, a backquote or a backslash.",
         "An unquoted here-document body undergoes expansion, including command substitution.",
         "cat <<EOF\n$(id)\nEOF", "Quote the delimiter (`<<'EOF'`) so the body stays literal.",
         "cat <<'EOF'\n$(id)\nEOF"),
    CodeInfo("BP106", "parser-disagreement",
         "Commands that the two parsers (tree-sitter and bashlex) read differently.",
         "Published bypasses of read-only checks are mostly parser differentials: the checker read one "
         "command and bash ran another.",
         "# a command tree-sitter and the exact reader read differently",
         "Write the command without ambiguous quoting or line continuations.",
         'echo a b'),
    CodeInfo("BP107", "internal-error",
         "Any command on which the checker itself failed.",
         "A checker that raises lets a harness treat the command as unchecked; an internal error "
         "is a denial instead.",
         "# no known input", "Rewrite the command more simply, and report the input as a bug.",
         'rg foo'),
    CodeInfo("BP108", "reads-the-script",
         "A command that may read standard input, in a script with lines after it.",
         "A harness that pipes the script into bash gives the command the rest of the script as "
         "its input: it reads, and bash never runs, the later lines, so what runs is not what was "
         "checked (`head -c 3` swallows part of the next line).",
         "head -c 3\nrg foo src",
         "Write the whole script on one line (join the lines with `;` or `&&`), or give the "
         "command its input (`< file`); if your harness runs commands with `bash -c`, set "
         "`stdin_script = false`.",
         "head -c 3 notes.txt\nrg foo src"),
    CodeInfo("BP200", "command-substitution",
         "A command or process substitution whose output lands where no unknown text may: a "
         "redirection target, an assignment's value, a flag value that is checked; and backquotes.",
         "The commands inside are checked like any other, but their output is unknown until run "
         "time, so it may only stand where any text is harmless (docs/script-languages.md).",
         'cat < "$(ls | head -1)"', "Run the inner command on its own first, then use its output "
         "literally; as an operand of a harmless program (`cat \"$(…)\"`) it is allowed.",
         'cat "$(ls | head -1)"'),
    CodeInfo("BP201", "parameter-expansion",
         "`$var`, `${…}` and special parameters where their value matters and the script did not "
         "set it: a redirection target, an assignment's value, `${…}` with operators other than "
         "`-`, `:-`, `+`, `:+` on a plain word, `#` and an array's `[@]`, `[*]`, `[N]`.",
         "Their value is unknown until run time; some operators evaluate code.",
         'cat < "$F"', "Write the value literally; as an operand that cannot become a flag "
         '(after `--`, or `"./$f"`) it is allowed.', 'cat -- "$F"'),
    CodeInfo("BP202", "arithmetic-expansion",
         "`$((…))` and `$[…]` with names, or where the value must be known (a redirection "
         "target, an operand a rule reads).",
         "Arithmetic evaluates variable names as expressions, and array subscripts can run "
         "commands; numbers and operators alone give a number the checker does not compute.",
         "seq 1 $((2*5))", "Compute the number yourself: `seq 1 10`.",
         'seq 1 10'),
    CodeInfo("BP203", "unquoted-glob",
         "An unquoted `*`, `?` or `[…]` where its expansions could become a flag, a flag's value, "
         "or exceed the operands a program accepts.",
         "bash replaces the pattern with matching file names; a file named `--pre=sh` turns into a flag.",
         "rg foo *.py", "Quote it for the program to match (`--glob '*.py'`), give it a fixed prefix "
         "(`./*.py`), or put it after `--`.",
         'rg foo ./*.py'),
    CodeInfo("BP204", "brace-expansion",
         "Brace expansion the checker does not follow: more than 1,024 words, a list around "
         "another expansion (`{a,b}$x`), a letter range through punctuation (`{a..Z}`), a "
         "program name in braces.",
         "Other brace expansion is followed exactly as bash does it and every word it makes is "
         "judged; these forms would make words the checker cannot know or cannot afford to read.",
         "echo {1..5000}", "Generate long lists with a program (`seq 1 5000`); write the words "
         "of a list around an expansion out.",
         'seq 1 5000'),
    CodeInfo("BP205", "tilde-expansion",
         "A `~` where the checker must know the directory it names: a `cd` target.",
         "A tilde is an absolute path from the harness's environment, so as an operand it is "
         "allowed; but `cd ~` changes the directory later commands and repository checks run in.",
         "cd -- ~/src", "Write the absolute path.", "cd /home/me/src"),
    CodeInfo("BP206", "ansi-c-quoting",
         "`$'…'` and `$\"…\"` quoting.",
         "Escapes in `$'…'` and translations in `$\"…\"` produce text that differs from what is written.",
         "rg $'\\x2d\\x2dpre' x", "Use plain single quotes with the characters you mean.",
         "rg -- '--pre' x"),
    CodeInfo("BP207", "extended-glob",
         "`?(…)`, `*(…)`, `+(…)`, `@(…)`, `!(…)` patterns.",
         "Extended globs depend on shell options and can expand to any file name.",
         "# an extended pattern inside [[ … ]], where bash reads extended globs",
         "Quote the pattern and let the program match it.",
         "ls '!(x)'"),
    CodeInfo("BP300", "unknown-program",
         "A program that is not in the whitelist, and programs denied as a whole (pagers, `tee`, shells).",
         "Only programs whose every allowed use was checked against their manual may run.",
         "vim notes.txt", "Use a whitelisted program, add a spec for it in bash-policy.toml, "
         "or leave plan mode.",
         'cat notes.txt'),
    CodeInfo("BP301", "program-path",
         "A program named by a relative path, or by a path outside the trusted system directories.",
         "`./rg` or `/tmp/git` is whatever file sits there, not the tool the spec describes.",
         "./rg foo", "Call the program by its bare name: `rg foo`.",
         'rg foo'),
    CodeInfo("BP302", "program-not-literal",
         "A program name that holds an expansion or quoting the checker will not resolve.",
         "The program that runs is unknown until run time.",
         "$EDITOR x", "Name the program literally.",
         'rg x'),
    CodeInfo("BP303", "no-command",
         "A segment that only assigns variables other than shell-local (lower-case) ones.",
         "An assignment changes the shell's state for every later command (PATH, IFS, pagers); "
         "a shell-local name reaches only the script's own expansions, which the checker follows.",
         "PAGER=sh", "Drop the assignment.",
         'PAGER=cat git log'),
    CodeInfo("BP304", "needs-environment",
         "A program that is read-only only when a variable turns off an effect it has by default.",
         "`go version` downloads and runs the toolchain that go.mod names unless GOTOOLCHAIN=local.",
         "go version", "Prefix the command with the variable the message names: "
         "`GOTOOLCHAIN=local go version`.",
         'GOTOOLCHAIN=local go version'),
    CodeInfo("BP400", "denied-flag",
         "A flag that runs a program, writes a file, uses the network, changes state or hangs.",
         "Read-only tools have flags that do much more than shape output.",
         "rg --pre cat x", "Drop the flag; the message says what to use instead.",
         'rg -n cat x'),
    CodeInfo("BP401", "unknown-flag",
         "A flag not in the program's allowlist.",
         "The whitelist only holds flags checked against the manual; new or unknown flags may have effects.",
         "rg --frobnicate x", "Use a listed flag (`bash-policy programs rg`) or add it in bash-policy.toml.",
         'rg --fixed-strings x'),
    CodeInfo("BP402", "abbreviated-flag",
         "An abbreviation of a long option (`--out` for `--output`).",
         "Programs accept unique prefixes of long options, so an abbreviation can reach a denied flag.",
         "sort --out=f x", "Write the option in full.",
         'sort --reverse x'),
    CodeInfo("BP403", "bad-flag-value",
         "A flag value outside the allowed set, a missing value, or a value to a flag that takes none.",
         "Some flags are safe with some values only (`gh api --method GET`).",
         "gh api -X DELETE repos/o/r", "Use an allowed value; the message lists them.",
         'gh api repos/o/r'),
    CodeInfo("BP404", "expansion-as-flag",
         "A word whose value is computed at run time (a variable, a substitution's output, a glob, "
         "the operands xargs appends) where it could start with `-` and the program reads flags.",
         "A file named `-rf`, or output that begins with `--pre=sh`, turns into a flag.",
         "rg $PATTERN src", "Put it after `--` (`rg -- \"$PATTERN\" src`) or give it a fixed prefix "
         "like `./`; programs whose every flag is harmless (ls, cat, echo) take any operand.",
         'rg -- "$PATTERN" src'),
    CodeInfo("BP405", "subcommand",
         "A subcommand that is not read-only, or a missing or unknown subcommand.",
         "`git push`, `gh pr merge` and the like change state.",
         "git push", "Use a read-only subcommand (`bash-policy programs git`) or leave plan mode.",
         'git status'),
    CodeInfo("BP406", "operand",
         "An operand that the program writes to, creates or acts on (an output file, a new branch).",
         "Some programs take their output or a new name as a plain operand.",
         "git branch new-feature", "Drop the operand; list with `git branch --list`.",
         "git branch --list 'new*'"),
    CodeInfo("BP407", "script",
         "A script argument (sed, awk, jq, GraphQL) whose commands write, run programs or read the environment.",
         "Programs with a language of their own can run commands from inside their script.",
         "sed 'w out' f", "Keep the script to printing and transforming; the message names the command.",
         "sed -n 'p' f"),
    CodeInfo("BP500", "write-redirection",
         "Redirections that open a file for writing: `>`, `>>`, `&>`, `&>>`, `>|`, `<>`, `>&file`.",
         "They create or overwrite files.",
         "rg foo > out", "Drop the redirection and read the output directly, or send it to /dev/null.",
         'rg foo 2>/dev/null'),
    CodeInfo("BP501", "redirection-target",
         "A redirection whose target is not a literal path, or a device that opens a network connection.",
         "The file that is opened is unknown until run time; `/dev/tcp/…` connects to a host.",
         "rg foo < /dev/tcp/example.com/80", "Redirect from a literal file.",
         'rg foo < notes.txt'),
    CodeInfo("BP600", "env-assignment",
         "A per-command variable assignment outside the harmless list.",
         "Variables change what an allowed program does: PAGER, GIT_*, LD_PRELOAD, PATH, RIPGREP_CONFIG_PATH.",
         "PAGER=sh git log", "Drop the assignment; harmless ones (LC_ALL, TZ, NO_COLOR, …) are allowed.",
         'LC_ALL=C git log'),
    CodeInfo("BP601", "repository-config",
         "Repository content the command would act on: a git config key (in the repository's "
         "config, an included file, a worktree or submodule config) outside the allowlist of keys "
         "known to be inert, a post-index-change hook, a partial clone for a git command that reads "
         "objects (git would fetch them), a bisect term in BISECT_TERMS that names the `git bisect` "
         "subcommand given, a missing rr-cache directory for `git rerere` (rerere.enabled makes it "
         "create one), a project .npmrc key outside npm's inert list, a config file git or npm "
         "would hang or die on; cargo or rustc under a rust-toolchain file that rustup would "
         "install; also any of these after a `cd` whose target the checker cannot resolve.",
         "A repository's own config can make plain `git status` or `git diff` run a program; a "
         "directory can hold a crafted repository.",
         "# git status, in a repository whose .git/config sets core.fsmonitor",
         "Inspect the named file and remove the key (or trust it: trusted_repo_keys), or run the "
         "command outside plan mode with the hardened environment (bash_policy.hardened_env).",
         'git status'),
    CodeInfo("BP602", "out-of-scope",
         "With `scope_roots` set: a path operand, flag value or `<` redirection outside those roots.",
         "Read-only tools can still read secrets (`~/.ssh`, `/proc/self/environ`) outside the project.",
         "# cat /etc/passwd, with scope_roots set to the project",
         "Read files inside the project, or add the directory to scope_roots.",
         'cat src/main.py'),
    CodeInfo("BP603", "special-file",
         "With a working directory: a file the command would read that is a FIFO, socket or device "
         "on disk, or a link to one: a read operand or a reading flag's value (followed through "
         "links, in every directory the command may run in), a file a glob there matches, a file "
         "the program opens beside or under one named (a spec's read shape: 7z's next volumes, "
         "kubectl -f DIR), or a project file it reads by itself (Cargo.toml); and a directory too "
         "large to look through.  (A path under /dev, /proc or /sys is denied without looking: "
         "BP406, or BP403 as a flag's value.)",
         "Reading one blocks or never ends, and a repository can hold a committed symlink "
         "`README.md -> /dev/zero` or a FIFO from an archive.",
         "# head -n 5 README.md, where README.md is a symlink to /dev/zero",
         "Read a regular file; look at what the name is with `ls -l` or `stat`.",
         'head -n 5 notes.txt'),
    CodeInfo("BP700", "client-shell-name",
         "A command for a client that runs it in its own shell (Claude Code's snapshot of your "
         "login shell), where a function or alias of that shell stands in for the program and its "
         "body is denied, or where that shell's state cannot be read.",
         "What runs is the function's body, not the program the checker knows: a common `cd` "
         "function activates the directory's .venv, which runs the repository's code.",
         "# cd sub, with a `cd` function in ~/.bashrc that sources .venv/bin/activate",
         "Write `command NAME …` to bypass the function, remove it from your shell's startup "
         "files, or let the hook rewrite the command (its default) so that it runs under "
         "`bash-policy run`.",
         'command cd src'),
    CodeInfo("BP701", "client-shell-option",
         "A command whose words expand differently under a shell option the client's shell turns "
         "on (globstar's `**`, nocaseglob, nullglob, cdable_vars), or any command when that shell "
         "turns on an option bash-policy does not model.",
         "With globstar `wc -l **/*.py` reads every file of the tree, a link to /dev/zero deep "
         "inside included; the checker looked at one level.",
         "# wc -l **/*.py, with shopt -s globstar in ~/.bashrc",
         "Name the files, or list them with `rg --files -g GLOB`; or let the hook rewrite the "
         "command (its default).",
         "rg --files -g '*.py'"),
    CodeInfo("BP702", "client-stdin",
         "A program that may read standard input, where the client leaves it open: Claude Code's "
         "own socket when the command has an input redirection or here-document, a terminal in "
         "Gemini CLI's interactive mode.",
         "Neither ever ends: `wc -l < README.md; cat` waits for ever in Claude Code.",
         "# wc -l < README.md; cat, in Claude Code",
         "Give the program its input (`< FILE`, a pipe) or name the files it reads.",
         "wc -l < README.md; cat notes.txt"),
    CodeInfo("BP703", "client-walk-hangs",
         "A program that walks the directory tree and would read a file that never ends there (an "
         "ignore file linked to /dev/zero, a FIFO), or a tree too large to look at, in a client "
         "that does not kill a hung command (Claude Code signals it at its timeout and moves what "
         "outlives that to the background).",
         "`grep -rn foo src` in Claude Code runs ugrep, which reads every .gitignore it walks "
         "past: `src/deep/.gitignore -> /dev/zero` grows it for ever.",
         "# grep -rn foo src, with src/deep/.gitignore -> /dev/zero, in Claude Code",
         "Search named files or a smaller directory, or let the hook rewrite the command (its "
         "default): `bash-policy run` kills it at its timeout.",
         "grep -n foo src/main.py"),
)
CODES: dict[str, CodeInfo] = {c.code: c for c in _TABLE}
assert set(CODES) == {c.value for c in Code}, "every code has one entry in the table"
