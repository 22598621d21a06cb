"""Commands judged for the shell a client really runs them in (issue 24).

Three layers: the snapshot reader (the two snapshots kept in
fixtures/snapshots/ were written by the real Claude Code 2.1.197 and
2.1.332), the engine's checks given a ShellState, and the profiles that
build one from a client's files and environment.  Each engine case shows
the same command allowed without the state, so that the state is what
denies it.
"""

import dataclasses
import os
import time

import pytest
from client_support import FIXTURES, snapshot_text, write_snapshot

from bash_policy import check
from bash_policy.integrations import profiles
from bash_policy.integrations.profiles import load_profile, merge, shell_state
from bash_policy.integrations.snapshot import SnapshotError, ansi_c, parse
from bash_policy.judge.client_shell import ShellState, Walk
from bash_policy.judge.policy import Policy

CLAUDE = load_profile("claude-code")


def state(**changes) -> ShellState:
    base = ShellState(client="Claude Code 2.1.332", source="its shell snapshot s.sh",
                      options=frozenset(profiles.BASH_C_OPTIONS | {"expand_aliases"}),
                      replacements=dict(CLAUDE.replacements), walks=dict(CLAUDE.walks),
                      hangs=CLAUDE.shell["hangs"], path=("/usr/bin", "/bin"))
    return dataclasses.replace(base, **changes)


def in_shell(command, cwd=None, **changes):
    policy = dataclasses.replace(Policy.default(), shell=state(**changes))
    return check(command, policy, cwd=cwd)


def codes(verdict):
    return sorted({d.code for d in verdict.denials})


def denied_only_in_shell(command, code, cwd=None, **changes):
    assert check(command, cwd=cwd).allowed, command
    verdict = in_shell(command, cwd=cwd, **changes)
    assert code in codes(verdict), (command, verdict.denials)
    return verdict


# -- the snapshots the real clients wrote --------------------------------------------------

def test_the_2_1_197_snapshot_base64_functions():
    snap = parse((FIXTURES / "claude-code-2.1.197.sh").read_text(), "s")
    assert snap.functions["cd"].strip() == 'builtin cd "$@"'
    assert "gawkpath_append" in snap.functions
    assert snap.aliases == {"ll": "ls -l"}
    assert snap.options["globstar"] and snap.options["expand_aliases"] and not snap.options["extglob"]
    assert snap.options["onecmd"] and snap.options["monitor"]  # `set -o` as the snapshot shell had it
    assert snap.client_functions == ["rg", "find", "grep"]
    assert snap.path_entries == ("/usr/bin", "/bin") and snap.complete


def test_the_2_1_332_snapshot_quoted_functions():
    snap = parse((FIXTURES / "claude-code-2.1.332.sh").read_text(), "s")
    assert "source .venv/bin/activate" in snap.functions["cd"]
    assert snap.functions["ls"].strip() == 'command ls -F "$@"'
    assert snap.aliases == {"grep": "grep --color=auto", "ll": "ls -l"}
    assert snap.options["globstar"] and snap.options["nullglob"] and snap.options["noclobber"]
    assert snap.client_functions == ["rg", "find", "grep", "pkill"]


@pytest.mark.parametrize("line", [
    "source ~/.secret-rc",
    "eval $'f () \\n{ \\n    ls\\n}' > /dev/null",
    "eval \"$(echo 'not base64!' | base64 -d)\" > /dev/null 2>&1",
    "alias -- x",
    "declare -x FOO=bar",
    "trap 'rm -rf ~' EXIT",
])
def test_a_line_of_an_unknown_shape_is_an_error(line):
    text = snapshot_text().replace("# Aliases\n", f"# Aliases\n{line}\n")
    with pytest.raises(SnapshotError):
        parse(text, "s")


def test_lines_after_path_are_an_error():
    with pytest.raises(SnapshotError):
        parse(snapshot_text() + "alias ls=rm\n", "s")


def test_ansi_c_is_bash_s():
    assert ansi_c(r"a\nb\'c\\d\x41\101\u00e9\t") == "a\nb'c\\dAA\u00e9\t"
    with pytest.raises(SnapshotError):
        ansi_c(r"\q")


# -- functions and aliases ----------------------------------------------------------------------

def test_a_function_whose_body_is_allowed_runs_in_its_place():
    assert in_shell("ls -la src", functions={"ls": 'command ls -F "$@"'}).allowed
    denied = in_shell("ls --frob src", functions={"ls": 'command ls -F "$@"'})
    assert codes(denied) == ["BP700"] and "command ls -F --frob src" in denied.denials[0].message


