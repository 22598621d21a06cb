"""Claude Code's shell snapshot: the user's shell state its Bash tool replays.

At start-up Claude Code runs `bash -c -l` (so ~/.bashrc and the login files
run) and writes what that shell holds to
`~/.claude/shell-snapshots/snapshot-bash-<ms>-<random>.sh`; every command
then runs after `source SNAPSHOT`.  The file is read here line by line, and
only in the shapes Claude Code writes (2.1.197 and 2.1.332):

    # Snapshot file / # Unset all aliases ... / unalias -a 2>/dev/null || true
    shopt -s NAME | shopt -u NAME | set -o NAME
    eval $'NAME () \\n{ …\\n}' > /dev/null 2>&1                      (2.1.332)
    eval "$(echo 'BASE64…' | base64 -d)" > /dev/null 2>&1            (2.1.197)
    alias -- NAME='VALUE'
    # Check for rg availability … Claude Code's own functions …
    export PATH=…

Any other line outside Claude Code's own block is an error: a state read in
part would let a function through unseen.  The file is complete once its
last line sets PATH (Claude Code writes it last).

Claude Code writes the snapshot when its Bash tool first runs a command,
after that call's PreToolUse hook (2.1.197 and 2.1.332: the hook of the
first call never finds it, and denying that call would leave every later
one without a snapshot too).  Until it exists, `login_state` computes the
same state the way Claude Code is about to: a login bash that sources
~/.bashrc, printing what it holds in the snapshot's own shapes.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping

from ..records import dataclass, field

_HEADER = {"# Snapshot file", "# Unset all aliases to avoid conflicts with functions",
           "unalias -a 2>/dev/null || true", "# Shopt", "# Functions", "# Shell Options",
           "# Aliases"}
_CLIENT_BLOCK = "# Check for rg availability"
_SHOPT = re.compile(r"shopt -([su]) ([a-z_0-9]+)")
_SET = re.compile(r"set -o ([a-z-]+)")
_EVAL_QUOTED = re.compile(r"eval (?:-- )?\$'((?:[^'\\]|\\.)*)' > /dev/null 2>&1", re.S)
_EVAL_B64_START = "eval \"$(echo '"
_EVAL_B64_END = "' | base64 -d)\" > /dev/null 2>&1"
_FUNCTION_TEXT = re.compile(r"(\S+) \(\) \n\{ \n(.*)\n\}\n?", re.S)
_CLIENT_FUNCTION = re.compile(r"\s*(?:function\s+([^\s(){}]+)\s*(?:\(\))?\s*\{|([^\s(){}]+)\s*\(\)\s*\{?)\s*$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class SnapshotError(ValueError):
    """The snapshot holds something this reader does not know."""


@dataclass
class Snapshot:
    path: str
    options: dict[str, bool] = field(default_factory=dict)  # shopt and set -o, as last set
    functions: dict[str, str] = field(default_factory=dict)  # the user's: name -> body
    aliases: dict[str, str] = field(default_factory=dict)
    client_functions: list[str] = field(default_factory=list)  # Claude Code's own block
    path_entries: tuple[str, ...] | None = None
    complete: bool = False


def ansi_c(text: str) -> str:
    """The value of bash's `$'…'` quoting, as `printf %q` writes it."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1:i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "01234567" and nxt:
            digits = re.match(r"[0-7]{1,3}", text[i + 1:])
            assert digits is not None
            out.append(chr(int(digits.group(), 8)))
            i += 1 + len(digits.group())
        elif nxt in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            digits = re.match(rf"[0-9A-Fa-f]{{1,{width}}}", text[i + 2:])
            if digits is None:
                raise SnapshotError(f"a \\{nxt} escape without digits")
            code = int(digits.group(), 16)
            out.append(chr(code) if nxt != "x" else bytes([code]).decode("latin-1"))
            i += 2 + len(digits.group())
        elif nxt == "c" and i + 2 < len(text):
            out.append(chr(ord(text[i + 2].upper()) ^ 0x40))
            i += 3
        else:
            raise SnapshotError(f"an unknown escape \\{nxt}")
    return "".join(out)


def _function(text: str, snap: Snapshot, line: int) -> None:
    match = _FUNCTION_TEXT.fullmatch(text)
    if match is None:
        raise SnapshotError(f"line {line}: a function definition of an unknown shape")
    snap.functions[match.group(1)] = match.group(2)


