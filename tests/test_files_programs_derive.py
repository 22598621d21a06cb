"""Files a program opens by names it derives, and config it reads as it
parses it (red team RT-D on the specs added for issue 20): each case is
denied where the program would open a special file or follow sources, and
allowed beside plain files."""

import os
import zipfile

from bash_policy import check


def codes(command, cwd):
    return sorted({d.code for d in check(command, cwd=str(cwd)).denials})


def test_a_missing_name_is_tried_with_the_suffixes_the_program_adds(tmp_path):
    """gzip tries data.gz, data.z, data-z and data.Z for a missing data; unzip
    x.zip and x.ZIP for x; lspci -i ids.gz falls back to ids."""
    (tmp_path / "data.gz").symlink_to("/dev/urandom")
    os.mkfifo(tmp_path / "x.zip")
    os.mkfifo(tmp_path / "ids")
    for command in ("zcat -f data", "gzip -dcf data", "zgrep -c foo data", "unzip -l x", "lspci -i ids.gz"):
        assert codes(command, tmp_path) == ["BP603"], command
    (tmp_path / "plain.gz").write_bytes(b"")
    for command in ("zcat -f plain", "unzip -l plain", "zcat -f missing"):
        assert check(command, cwd=str(tmp_path)).allowed, command
    assert "BP400" in codes("zcat -S .x data", tmp_path)  # a suffix of the command's own


def test_shellcheckrc_directives_anywhere_on_a_line_and_from_the_script_s_real_path(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".shellcheckrc").write_text("disable=SC2086 external-sources=true\n")
    (tmp_path / "a" / "z.sh").write_text("#!/bin/bash\n. /dev/zero\n")
    assert codes("shellcheck z.sh", tmp_path / "a") == ["BP601"]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "lnk").symlink_to("../a")
    (tmp_path / "b" / "zl.sh").symlink_to("../a/z.sh")
    for command in ("shellcheck lnk/z.sh", "shellcheck zl.sh"):
        assert codes(command, tmp_path / "b") == ["BP601"], command
    (tmp_path / "a" / ".shellcheckrc").write_text("disable=SC2086 external-sources=false\n")
    assert check("shellcheck z.sh", cwd=str(tmp_path / "a")).allowed


def test_mvn_climbs_the_logical_path(tmp_path):
    """Debian's mvn script climbs `pwd` (red team RT-D: `cd lnk && mvn -v`
    ran under the .mvn above the link, not above its target)."""
    (tmp_path / "w" / ".mvn").mkdir(parents=True)
    (tmp_path / "w" / ".mvn" / "jvm.config").write_text("-Xlog:gc:file=canary\n")
    (tmp_path / "other" / "sub").mkdir(parents=True)
    (tmp_path / "w" / "lnk").symlink_to("../other/sub")
    assert codes("cd lnk && mvn -v", tmp_path / "w") == ["BP601"]
    assert codes("mvn -v", tmp_path / "w" / "lnk") == ["BP601"]
    assert check("mvn -v", cwd=str(tmp_path / "other" / "sub")).allowed


def test_an_archive_header_read_otherwise_by_bfd_is_denied(tmp_path):
    """BFD reads a member size's leading digits (`1096x`) and goes on to a
    thin archive the checker's stricter reading missed (red team RT-D)."""
    def member(name: bytes, data: bytes, size: bytes | None = None) -> bytes:
        size = size if size is not None else str(len(data)).encode()
        header = name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8) \
            + size.ljust(10) + b"`\n"
        return header + data + (b"\n" if len(data) % 2 else b"")
    plain = b"!<arch>\n" + member(b"a.o/", b"x" * 10)
    (tmp_path / "plain.a").write_bytes(plain)
    assert check("size plain.a", cwd=str(tmp_path)).allowed
    (tmp_path / "odd.a").write_bytes(b"!<arch>\n" + member(b"a.o/", b"x" * 10, b"10x"))
    for command in ("size odd.a", "objdump -h odd.a", "nm odd.a"):
        assert codes(command, tmp_path) == ["BP603"], command


def test_checksum_list_escapes_read_left_to_right(tmp_path):
    r"""`\\\\n` in an escaped line is a backslash and `n` (red team RT-D: the
    FIFO `a\nb`, written `a\\\\nb`, was read as a newline and passed)."""
    os.mkfifo(tmp_path / "a\\nb")
    (tmp_path / "SUMS").write_text("\\d41d8cd98f00b204e9800998ecf8427e  a\\\\nb\n")
    for program in ("md5sum", "sha256sum", "b2sum"):
        assert codes(f"{program} -c SUMS", tmp_path) == ["BP603"], program
    (tmp_path / "OK").write_text("\\d41d8cd98f00b204e9800998ecf8427e  a\\\\\\\\nb\n")  # names a\\nb: absent
    assert check("md5sum -c OK", cwd=str(tmp_path)).allowed


def test_unzip_tries_the_zip_suffixes_for_encryption_too(tmp_path):
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as archive:
        archive.writestr("a.txt", "a")
    assert check("unzip -t plain", cwd=str(tmp_path)).allowed