def test_the_cd_function_that_activates_a_venv_is_denied():
    body = 'builtin cd "$@" && [ -f .venv/bin/activate ] && source .venv/bin/activate'
    verdict = denied_only_in_shell("cd sub && ls", "BP700", functions={"cd": body})
    assert "source" in verdict.denials[0].message and "command cd" in verdict.denials[0].hint
    assert in_shell("command cd sub && ls", functions={"cd": body}).allowed


def test_a_function_is_looked_up_by_value_and_after_time():
    body = "rm -rf ~"
    for command in ("'ls'", "\\ls", "time ls", "time -p ls", "FOO=1 ls", "x=$(ls)", "echo ok | ls"):
        if check(command).allowed:
            assert "BP700" in codes(in_shell(command, functions={"ls": body})), command


def test_a_wrapper_runs_the_program_not_the_function():
    for command in ("command ls", "env ls", "find . -maxdepth 0 -exec ls {} +", "xargs ls"):
        assert check(command).allowed == in_shell(command, functions={"ls": "rm -rf ~"}).allowed, command


def test_a_function_calling_itself_is_denied():
    assert "calls itself" in in_shell("ls", functions={"ls": 'ls -F "$@"'}).denials[0].message


def test_an_alias_expands_as_text():
    assert in_shell("ll src", aliases={"ll": "ls -l"}).allowed
    assert codes(in_shell("ll src", aliases={"ll": "ls -l; touch x"})) == ["BP700"]
    # Quoting the word skips the alias (bash), leaving an unknown program here.
    assert codes(in_shell("\\ll", aliases={"ll": "ls -l"})) == ["BP300"]
    # Without expand_aliases the alias is not used.
    options = profiles.BASH_C_OPTIONS
    assert codes(in_shell("ll", aliases={"ll": "ls -l"}, options=options)) == ["BP300"]


def test_an_alias_ending_in_a_blank_expands_the_next_word_too():
    verdict = in_shell("nice ls", aliases={"nice": "nice ", "ls": "rm -rf ~"})
    assert codes(verdict) == ["BP700"] and "blank" in verdict.denials[0].message


def test_an_alias_named_like_a_reserved_word_denies_everything():
    verdict = in_shell("ls", aliases={"if": "echo"})
    assert codes(verdict) == ["BP701"] and "reserved word" in verdict.denials[0].message


def test_a_name_the_client_defines_itself_and_bash_policy_does_not_know():
    verdict = denied_only_in_shell("pgrep x", "BP700", unknown_names={"pgrep": "it wraps pgrep"})
    assert "command pgrep" in verdict.denials[0].hint
    assert in_shell("command pgrep x", unknown_names={"pgrep": "it wraps pgrep"}).allowed


# -- options and the state itself ---------------------------------------------------------------

def test_unknown_state_denies_every_command():
    verdict = in_shell("ls", unknown="no shell snapshot of this session is in ~/.claude")
    assert codes(verdict) == ["BP700"] and "no shell snapshot" in verdict.denials[0].message


@pytest.mark.parametrize("option", ["posix", "keyword", "lastpipe", "compat31", "physical"])
def test_an_option_bash_policy_does_not_model_denies_every_command(option):
    base = state().options
    verdict = in_shell("ls", options=base | {option})
    assert codes(verdict) == ["BP701"] and option in verdict.denials[0].message


@pytest.mark.parametrize("option", ["interactive_comments", "globskipdots", "braceexpand",
                                    "globasciiranges", "patsub_replacement", "extquote"])
def test_an_option_the_reading_needs_turned_off_denies_every_command(option):
    """Red team RT-C: with globskipdots off, `.*/pipe` matched ../pipe."""
    verdict = in_shell("ls", options=state().options - {option})
    assert codes(verdict) == ["BP701"] and f"turns off {option}" in verdict.denials[0].message


@pytest.mark.parametrize("option", ["dotglob", "failglob", "noclobber", "monitor", "onecmd",
                                    "nocasematch", "xpg_echo", "errexit", "pipefail"])
def test_harmless_options_change_nothing(option):
    assert in_shell("rg -n foo ./*.py | head", options=state().options | {option}).allowed


