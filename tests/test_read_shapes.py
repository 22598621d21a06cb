"""What a value or operand makes a program open (spec READ_SHAPES), judged with a working directory.

Each set-up is the one a real program opened under strace (tests/test_open_probe.py
finds them): a FIFO or device among the files it opens blocks or never ends.
"""

from __future__ import annotations

import os

import pytest

from bash_policy import check
from bash_policy.judge.policy import ConfigError, Policy


def verdict(command, cwd):
    return check(command, cwd=str(cwd))


def denied_special(command, cwd) -> bool:
    result = verdict(command, cwd)
    return not result.allowed and any(d.rule == "special_operand" and d.effect == "hang"
                                      for d in result.denials)


def test_iconv_reads_a_charmap_only_when_the_name_holds_a_slash(tmp_path):
    os.mkfifo(tmp_path / "cm")
    (tmp_path / "a.txt").write_text("x\n")
    assert denied_special("iconv -f ./cm -t utf-8 a.txt", tmp_path)
    assert denied_special("iconv -f utf-8 -t ./cm a.txt", tmp_path)
    os.rename(tmp_path / "cm", tmp_path / "latin1")
    assert verdict("iconv -f latin1 -t utf-8 a.txt", tmp_path).allowed, "a charset name is no file"
    assert not check("iconv -f /dev/zero -t utf-8 a.txt").allowed


@pytest.mark.parametrize("command", ["man -w -M ./mp ls", "apropos -M ./mp ls", "whatis -M ./mp ls",
                                     "man -k -M ./mp2:./mp ls"])
def test_a_manual_path_is_a_directory_man_opens_files_in(tmp_path, command):
    (tmp_path / "mp" / "man1").mkdir(parents=True)
    (tmp_path / "mp" / "man1" / "ls.1").write_text(".TH LS 1\n")
    assert verdict(command, tmp_path).allowed
    os.mkfifo(tmp_path / "mp" / "index.db")
    assert denied_special(command, tmp_path)


def test_pip_path_opens_every_metadata_file_under_it(tmp_path):
    meta = tmp_path / "pp" / "x-1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "RECORD").write_text("")
    assert verdict("pip list --path pp", tmp_path).allowed
    (meta / "METADATA").symlink_to("/dev/zero")
    assert denied_special("pip list --path pp", tmp_path)
    assert denied_special("pip freeze --path pp", tmp_path)


def test_kubectl_reads_every_file_in_a_directory(tmp_path):
    (tmp_path / "kd" / "sub").mkdir(parents=True)
    (tmp_path / "kd" / "pod.yaml").write_text("kind: Pod\n")
    (tmp_path / "kd" / "null.yaml").symlink_to("/dev/null")
    assert verdict("kubectl get -f kd", tmp_path).allowed
    os.mkfifo(tmp_path / "kd" / "sub" / "svc.yaml")
    assert denied_special("kubectl get -f kd", tmp_path)
    assert denied_special("kubectl get -f kd/pod.yaml,kd", tmp_path)
    assert verdict("kubectl get -f kd/pod.yaml", tmp_path).allowed


def test_7z_opens_the_next_volumes_and_a_directory_s_files(tmp_path):
    (tmp_path / "s.7z.001").write_bytes(b"7z")
    (tmp_path / "other.7z").write_bytes(b"7z")
    assert verdict("7z l s.7z.001", tmp_path).allowed
    os.mkfifo(tmp_path / "s.7z.002")
    assert denied_special("7z l s.7z.001", tmp_path)
    assert denied_special("7z t s.7z.001", tmp_path)
    assert verdict("7z l other.7z", tmp_path).allowed, "other names are not its volumes"
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "d" / "x")
    assert denied_special("7z l d", tmp_path)


def test_find_samefile_opens_its_file(tmp_path):
    os.mkfifo(tmp_path / "f")
    assert denied_special("find . -samefile f", tmp_path)
    (tmp_path / "g").write_text("")
    assert verdict("find . -samefile g", tmp_path).allowed


def test_a_directory_too_large_to_look_through_denies(tmp_path):
    (tmp_path / "kd").mkdir()
    for k in range(10_001):
        (tmp_path / "kd" / f"{k}.yaml").touch()
    assert denied_special("kubectl get -f kd", tmp_path)


def test_a_link_loop_and_links_to_directories_end(tmp_path):
    (tmp_path / "kd").mkdir()
    (tmp_path / "kd" / "loop").symlink_to("..")
    (tmp_path / "kd" / "self").symlink_to(".")
    assert verdict("kubectl get -f kd", tmp_path).allowed
    (tmp_path / "kd" / "dev").symlink_to("/dev")
    assert denied_special("kubectl get -f kd", tmp_path), "/dev holds devices"


def test_a_link_to_standard_input_in_a_directory_reads_it(tmp_path):
    (tmp_path / "kd").mkdir()
    (tmp_path / "kd" / "in.yaml").symlink_to("/dev/stdin")
    result = verdict("kubectl get -f kd\nls", tmp_path)
    assert [d.code for d in result.denials] == ["BP108"]


def test_without_a_working_directory_only_names_are_judged():
    assert check("kubectl get -f kd").allowed and check("7z l s.7z.001").allowed
    assert not check("kubectl get -f /dev").allowed and not check("man -w -M /proc/self ls").allowed


@pytest.mark.parametrize("reads", ["tree", 1])
def test_an_unknown_shape_fails_at_load(reads):
    with pytest.raises(ConfigError, match="reads"):
        Policy.from_mapping({"programs": {"tool": {"positionals": "read",
                                                   "flags": [{"flag": "-x=F", "reads": reads}]}}})
    with pytest.raises(ConfigError, match="files"):
        Policy.from_mapping({"programs": {"tool": {"positionals": {"role": "read", "files": "tree"}}}})


@pytest.mark.parametrize("command", ['7z l ./s*.001', '7z l ~+/s.7z.001', '7z l "$PWD/s.7z.001"',
                                     'pip list --path "$PWD/pp"', "pip list --path ~+/pp",
                                     "7z t ./s.7z.0?1"])
def test_globs_and_the_working_directory_are_looked_through_too(tmp_path, command):
    (tmp_path / "s.7z.001").write_bytes(b"7z")
    os.mkfifo(tmp_path / "s.7z.002")
    (tmp_path / "pp" / "x-1.0.dist-info").mkdir(parents=True)
    os.mkfifo(tmp_path / "pp" / "x-1.0.dist-info" / "METADATA")
    result = verdict(command, tmp_path)
    assert not result.allowed and any(d.effect == "hang" for d in result.denials), command
