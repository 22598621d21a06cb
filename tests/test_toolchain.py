"""cargo/rustc are denied where a rust-toolchain file could make rustup install a toolchain."""

from bash_policy import check


def codes(command, cwd):
    return [d.code for d in check(command, cwd=str(cwd)).denials]


def test_toolchain_file_in_a_parent_denies(tmp_path):
    (tmp_path / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "nightly"\n')
    (tmp_path / "crate").mkdir()
    assert codes("cargo --version", tmp_path / "crate") == ["BP601"]
    assert codes("rustc -V", tmp_path) == ["BP601"]
    assert codes("cargo metadata --no-deps --format-version 1", tmp_path) == ["BP601"]
    # pip runs `rustc --version` for its User-Agent on every networked command.
    assert codes("pip list -o", tmp_path / "crate") == ["BP601"]


def test_legacy_file_name_denies(tmp_path):
    (tmp_path / "rust-toolchain").write_text("nightly\n")
    verdict = check("cargo --version", cwd=str(tmp_path))
    assert [d.code for d in verdict.denials] == ["BP601"]
    assert "rust-toolchain" in verdict.denials[0].message and "cat " in verdict.denials[0].hint


def test_cd_into_a_toolchain_directory_denies(tmp_path):
    crate = tmp_path / "crate"
    crate.mkdir()
    (crate / "rust-toolchain.toml").write_text("[toolchain]\n")
    assert codes(f"cd {crate} && cargo --version", tmp_path) == ["BP601"]
    assert codes("cargo --version", tmp_path) == []


def test_without_cwd_a_note_says_nothing_was_checked():
    verdict = check("cargo --version")
    assert verdict.allowed
    assert any("rust-toolchain" in note for note in verdict.notes)


def test_a_dot_mvn_directory_at_or_above_denies_mvn(tmp_path):
    # Maven 3.8.7's mvn script applies the nearest .mvn/jvm.config (JVM
    # options) and .mvn/maven.config even for `mvn -v`.
    (tmp_path / "app").mkdir()
    assert codes("mvn -v", tmp_path / "app") == []
    (tmp_path / ".mvn").mkdir()
    (tmp_path / ".mvn" / "jvm.config").write_text("-javaagent:agent.jar\n")
    assert codes("mvn -v", tmp_path / "app") == ["BP601"]
    assert codes("mvn --version", tmp_path) == ["BP601"]
    verdict = check("mvn -v")
    assert verdict.allowed and any(".mvn" in note for note in verdict.notes)


def test_rustup_under_a_toolchain_file_denies(tmp_path):
    (tmp_path / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "1.70.0"\n')
    assert codes("rustup --version", tmp_path) == ["BP601"]
    assert codes("rustup toolchain list", tmp_path) == ["BP601"]
    assert codes("rustup toolchain list", tmp_path.parent) == []