def test_globstar_makes_double_star_deny():
    options = state().options | {"globstar"}
    for command in ("wc -l **/*.py", "for f in **/*.py; do wc -l \"$f\"; done", "cat a/**/b"):
        denied_only_in_shell(command, "BP701", options=options)
    assert in_shell("wc -l */*.py", options=options).allowed
    assert in_shell("rg -g '**/*.py' foo", options=options).allowed  # quoted: rg matches it


def test_nocaseglob_makes_every_glob_deny():
    denied_only_in_shell("cat *.md", "BP701", options=state().options | {"nocaseglob"})


def test_a_glob_operand_reads_standard_input_only_where_it_may_be_a_dash(tmp_path):
    """Without nullglob a glob that matches nothing stays as written; `*` may
    match a file named `-`, `./*` never makes a bare `-`; a match that links
    to /dev/stdin reads it."""
    stdin = "the client's socket"
    assert "BP702" in codes(in_shell("wc -l < f; cat *", stdin=stdin))
    assert in_shell("wc -l < f; cat ./*.txt", stdin=stdin).allowed
    assert in_shell("wc -l < f; cat *", cwd=str(tmp_path)).allowed  # closed: nothing to read
    assert in_shell("wc -l < f; ls *", stdin=stdin).allowed  # ls never reads
    (tmp_path / "in.txt").symlink_to("/dev/stdin")
    assert "BP702" in codes(in_shell("wc -l < f; cat ./*.txt", cwd=str(tmp_path), stdin=stdin))


def test_nullglob_globs_must_match_here(tmp_path):
    """With nullglob a glob that matches nothing vanishes and the words after
    it move up (red team RT-C: `grep a* w.txt` read standard input, `rg f*
    src` searched the whole directory): a glob argument must match, in every
    directory the command may run in; loop words may vanish."""
    (tmp_path / "w.txt").write_text("a\n")
    (tmp_path / ".hidden").write_text("a\n")
    (tmp_path / "src").mkdir()
    options = state().options | {"nullglob"}
    here = str(tmp_path)
    for command in ("grep a* w.txt", "rg f* src", "cat ./*.md", "cat .x*", "cat 'w'*", "ls src/*/",
                    "cat *"):
        verdict = in_shell(command, cwd=here if command != "cat *" else None, options=options)
        assert "BP701" in codes(verdict) and "nullglob" in verdict.denials[0].message, command
    for command in ("cat ./*.txt", "wc -l w.*", "cat .hid*", "ls */", "for f in *.md; do cat \"$f\"; done"):
        assert in_shell(command, cwd=here, options=options).allowed, command
    assert "BP701" in codes(in_shell("cat .hid* ./*.txt", cwd=str(tmp_path / "src"), options=options))


def test_cdable_vars(tmp_path):
    (tmp_path / "sub").mkdir()
    options = state().options | {"cdable_vars"}
    verdict = denied_only_in_shell("cd HOME && ls", "BP701", cwd=str(tmp_path), options=options)
    assert "$HOME" in verdict.denials[0].message
    assert in_shell("cd sub && ls", cwd=str(tmp_path), options=options).allowed
    assert in_shell("cd /tmp && ls", cwd=str(tmp_path), options=options).allowed


def test_a_relative_path_entry_denies_every_command():
    assert codes(in_shell("ls", path=("/usr/bin", "."))) == ["BP701"]
    assert codes(in_shell("ls", path=("/usr/bin", ""))) == ["BP701"]


# -- standard input -----------------------------------------------------------------------------

SOCKET = "Claude Code's own socket"


@pytest.mark.parametrize("command", ["wc -l < README.md; cat", "cat", "read x", "echo $(cat)",
                                     "grep foo", "head -n 1 < a; head -n 1", "(cat)", "{ cat; }",
                                     "jq ."])
def test_a_program_reading_open_stdin_is_denied(command):
    verdict = denied_only_in_shell(command, "BP702", stdin=SOCKET)
    assert SOCKET in verdict.denials[0].message


@pytest.mark.parametrize("command", ["cat < README.md", "echo x | cat", "cat <<'EOF'\nhi\nEOF",
                                     "cat <<< hi", "while read -r l; do echo \"$l\"; done < f",
                                     "rg foo src", "cat README.md", "grep foo a.txt"])
def test_a_program_given_its_input_is_allowed(command):
    assert in_shell(command, stdin=SOCKET).allowed


# -- walks that meet files which never end ------------------------------------------------------

@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "main.py").write_text("foo\n")
    return tmp_path


