"""Read operands that resolve to FIFOs, sockets or devices deny (with a working directory)."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from bash_policy import check
from bash_policy.repo.files import special_file


def codes(command, cwd):
    return [d.code for d in check(command, cwd=str(cwd)).denials]


def test_committed_symlink_to_a_device_denies(tmp_path):
    (tmp_path / "README.md").symlink_to("/dev/zero")
    verdict = check("head -n 5 README.md", cwd=str(tmp_path))
    assert [d.code for d in verdict.denials] == ["BP603"]
    assert "/dev/zero" in verdict.denials[0].message and verdict.denials[0].effect == "hang"
    assert verdict.denials[0].rule == "special_operand"


def test_fifo_and_socket_deny(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        assert codes("cat pipe", tmp_path) == ["BP603"]
        assert codes("wc -l sock", tmp_path) == ["BP603"]
        assert special_file(str(tmp_path / "sock")) == "a socket"
    finally:
        server.close()


def test_regular_files_directories_and_streams_pass(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "null").symlink_to("/dev/null")
    for command in ("head -n 5 a.txt", "ls d", "cat missing", "diff a.txt /dev/null", "cat null",
                    "cat -"):
        assert check(command, cwd=str(tmp_path)).allowed, command


def test_cd_is_followed(tmp_path):
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / "p")
    assert codes("cd sub && cat p", tmp_path) == ["BP603"]
    assert check("cat p", cwd=str(tmp_path)).allowed


def test_a_device_named_by_its_path_is_denied_once(tmp_path):
    """Under /dev, /proc and /sys the name decides (BP406, BP403 for a flag's
    value); the look on disk would only say the same again (issue 22.5)."""
    (tmp_path / "z").symlink_to("/dev/zero")
    for command, expected in (("cat /dev/zero", ["BP406"]), ("grep -f /dev/zero x", ["BP403"]),
                              ('for x in /dev/zero; do wc -l "$x"; done', ["BP406"]),
                              ("7z l /dev/zero", ["BP406"]), ("cat z /dev/zero", ["BP603", "BP406"])):
        verdict = check(command, cwd=str(tmp_path))
        assert [d.code for d in verdict.denials] == expected, command
        assert verdict.denials[-1].effect == "hang", command


def test_without_cwd_nothing_is_looked_up():
    assert check("head -n 5 README.md").allowed


def test_input_redirection_from_a_fifo_or_device_denies(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "zero").symlink_to("/dev/zero")
    for command in ("cat < pipe", "wc -l < zero", "while read -r l; do echo x; done < pipe"):
        verdict = check(command, cwd=str(tmp_path))
        assert "BP501" in [d.code for d in verdict.denials], command
    assert check("cat < /dev/null", cwd=str(tmp_path)).allowed


def test_a_link_to_standard_input_is_judged_by_name_not_by_the_checkers_stdin(tmp_path):
    """`cat link` where link -> /dev/stdin reads the script's later lines when
    it is piped into bash.  Following the link in the checker's process would
    judge the checker's own standard input (a regular file here), so links
    are followed only up to /dev."""
    (tmp_path / "in").symlink_to("/dev/stdin")
    (tmp_path / "tty").symlink_to("/dev/fd/0")
    with open(tmp_path / "plain", "w") as plain, open(plain.name) as stdin:
        saved = os.dup(0)
        os.dup2(stdin.fileno(), 0)
        try:
            for command in ("cat in\nls", "cat < in\nls", "sed 'r in' plain\nls",
                            "awk '{ getline x < \"in\" }' plain\nls"):
                assert codes(command, tmp_path) == ["BP108"], command
            assert codes("cat tty", tmp_path) == ["BP603"]
            assert check("cat in", cwd=str(tmp_path)).allowed  # last line: nothing to read
        finally:
            os.dup2(saved, 0)
            os.close(saved)


def test_globs_and_loop_words_are_looked_at(tmp_path):
    """`cat ./*` reads every match: a FIFO among them blocks (red team RT1 F3)."""
    (tmp_path / "a.txt").write_text("x\n")
    os.mkfifo(tmp_path / "p")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "z").symlink_to("/dev/zero")
    for command in ("cat ./*", "wc -l -- *", "cat */*", "cat s[u]b/*", 'cat "s"*/*',
                    'for x in ./*; do wc -l "$x"; done', 'for x in p; do wc -l "$x"; done'):
        assert codes(command, tmp_path) == ["BP603"], command
    for command in ("cat ./*.txt", "cat '*'", 'for x in ./*.txt; do wc -l "$x"; done',
                    "ls ./*"):
        assert check(command, cwd=str(tmp_path)).allowed, command


def test_values_of_flags_that_read_a_file_are_looked_up(tmp_path):
    """`grep -f p f` reads p before anything else: a FIFO blocks, a link to
    /dev/stdin reads the script's later lines."""
    (tmp_path / "f").write_text("x\n")
    os.mkfifo(tmp_path / "p")
    (tmp_path / "in").symlink_to("/dev/stdin")
    assert codes("grep -f p f", tmp_path) == ["BP603"]
    assert codes("grep -f in f\nls", tmp_path) == ["BP108"]
    assert check("grep -f f f\nls", cwd=str(tmp_path)).allowed


