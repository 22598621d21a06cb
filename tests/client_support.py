"""Claude Code shell snapshots for tests, in the shape Claude Code 2.1.332 writes.

The shapes are those of the two snapshots kept in fixtures/snapshots/, which
the real clients wrote (tests/e2e/test_shells.py checks that they still do).
"""

from __future__ import annotations

import time
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "snapshots"
# A login bash's options as Claude Code 2.1.332 replays them (no ~/.bashrc).
LOGIN_SHOPT_ON = ("checkwinsize", "cmdhist", "complete_fullquote", "extquote", "force_fignore",
                  "globasciiranges", "globskipdots", "hostcomplete", "interactive_comments",
                  "login_shell", "patsub_replacement", "progcomp", "promptvars", "sourcepath")
SHOPT_ALL = ("autocd", "assoc_expand_once", "cdable_vars", "cdspell", "checkhash", "checkjobs",
             "checkwinsize", "cmdhist", "compat31", "compat32", "compat40", "compat41", "compat42",
             "compat43", "compat44", "complete_fullquote", "direxpand", "dirspell", "dotglob",
             "execfail", "expand_aliases", "extdebug", "extglob", "extquote", "failglob",
             "force_fignore", "globasciiranges", "globskipdots", "globstar", "gnu_errfmt",
             "histappend", "histreedit", "histverify", "hostcomplete", "huponexit",
             "inherit_errexit", "interactive_comments", "lastpipe", "lithist", "localvar_inherit",
             "localvar_unset", "login_shell", "mailwarn", "no_empty_cmd_completion", "nocaseglob",
             "nocasematch", "noexpand_translation", "nullglob", "patsub_replacement", "progcomp",
             "progcomp_alias", "promptvars", "restricted_shell", "shift_verbose", "sourcepath",
             "varredir_close", "xpg_echo")


def _percent_q(text: str) -> str:
    """bash's `printf %q` of a function's text: $'…' with escapes."""
    return "$'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def client_block() -> str:
    """Claude Code 2.1.332's own functions and PATH, from the kept snapshot."""
    text = (FIXTURES / "claude-code-2.1.332.sh").read_text()
    return text[text.index("# Check for rg availability"):]


def snapshot_text(functions: dict[str, str] | None = None, aliases: dict[str, str] | None = None,
                  shopt_on=(), set_on=("braceexpand", "hashall", "interactive-comments", "monitor"),
                  block: str | None = None) -> str:
    """A snapshot: `functions` maps a name to its body lines (declare -f form)."""
    on = set(LOGIN_SHOPT_ON) | set(shopt_on)
    lines = ["# Snapshot file", "# Unset all aliases to avoid conflicts with functions",
             "unalias -a 2>/dev/null || true", "# Shopt"]
    lines += [f"shopt -{'s' if name in on else 'u'} {name}" for name in SHOPT_ALL]
    lines.append("# Functions")
    for name, body in (functions or {}).items():
        text = f"{name} () \n{{ \n" + "\n".join("    " + line for line in body.split("\n")) + "\n}"
        lines.append(f"eval {_percent_q(text)} > /dev/null 2>&1")
    lines += ["# Shell Options", *(f"set -o {name}" for name in set_on), "shopt -s expand_aliases",
              "# Aliases"]
    lines += [f"alias -- {name}='{value}'" for name, value in (aliases or {}).items()]
    return "\n".join(lines) + "\n" + (client_block() if block is None else block)


def write_snapshot(home: Path, **kwargs) -> Path:
    """Write a snapshot of the current session under `home`/.claude (its name
    holds the time now, as Claude Code names it at start-up)."""
    directory = home / ".claude" / "shell-snapshots"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"snapshot-bash-{int(time.time() * 1000)}-test01.sh"
    path.write_text(snapshot_text(**kwargs))
    return path