def test_a_deep_gitignore_linked_to_dev_zero(tree):
    (tree / "src" / "deep" / ".gitignore").symlink_to("/dev/zero")
    for command in ("grep -rn foo src", "grep -r foo .", "rg foo", "rg foo src", "command grep -r foo",
                    "fd main", "git status"):
        (tree / ".git").mkdir(exist_ok=True)
        verdict = in_shell(command, cwd=str(tree))
        assert "BP703" in codes(verdict), (command, verdict.denials)
        assert "/dev/zero" in verdict.denials[0].message
    assert in_shell("grep -n foo src/main.py", cwd=str(tree)).allowed
    assert in_shell("rg foo src/main.py", cwd=str(tree)).allowed  # a file: no walk
    # A client that stops hung commands bounds the walk itself.
    assert in_shell("rg foo src", cwd=str(tree), hangs=None).allowed


def test_a_fifo_met_by_grep_r(tree):
    os.mkfifo(tree / "src" / "deep" / "pipe")
    verdict = in_shell("grep -r foo src", cwd=str(tree))
    assert codes(verdict) == ["BP703"] and "pipe" in verdict.denials[0].message
    assert in_shell("rg foo src", cwd=str(tree)).allowed  # rg skips FIFOs


def test_a_tree_too_large_to_look_at(tree, monkeypatch):
    from bash_policy.judge import client_shell

    monkeypatch.setattr(client_shell, "MAX_WALKED", 2)
    assert "too many" in in_shell("rg foo", cwd=str(tree)).denials[0].message


def test_ugrep_reads_a_number_as_a_recursive_depth(tree):
    """Claude Code's ugrep reads `-3` as --depth=3, a recursive search (GNU
    grep: three lines of context): red team RT-C, tried with ugrep 7.8.4."""
    (tree / "src" / "deep" / ".gitignore").symlink_to("/dev/zero")
    for command in ("grep -3 foo", "grep -2 -n foo src"):
        assert "BP703" in codes(in_shell(command, cwd=str(tree))), command


def test_a_glob_operand_is_followed_where_it_names_a_link(tree):
    """A walker follows a link named on its command line, a glob's match
    included (red team RT-C: `rg foo l*` with lnk -> ../other)."""
    (tree / "other").mkdir()
    (tree / "other" / ".gitignore").symlink_to("/dev/zero")
    (tree / "src" / "lnk").symlink_to("../other")
    here = str(tree / "src")
    for command in ("rg foo l*", "grep -r foo l*", "rg foo lnk"):
        verdict = in_shell(command, cwd=here)
        assert "BP703" in codes(verdict) and "/dev/zero" in verdict.denials[0].message, command
    assert in_shell("rg foo m*", cwd=here).allowed
    assert "BP703" in codes(in_shell('read -r d < list; rg foo -- "$d"', cwd=here))


def test_find_exec_hands_on_links_to_special_files(tree):
    """What find -exec runs opens each path found, following a link (red team
    RT-C: `find . -name "*.txt" -exec cat {} +` with b.txt -> /dev/zero)."""
    (tree / "b.txt").symlink_to("/dev/zero")
    here = str(tree)
    for command in ('find . -name "*.txt" -exec cat {} +', "find . -exec wc -c {} \\;",
                    "find src . -execdir grep hi {} +"):
        verdict = in_shell(command, cwd=here)
        assert "BP703" in codes(verdict) and "b.txt" in verdict.denials[0].message, command
    assert in_shell('find src -name "*.py" -exec cat {} +', cwd=here).allowed
    assert in_shell('find . -name "*.txt"', cwd=here).allowed  # nothing opens what it lists
    os.mkfifo(tree / "src" / "pipe")
    assert "BP703" in codes(in_shell("find src -type p -exec cat {} +", cwd=here))


def test_a_program_that_skips_a_terminal_still_reads_standard_input_it_names():
    """rg searches the directory rather than read a terminal, unless told to
    read standard input (red team RT-C: `rg x -` in Gemini CLI's terminal)."""
    terminal = dict(stdin="a terminal", stdin_unread=frozenset({"rg"}))
    assert in_shell("rg -n foo", **terminal).allowed
    for command in ("rg x -", "rg -f - .", "rg --file=- .", "rg -f /dev/stdin .", "rg -e x -f - w.txt"):
        assert "BP702" in codes(in_shell(command, **terminal)), command