def test_files_a_rule_reads_are_looked_up(tmp_path):
    """Files named where the engine sees no file: jq's input files and
    --slurpfile values, tar's archive, kubectl's template inside -o (RT2 F12, F21)."""
    (tmp_path / "f.json").write_text("{}\n")
    os.mkfifo(tmp_path / "p")
    (tmp_path / "in").symlink_to("/dev/stdin")
    for command in ("jq . p", "jq --slurpfile v p . f.json", "yq . p", "tar -tf p", "tar tf p",
                    "tar -X p -tf f.json", "kubectl get -f p", "kubectl config view -o jsonpath-file=p",
                    "kubectl get pods -o go-template-file --template=p"):
        assert codes(command, tmp_path) == ["BP603"], command
    for command in ("jq . in\nls", "tar -tf in\nls", "kubectl config view -o jsonpath-file=in\nls"):
        assert codes(command, tmp_path) == ["BP108"], command
    for command in ("jq . f.json\nls", "tar -tf f.json\nls", "kubectl config view -o jsonpath-file=f.json\nls"):
        assert check(command, cwd=str(tmp_path)).allowed, command


def test_pwd_and_quoted_absolute_prefixes_are_looked_up(tmp_path):
    """bash sets PWD to the directory: `"$PWD/p"` is `p` there; a glob's
    quoted absolute prefix is still absolute (red team RT3 F1)."""
    (tmp_path / "f").write_text("x\n")
    os.mkfifo(tmp_path / "p")
    (tmp_path / "z").symlink_to("/dev/zero")
    for command in ('cat "$PWD/p"', "cat $PWD/p", 'cat "${PWD}/p"', 'head "$PWD"/p', 'wc -c "$PWD/z"',
                    'grep x "$PWD"/*', f"cat '{tmp_path}'/*"):
        assert codes(command, tmp_path) == ["BP603"], command
    for command in ('cat "$PWD/f"', 'grep x "$PWD"/f*', 'cat "$PWDX/p"'):
        assert check(command, cwd=str(tmp_path)).allowed, command


def test_project_files_a_program_reads_by_itself_are_looked_up(tmp_path):
    """cargo reads Cargo.toml here or above, npm package.json: a committed link
    to /dev/zero or a FIFO never ends (red team RT3 F6)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "Cargo.toml").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "package.json")
    for command in ("cargo metadata --no-deps --format-version 1", "npm ls"):
        assert codes(command, tmp_path) == ["BP603"], command
        assert codes(command, tmp_path / "sub") == ["BP603"], command
    assert check("uv --version", cwd=str(tmp_path)).allowed
    (tmp_path / "sub" / ".ignore").symlink_to("/dev/zero")   # rg and fd read it before searching
    for command in ("rg x", "fd x", "fdfind x"):
        assert codes(command, tmp_path / "sub") == ["BP603"], command


def test_tilde_plus_and_lists_of_files_in_a_value_are_looked_up(tmp_path):
    """`~+` is $PWD; `file -m a:b` and `kubectl -f a,b` read each file (red team RT3 F1b, F10)."""
    (tmp_path / "a").write_text("x\n")
    os.mkfifo(tmp_path / "p")
    (tmp_path / "z").symlink_to("/dev/zero")
    for command in ("cat ~+/p", "wc -c ~+/z", "file -m a:p a", "file --magic-file=a:z a",
                    "kubectl get -f a,p", "kubectl get --filename=a,z"):
        assert codes(command, tmp_path) == ["BP603"], command
    for command in ("cat ~+/a", "file -m a:a a", "kubectl get -f a,a"):
        assert check(command, cwd=str(tmp_path)).allowed, command


def test_files_git_and_cargo_read_by_themselves_and_the_directory_stack(tmp_path):
    """A FIFO at objects/info/alternates or MERGE_RR blocks git; a link to
    /dev/stdin at .cargo/config.toml reads the script; `~0` is $PWD (red team RT4)."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert check("git log --oneline", cwd=str(repo)).allowed
    for name in ("objects/info/alternates", "MERGE_RR", "objects/info/commit-graph"):
        os.mkfifo(repo / ".git" / name)
        assert codes("git log --oneline", repo) == ["BP601"], name  # the repository cannot be judged
        os.unlink(repo / ".git" / name)
    crate = tmp_path / "crate"
    (crate / ".cargo").mkdir(parents=True)
    (crate / ".cargo" / "config.toml").symlink_to("/dev/stdin")
    assert codes("cargo --version", crate) == ["BP603"]
    os.mkfifo(tmp_path / "p")
    for command in ("cat ~0/p", "cat ~+0/p", "cat ~-0/p"):
        assert codes(command, tmp_path) == ["BP603"], command