def parse(text: str, path: str) -> Snapshot:
    """Read a snapshot; SnapshotError for any line of an unknown shape."""
    snap = Snapshot(path)
    lines = text.split("\n")
    k = 0
    in_client = False
    while k < len(lines):
        line, number = lines[k], k + 1
        k += 1
        if line.startswith("export PATH="):
            try:
                words = shlex.split(line[len("export "):])
            except ValueError as error:
                raise SnapshotError(f"line {number}: PATH ({error})") from None
            if len(words) != 1 or not words[0].startswith("PATH="):
                raise SnapshotError(f"line {number}: PATH of an unknown shape")
            snap.path_entries = tuple(words[0][len("PATH="):].split(":"))
            snap.complete = not any(rest.strip() for rest in lines[k:])
            if not snap.complete:
                raise SnapshotError(f"line {number}: lines after PATH")
            break
        if in_client:
            match = _CLIENT_FUNCTION.match(line)
            if match:
                snap.client_functions.append(match.group(1) or match.group(2))
            elif line.lstrip().startswith("alias "):
                raise SnapshotError(f"line {number}: an alias in Claude Code's own block")
            continue
        if not line.strip() or line in _HEADER:
            continue
        if line == _CLIENT_BLOCK:
            in_client = True
            continue
        if match := _SHOPT.fullmatch(line):
            snap.options[match.group(2)] = match.group(1) == "s"
        elif match := _SET.fullmatch(line):
            snap.options[match.group(1)] = True
        elif line.startswith("eval $'") or line.startswith("eval -- $'"):
            # %q output is one line: newlines inside are written \n.
            match = _EVAL_QUOTED.fullmatch(line)
            if match is None:
                raise SnapshotError(f"line {number}: an eval of an unknown shape")
            _function(ansi_c(match.group(1)), snap, number)
        elif line.startswith(_EVAL_B64_START):
            encoded = line[len(_EVAL_B64_START):]
            while not encoded.endswith(_EVAL_B64_END):
                if k >= len(lines):
                    raise SnapshotError(f"line {number}: a base64 function that does not end")
                encoded += lines[k]
                k += 1
            import base64  # here: only 2.1.197 writes functions so
            import binascii

            try:
                body = base64.b64decode(encoded[:-len(_EVAL_B64_END)], validate=True)
                _function(body.decode("utf-8"), snap, number)
            except (binascii.Error, UnicodeDecodeError) as error:
                raise SnapshotError(f"line {number}: base64 ({error})") from None
        elif line.startswith("alias -- "):
            try:
                words = shlex.split(line)
            except ValueError as error:
                raise SnapshotError(f"line {number}: an alias ({error})") from None
            if len(words) != 3 or "=" not in words[2]:
                raise SnapshotError(f"line {number}: an alias of an unknown shape")
            name, _, value = words[2].partition("=")
            snap.aliases[name] = value
        else:
            raise SnapshotError(f"line {number}: {line[:80]!r} is not a line Claude Code writes")
    return snap


# Prints a login shell's state in the snapshot's shapes.  Like Claude Code it
# sources ~/.bashrc with stdin closed, leaves out functions named with a single
# leading underscore (completion functions), which it does not replay, and
# turns expand_aliases on, as its snapshot does; PATH is the client's own.
_DUMP = r"""
[ -f "$HOME/.bashrc" ] && source "$HOME/.bashrc" < /dev/null
echo '# Shopt'
shopt -p
echo '# Functions'
declare -F | while builtin read -r _ _ __bp_name; do
  [[ "$__bp_name" == _[!_]* ]] && continue
  builtin printf 'eval %q > /dev/null 2>&1\n' "$(declare -f -- "$__bp_name")"
done
echo '# Shell Options'
set -o | while builtin read -r __bp_option __bp_state; do
  [ "$__bp_state" = on ] && builtin printf 'set -o %s\n' "$__bp_option"
done
echo 'shopt -s expand_aliases'
echo '# Aliases'
alias -p | while builtin read -r __bp_line; do builtin printf 'alias -- %s\n' "${__bp_line#alias }"; done
builtin printf 'export PATH=%q\n' "$PATH"
"""


def login_state(bash: str, env: Mapping[str, str], cwd: str | None, timeout: float = 10.0) -> Snapshot:
    """The state a login bash with the user's ~/.bashrc holds, read as a snapshot.
    Runs the user's own startup files (which the client runs a moment later
    for its snapshot), never a repository's; SnapshotError if it fails.
    Without a ~/.bashrc Claude Code writes only `shopt -s expand_aliases` and
    its own block (2.1.197 and 2.1.332), and so does this."""
    home = env.get("HOME") or os.path.expanduser("~")
    if not os.path.isfile(os.path.join(home, ".bashrc")):
        bare = Snapshot("Claude Code's defaults (there is no ~/.bashrc)", {"expand_aliases": True},
                        complete=True)
        bare.path_entries = tuple(env.get("PATH", os.defpath).split(":"))
        return bare
    import subprocess  # here: a hook that finds the snapshot runs nothing

    try:
        done = subprocess.run([bash, "-c", "-l", _DUMP], env=dict(env),
                              cwd=cwd if cwd and os.path.isdir(cwd) else None,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                              start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SnapshotError(f"the login shell did not run ({error})") from None
    text = done.stdout.decode("utf-8", "replace")
    start = text.find("# Shopt\n")  # what startup files print themselves comes first
    if done.returncode != 0 or start < 0:
        raise SnapshotError(f"the login shell exited {done.returncode}")
    state = parse(text[start:], "your shell's startup files")
    state.path_entries = tuple(env.get("PATH", os.defpath).split(":"))
    return state