def test_walks_from_the_profile_are_data():
    assert CLAUDE.walks["grep"].special_entries and ".gitignore" in CLAUDE.walks["grep"].files
    assert CLAUDE.walks["grep"].when is not None and CLAUDE.walks["grep"].when.search("-rn")
    assert not CLAUDE.walks["grep"].when.search("-n")
    assert isinstance(CLAUDE.walks["git"], Walk) and CLAUDE.walks["git"].from_root


# -- the profiles ---------------------------------------------------------------------------

def claude_env(home, **extra):
    return {"HOME": str(home), "AI_AGENT": "claude-code_2-1-332_harness", **extra}


def test_claude_code_state_from_this_session_s_snapshot(tmp_path):
    write_snapshot(tmp_path, functions={"cd": 'builtin cd "$@"'}, aliases={"ll": "ls -l"},
                   shopt_on=("globstar",))
    got = shell_state(CLAUDE, {}, claude_env(tmp_path), "ls")
    assert got.unknown is None and got.client == "Claude Code 2.1.332"
    assert got.functions == {"cd": '    builtin cd "$@"'} and got.aliases == {"ll": "ls -l"}
    assert {"globstar", "expand_aliases", "monitor"} <= got.options and "extglob" not in got.options
    assert set(got.replacements) == {"grep", "find", "rg"} and "pkill" in got.unknown_names
    assert got.stdin is None and got.path == ("/usr/bin", "/bin")
    assert shell_state(CLAUDE, {}, claude_env(tmp_path), "wc -l < f; cat").stdin.startswith("Claude")


def test_before_the_snapshot_is_written_the_state_comes_from_the_startup_files(tmp_path):
    """Claude Code writes the snapshot when its Bash tool first runs a command,
    after that call's hook: until then the state is read from the files the
    snapshot is written from.  A snapshot older than the session is another's."""
    path = write_snapshot(tmp_path, functions={"ls": "rm -rf ~"})
    path.rename(path.with_name("snapshot-bash-1000000000000-old001.sh"))
    (tmp_path / ".bashrc").write_text("shopt -s globstar\nalias ll='ls -l'\n"
                                      'cd() { builtin cd "$@" && . .venv/bin/activate; }\n')
    got = shell_state(CLAUDE, {}, claude_env(tmp_path, PATH="/usr/bin:/bin"), "ls")
    assert got.unknown is None and "startup files" in got.source
    assert "activate" in got.functions["cd"] and "ls" not in got.functions
    assert got.aliases == {"ll": "ls -l"} and {"globstar", "expand_aliases"} <= got.options
    assert got.path == ("/usr/bin", "/bin")
    policy = dataclasses.replace(Policy.default(), shell=got)
    assert codes(check("cd sub && ls", policy)) == ["BP700"]


def test_startup_files_that_fail_leave_the_state_unknown(tmp_path):
    (tmp_path / ".bashrc").write_text("exit 3\n")
    got = shell_state(CLAUDE, {}, claude_env(tmp_path), "ls")
    assert got.unknown and "exited 3" in got.unknown


def test_a_snapshot_still_being_written_or_unreadable(tmp_path):
    path = write_snapshot(tmp_path, functions={"ls": "rm -rf ~"})
    path.write_text(snapshot_text(functions={"ls": "rm -rf ~"}).split("# Aliases")[0])
    # Being written by the first command: the startup files say the same.
    assert shell_state(CLAUDE, {}, claude_env(tmp_path), "ls").unknown is None
    path.write_text(snapshot_text().replace("# Aliases\n", "# Aliases\nsource x\n"))
    assert "cannot read" in shell_state(CLAUDE, {}, claude_env(tmp_path), "ls").unknown


def test_two_snapshots_that_may_be_this_session_s(tmp_path):
    write_snapshot(tmp_path, functions={"cd": 'builtin cd "$@"'})
    time.sleep(0.002)
    write_snapshot(tmp_path, functions={"cd": "source x"}, shopt_on=("nullglob",))
    got = shell_state(CLAUDE, {}, claude_env(tmp_path), "ls")
    assert "cd" in got.unknown_names and "nullglob" in got.options


def test_merge_keeps_what_is_alike():
    one = parse(snapshot_text(functions={"f": "ls"}, aliases={"a": "ls"}), "one")
    two = parse(snapshot_text(functions={"f": "ls", "g": "ls"}, aliases={"a": "ls -l"}), "two")
    merged, unknown = merge([one, two])
    assert merged.functions == {"f": "    ls"} and set(unknown) == {"g", "a"}