def test_a_zone_file_named_in_date_is_looked_up(tmp_path):
    """`date -d 'TZ="PATH" now'` reads PATH as its zone file: a FIFO there
    blocked date until killed (coreutils 9.1); a regular file passes."""
    os.mkfifo(tmp_path / "zone")
    (tmp_path / "plain").write_bytes(b"TZif")
    assert codes(f"date -d 'TZ=\"{tmp_path}/zone\" now'", tmp_path) == ["BP603"]
    assert codes(f"date -d 'TZ=\"{tmp_path}/plain\" now'", tmp_path) == []
    assert codes(f"date -d 'TZ=\":{tmp_path}/zone\" now'", tmp_path) == ["BP603"]


def test_a_shellcheckrc_that_follows_sources_denies(tmp_path):
    # ShellCheck 0.9.0 opens the files a script sources only with -x or
    # external-sources=true in a .shellcheckrc at or above the script.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.sh").write_text("#!/bin/sh\n. /dev/zero\n")
    assert codes("shellcheck src/a.sh", tmp_path) == []
    (tmp_path / ".shellcheckrc").write_text("# follow\nexternal-sources = true\n")
    assert codes("shellcheck src/a.sh", tmp_path) == ["BP601"]
    assert codes("shellcheck src/*.sh", tmp_path) == ["BP601"]
    assert codes("cd src && shellcheck a.sh", tmp_path) == ["BP601"]
    assert codes("shellcheck --norc src/a.sh", tmp_path) == []
    (tmp_path / ".shellcheckrc").write_text("external-sources=false\ndisable=SC2086\n")
    assert codes("shellcheck src/a.sh", tmp_path) == []
    (tmp_path / ".shellcheckrc").unlink()
    os.mkfifo(tmp_path / "src" / "shellcheckrc")
    assert codes("shellcheck src/a.sh", tmp_path) == ["BP601"]


def _member(name: bytes, data: bytes) -> bytes:
    header = name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8)
    return header + str(len(data)).encode().ljust(10) + b"`\n" + data + (b"\n" if len(data) % 2 else b"")


def test_thin_archives_and_archives_holding_them_deny_binutils(tmp_path):
    # binutils 2.40: nm, objdump and size open the files a thin archive names
    # (a FIFO blocked them); objdump and size follow a thin archive stored in
    # an ordinary one.  Without operands they read a.out.
    os.mkfifo(tmp_path / "m.o")
    thin = b"!<thin>\n" + _member(b"m.o/", b"")[:48] + b"1096".ljust(10) + b"`\n"
    (tmp_path / "thin.a").write_bytes(thin)
    (tmp_path / "outer.a").write_bytes(b"!<arch>\n" + _member(b"thin.a/", thin))
    (tmp_path / "plain.a").write_bytes(b"!<arch>\n" + _member(b"x.o/", b"\x7fELF") + _member(b"y.o/", b"abc"))
    (tmp_path / "bsd.a").write_bytes(b"!<arch>\n" + _member(b"#1/8", b"thin.a\0\0" + thin))
    (tmp_path / "link.a").symlink_to("thin.a")
    for command in ("nm thin.a", "objdump -d outer.a", "size ./*.a", "nm link.a", "size bsd.a"):
        assert codes(command, tmp_path) == ["BP603"], command
    assert codes("nm -C plain.a", tmp_path) == []
    assert codes("objdump -h plain.a", tmp_path) == []
    assert codes("nm", tmp_path) == []
    (tmp_path / "a.out").symlink_to("m.o")
    assert codes("nm", tmp_path) == ["BP603"]
    assert codes("size -A", tmp_path) == ["BP603"]


def test_a_checksum_list_naming_a_fifo_denies(tmp_path):
    # coreutils 9.1: md5sum -c LIST opens each name in LIST (a FIFO blocked).
    (tmp_path / "a.txt").write_text("hi\n")
    (tmp_path / "good.md5").write_text("764efa883dda1e11db47671c4a3bbd9e  a.txt\n")
    assert codes("md5sum -c good.md5", tmp_path) == []
    os.mkfifo(tmp_path / "ff")
    for line in ("d41d8cd98f00b204e9800998ecf8427e  ff", "d41d8cd98f00b204e9800998ecf8427e ff",
                 "d41d8cd98f00b204e9800998ecf8427e *ff", "MD5 (ff) = d41d8cd98f00b204e9800998ecf8427e",
                 "\\d41d8cd98f00b204e9800998ecf8427e  f\\\\f", "d41d8cd98f00b204e9800998ecf8427e  ff\0x",
                 # coreutils drops the CR of a CRLF line (red team RT-E)
                 "d41d8cd98f00b204e9800998ecf8427e  ff\r"):
        (tmp_path / "bad.md5").write_bytes(f"764efa883dda1e11db47671c4a3bbd9e  a.txt\n{line}\n".encode())
        if "\\\\" in line:
            os.mkfifo(tmp_path / "f\\f")
        assert codes("md5sum -c bad.md5", tmp_path) == ["BP603"], line
    os.mkfifo(tmp_path / "list")
    assert codes("sha256sum -c list", tmp_path) == ["BP603"]


@pytest.mark.parametrize("command", ["unzip -l 'Z/*.zip'", "unzip -Z 'Z/p*'", "zipinfo 'Z/*.zip'",
                                     "7z l 'Z/*'", "7za t 'Z/p.*'"])
def test_a_wildcard_the_program_expands_itself_is_looked_at(tmp_path, command):
    """unzip, zipinfo and 7z expand a quoted pattern themselves and open
    every match: a FIFO among them blocked, and all three catch SIGTERM (red
    team RT-G).  A match that is a plain archive passes."""
    (tmp_path / "Z").mkdir()
    (tmp_path / "Z" / "z.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    assert codes(command.replace("'Z/*", "'Z/z*").replace("'Z/p", "'Z/z"), tmp_path) == []
    os.mkfifo(tmp_path / "Z" / "p.zip")
    assert set(codes(command, tmp_path)) == {"BP603"}


@pytest.mark.parametrize("command", ["diff f1 dp", "diff dp f1", "diff -u f1 dp/", "diff --to-file=dp f1"])
def test_diff_of_a_file_and_a_directory_opens_the_file_of_its_name_there(tmp_path, command):
    """GNU diffutils 3.8 compares FILE with DIR/FILE: a FIFO there blocked
    (red team RT-I); a plain file there passes."""
    (tmp_path / "f1").write_text("a\n")
    (tmp_path / "dp").mkdir()
    (tmp_path / "dp" / "f1").write_text("b\n")
    assert codes(command, tmp_path) == []
    (tmp_path / "dp" / "f1").unlink()
    os.mkfifo(tmp_path / "dp" / "f1")
    assert codes(command, tmp_path) == ["BP603"]


def test_a_glob_over_more_entries_than_the_checker_looks_at_is_denied(tmp_path):
    """Past the entries a glob is looked at in, a FIFO among them went
    unseen and `cat ./*` was allowed: the checker cannot know, so it denies."""
    from bash_policy.judge.rules.files import _MAX_ENTRIES

    for k in range(_MAX_ENTRIES + 1):
        (tmp_path / f"f{k:05d}").touch()
    os.mkfifo(tmp_path / "zfifo")
    assert codes("cat ./*", tmp_path) == ["BP603"]
    assert codes("cat z*", tmp_path) == ["BP603"]
    assert codes("cat f00001", tmp_path) == []