@pytest.mark.parametrize("extra,why", [
    ({"SHELL": "/bin/zsh"}, "zsh"),
    ({"BASH_ENV": "/home/u/.bash_env"}, "BASH_ENV"),
])
def test_claude_code_state_unknown(tmp_path, extra, why):
    write_snapshot(tmp_path)
    assert why in shell_state(CLAUDE, {}, claude_env(tmp_path, **extra), "ls").unknown


def test_the_environment_s_options_and_functions(tmp_path):
    write_snapshot(tmp_path)
    env = claude_env(tmp_path, SHELLOPTS="braceexpand:posix",
                     **{"BASH_FUNC_ls%%": "() {  rm -rf ~\n}"})
    got = shell_state(CLAUDE, {}, env, "ls")
    assert "posix" in got.options and "rm -rf" in got.functions["ls"]


def test_gemini_state_is_a_plain_bash_and_its_terminal():
    gemini = load_profile("gemini")
    got = shell_state(gemini, {}, {"PATH": "/usr/bin:/bin"}, "cat")
    # This test's process is no `gemini -p`: interactive, whose stdin is a terminal.
    assert got.stdin and "terminal" in got.stdin and got.functions == {}
    assert "nullglob" not in got.options and "dotglob" not in got.options
    policy = dataclasses.replace(Policy.default(), shell=got)
    assert codes(check("cat", policy)) == ["BP702"]
    assert check("rg -n foo", policy).allowed  # rg searches instead of reading a terminal


def test_without_a_bashrc_only_claude_code_s_defaults(tmp_path):
    """Claude Code's snapshot then holds `shopt -s expand_aliases` and its own
    block only: the command's shell has bash -c's default options."""
    got = shell_state(CLAUDE, {}, claude_env(tmp_path), "ls")
    assert got.unknown is None and got.functions == {} and got.aliases == {}
    assert got.options == profiles.BASH_C_OPTIONS | {"expand_aliases"}
    bare = "# Snapshot file\nshopt -s expand_aliases\n" + snapshot_text().split("# Aliases\n")[1]
    (tmp_path / ".claude" / "shell-snapshots").mkdir(parents=True)
    (tmp_path / ".claude" / "shell-snapshots" / f"snapshot-bash-{int(time.time() * 1000)}-b1.sh"
     ).write_text(bare)
    again = shell_state(CLAUDE, {}, claude_env(tmp_path), "ls")
    assert "snapshot" in again.source and again.options == got.options


@pytest.mark.parametrize("name", ["eval", "pwd", "true", "builtin"])
def test_a_function_named_like_a_word_of_claude_code_s_wrapper(tmp_path, name):
    """`… && eval 'CMD' && pwd -P >| FILE`: a user function by one of those
    names runs around every command."""
    write_snapshot(tmp_path, functions={name: "echo hi"})
    got = shell_state(CLAUDE, {}, claude_env(tmp_path), "ls")
    assert got.unknown and f"function {name}" in got.unknown


def test_an_exported_function_named_like_a_word_of_gemini_s_wrapper():
    got = shell_state(load_profile("gemini"), {}, {"BASH_FUNC_trap%%": "() {  :\n}"}, "ls")
    assert got.unknown and "function trap" in got.unknown


def test_arguments_replace_only_an_unquoted_quoted_at():
    from bash_policy.judge.client_shell import _with_arguments

    assert _with_arguments('command ls -F "$@" | head', "-la 'a b'") == "command ls -F -la 'a b' | head"
    assert _with_arguments('x ${1+"$@"}', "y") == "x y"
    assert _with_arguments("echo '\"$@\"' \"a$@b\"", "y") == "echo '\"$@\"' \"a$@b\""
    # Inside single quotes it is text: the call's quotes cannot break out.
    assert in_shell("ls \"x' ; touch y '\"", functions={"ls": "command ls '\"$@\"'"}).allowed


def test_a_path_entry_inside_the_repository_denies_every_command(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    bin_dir = str(tmp_path / "node_modules" / ".bin")
    verdict = in_shell("ls", cwd=str(tmp_path / "src"), path=("/usr/bin", bin_dir))
    assert codes(verdict) == ["BP701"] and "node_modules" in verdict.denials[0].message
    assert in_shell("ls", cwd=str(tmp_path / "src"), path=("/usr/bin", "/opt/tools/bin")).allowed


def test_a_path_entry_under_a_directory_that_is_no_repository_is_the_user_s(tmp_path):
    assert in_shell("ls", cwd=str(tmp_path), path=("/usr/bin", str(tmp_path / ".local" / "bin"))).allowed
