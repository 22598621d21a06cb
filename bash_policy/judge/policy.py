"""Policy: the built-in specs and settings, plus the user's additions.

Specs load lazily, one TOML file per program, so a check pays only for the
programs it names.  A user's config (bash-policy.toml, or [tool.bash-policy]
in pyproject.toml) merges into the built-ins in the same format.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import sys
import time
from _thread import allocate_lock, get_ident
from collections.abc import Mapping
from pathlib import Path

from ..records import dataclass, field
from . import rules, spec_cache
from .spec import CommandSpec, SpecError, build_spec, merge_tables, unknown_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

SPEC_DIR = Path(__file__).with_name("specs")
_DEFAULTS_FILE = Path(__file__).with_name("defaults.toml")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_CONFIG_KEYS = {"trusted_dirs", "write_targets", "network_paths", "env", "limits", "programs",
                "scope_roots", "crosscheck", "stdin_script", "persistent_shell", "trusted_repo_keys",
                "confine", "cdpath"}
# Tools whose repository config is read with an allowlist of inert keys (docs/config.md).
REPO_CONFIG_TOOLS = ("git", "npm")
# Whether a second parser (bashlex) must agree before a command is allowed (docs/readers.md).
CROSSCHECK_MODES = ("auto", "required", "off")
# How `bash-policy run` confines what it allows (bash_policy/confine): wherever the
# kernel offers it, only if it does (else refuse), or never.
CONFINE_MODES = ("auto", "required", "off")


class ConfigError(ValueError):
    """A config file is unreadable or has a bad key; the message names both."""


class UntrustedConfig(ConfigError):
    """A discovered config loosens the policy and the user has not trusted it
    (judge/trust.py); the message says what it loosens and how to trust it."""


def spec_file_stem(name: str) -> str:
    """File stem of a program's spec: the name, or hex for names like `[`."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    return "x-" + name.encode("utf-8").hex()


def _stem_to_name(stem: str) -> str:
    if stem.startswith("x-"):
        return bytes.fromhex(stem[2:]).decode("utf-8")
    return stem


def _load_toml(path: Path, read: list[tuple[Path, bytes]] | None = None) -> dict[str, Any]:
    """The table in `path`; `read` gets the bytes it was parsed from."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if read is not None:
            read.append((path, data))
        return tomllib.loads(data.decode())
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None


@dataclass
class Policy:
    """Everything a check consults.  Build with `Policy.default()`,
    `Policy.from_file(path)` or `Policy.discover(directory)`."""

    trusted_dirs: tuple[str, ...]
    write_targets: frozenset[str]
    network_paths: tuple[str, ...]
    env: Mapping[str, Any]
    max_length: int
    max_segments: int
    scope_roots: tuple[str, ...] = ()
    user_programs: Mapping[str, Any] = field(default_factory=dict)
    source: str = "built-in"
    crosscheck: str = "auto"
    confine: str = "auto"
    # Whether the harness may pipe the script into bash, so that a command on an
    # earlier line could read the later lines (BP108); false for `bash -c` harnesses.
    stdin_script: bool = True
    # Whether the harness keeps one shell for the session, so that what a
    # command exports reaches the commands of later calls (judge/later.py).
    persistent_shell: bool = True
    # The CDPATH of the shell that runs the command ("" when unset), which
    # `cd NAME` searches first; None: this process's CDPATH when it checks
    # (a hook inherits the harness's environment, as its shell does).
    cdpath: str | None = None
    # Repository config keys the user trusts beyond the inert allowlist, per tool.
    trusted_repo_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The client's own shell, when the command runs there rather than in a clean
    # `bash -c` (judge/client_shell.py; hooks set it from the client's profile).
    shell: Any = None
    _specs: dict[str, CommandSpec | None] = field(default_factory=dict, repr=False)

    # -- construction ------------------------------------------------------
    @classmethod
    def default(cls) -> Policy:
        global _DEFAULT
        if _DEFAULT is None:
            _DEFAULT = cls._build(_defaults(), {}, "built-in")
        return _DEFAULT

    @classmethod
    def from_file(cls, path: str | Path) -> Policy:
        """The policy `path` makes, loosening included: a file the caller
        chose (`--config`), trusted as such."""
        return cls.from_mapping(settings_of(Path(path)), str(path))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "<config>") -> Policy:
        unknown = set(data) - _CONFIG_KEYS
        if unknown:
            message = unknown_key(source, sorted(unknown)[0], _CONFIG_KEYS)
            raise ConfigError(message if "did you mean" in message
                              else f"{message} (known: {', '.join(sorted(_CONFIG_KEYS))})")
        base = _defaults()
        merged = dict(base)
        for key in ("crosscheck", "stdin_script", "persistent_shell", "confine", "cdpath"):
            if key in data:
                merged[key] = data[key]
        for key in ("trusted_dirs", "write_targets", "network_paths", "scope_roots"):
            if key in data:
                if not isinstance(data[key], list) or not all(isinstance(v, str) for v in data[key]):
                    raise ConfigError(f"{source}: {key}: expected a list of strings")
                merged[key] = data[key]
        if "trusted_repo_keys" in data:
            merged["trusted_repo_keys"] = data["trusted_repo_keys"]
        if "env" in data:
            if not isinstance(data["env"], Mapping):
                raise ConfigError(f"{source}: env: expected a table")
            merged["env"] = {**base["env"], **data["env"]}
        if "limits" in data:
            if not isinstance(data["limits"], Mapping):
                raise ConfigError(f"{source}: limits: expected a table")
            merged["limits"] = {**base["limits"], **data["limits"]}
        programs = data.get("programs", {})
        if not isinstance(programs, Mapping):
            raise ConfigError(f"{source}: programs: expected a table of programs")
        policy = cls._build(merged, programs, source)
        # Build every user program now so a bad key fails at load, not mid-check,
        # then run the examples the user wrote, against the policy they make.
        for name in programs:
            policy.spec(name)
        for name in programs:
            policy._run_examples(programs[name], f"programs.{name}")
        return policy

    @classmethod
    def discover(cls, directory: str | Path = ".", *, trust_all: bool = False) -> Policy:
        """The policy that governs `directory` (see `find_config`), else the
        default.  Raises UntrustedConfig when the file found loosens the
        built-in policy and the user has not trusted it (judge/trust.py),
        unless `trust_all` (for a repository testing its own config)."""
        path = find_config(directory)
        return cls.default() if path is None else cls.from_discovered(path, trust_all=trust_all)

    @classmethod
    def from_discovered(cls, path: Path, *, trust_all: bool = False) -> Policy:
        """The policy of a config file found by discovery, as `discover` loads it."""
        from . import trust

        settings = settings_of(path)
        loosened = trust.widenings(settings, _defaults())
        if loosened and not trust_all and not trust.is_trusted(path, settings):
            shown = "; ".join(loosened[:3]) + (f"; and {len(loosened) - 3} more" if len(loosened) > 3 else "")
            raise UntrustedConfig(
                f"{path} loosens the built-in policy ({shown}) and is not trusted: a config in "
                "the directory being explored may tighten the policy, but may loosen it only once you "
                f"have reviewed it; then run `bash-policy trust {path}` (or name it with --config)")
        return cls.from_mapping(settings, str(path))

    @classmethod
    def _build(cls, data: Mapping[str, Any], programs: Mapping[str, Any], source: str) -> Policy:
        env = dict(data.get("env", {}))
        for name, allowed in env.items():
            if isinstance(allowed, Mapping) and set(allowed) == {"match"} \
                    and isinstance(allowed["match"], str):
                try:
                    env[name] = re.compile(allowed["match"])
                except re.error as error:
                    raise ConfigError(f"{source}: env.{name}.match: {error}") from None
            elif allowed != "*" and not (isinstance(allowed, list)
                                         and all(isinstance(v, str) for v in allowed)):
                raise ConfigError(f"{source}: env.{name}: expected \"*\", a list of values "
                                  "or { match = \"REGEX\" }")
        limits = data.get("limits", {})
        for key in limits:
            if key not in ("max_length", "max_segments"):
                raise ConfigError(unknown_key(f"{source}: limits", key, ("max_length", "max_segments")))
            if not isinstance(limits[key], int) or limits[key] <= 0:
                raise ConfigError(f"{source}: limits.{key}: expected a positive integer")
        stdin_script = data.get("stdin_script", True)
        if not isinstance(stdin_script, bool):
            raise ConfigError(f"{source}: stdin_script: expected true or false")
        persistent_shell = data.get("persistent_shell", True)
        if not isinstance(persistent_shell, bool):
            raise ConfigError(f"{source}: persistent_shell: expected true or false")
        cdpath = data.get("cdpath")
        if cdpath is not None and not isinstance(cdpath, str):
            raise ConfigError(f"{source}: cdpath: expected a string (\"\" when CDPATH is unset)")
        crosscheck = data.get("crosscheck", "auto")
        if crosscheck not in CROSSCHECK_MODES:
            raise ConfigError(f"{source}: crosscheck: expected one of {', '.join(CROSSCHECK_MODES)}")
        confine = data.get("confine", "auto")
        if confine not in CONFINE_MODES:
            raise ConfigError(f"{source}: confine: expected one of {', '.join(CONFINE_MODES)}")
        trusted_keys = data.get("trusted_repo_keys", {})
        if not isinstance(trusted_keys, Mapping):
            raise ConfigError(f"{source}: trusted_repo_keys: expected a table of tools")
        for tool, keys in trusted_keys.items():
            if tool not in REPO_CONFIG_TOOLS:
                raise ConfigError(unknown_key(f"{source}: trusted_repo_keys", tool, REPO_CONFIG_TOOLS, "tool")
                                  + f" (known: {', '.join(REPO_CONFIG_TOOLS)})")
            if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
                raise ConfigError(f"{source}: trusted_repo_keys.{tool}: expected a list of key names")
        return cls(
            trusted_dirs=tuple(d.rstrip("/") for d in data.get("trusted_dirs", ())),
            write_targets=frozenset(data.get("write_targets", ())),
            network_paths=tuple(data.get("network_paths", ())),
            env=dict(env),
            max_length=limits.get("max_length", 16384),
            max_segments=limits.get("max_segments", 128),
            scope_roots=tuple(data.get("scope_roots", ())),
            user_programs=dict(programs),
            source=source,
            crosscheck=crosscheck,
            confine=confine,
            stdin_script=stdin_script,
            persistent_shell=persistent_shell,
            cdpath=cdpath,
            trusted_repo_keys={tool: tuple(keys) for tool, keys in trusted_keys.items()},
        )

    def env_allows(self, name: str, value: str) -> bool:
        """Whether `NAME=VALUE` is on the harmless-variable list ([env])."""
        allowed = self.env.get(name)
        if allowed is None:
            return False
        if isinstance(allowed, re.Pattern):
            return bool(allowed.fullmatch(value))
        return allowed == "*" or value in allowed

    # -- specs -------------------------------------------------------------
    def spec(self, name: str) -> CommandSpec | None:
        """The spec for program `name`, or None when it is not whitelisted."""
        if name not in self._specs:
            if name in self.user_programs:
                self._specs[name] = self._user_spec(name)
            else:
                path = SPEC_DIR / f"{spec_file_stem(name)}.toml"
                self._specs[name] = spec_cache.load(path, lambda: self._builtin_spec(name))
        return self._specs[name]

    def _builtin_spec(self, name: str) -> tuple[CommandSpec | None, list[tuple[Path, bytes]]]:
        """The built-in spec of `name` and the files it was built from."""
        files: list[tuple[Path, bytes]] = []
        table = self._builtin_table(name, files)
        return _make_spec(name, table, f"built-in spec {name!r}"), files

    def _user_spec(self, name: str) -> CommandSpec | None:
        user = self.user_programs[name]
        if not isinstance(user, Mapping):
            raise ConfigError(f"{self.source}: programs.{name}: expected a table")
        table = merge_tables(self._builtin_table(name, []) or {}, user)
        return _make_spec(name, table, f"{self.source}: programs.{name}")

    def _builtin_table(self, name: str, files: list[tuple[Path, bytes]]) -> dict[str, Any] | None:
        path = SPEC_DIR / f"{spec_file_stem(name)}.toml"
        if not path.is_file():
            return None
        table = _load_toml(path, files)
        alias = table.pop("alias_of", None)
        if alias is not None:
            base = self._builtin_table(alias, files) or {}
            table = merge_tables(base, table)
        return table

    def _run_examples(self, table: Mapping[str, Any], where: str) -> None:
        """The `examples` of a user's program table and of its subcommand
        tables, as Codex's execpolicy runs its rules' `match` examples: a
        command meant to pass that is denied, or one meant to be denied with
        a code that is not, fails the load with the example named (a spec
        the user meant otherwise is never quietly in force)."""
        from .engine import check  # the engine imports this module

        examples = table.get("examples", {})
        for command in examples.get("allow", []):
            verdict = check(command, self)
            if not verdict.allowed:
                first = verdict.denials[0]
                raise ConfigError(f"{self.source}: {where}.examples.allow: `{command}` is denied "
                                  f"({first.code} {first.name}: {first.message}), but the example "
                                  "says it passes")
        for entry in examples.get("deny", []):
            command, code = entry["cmd"], entry["code"]
            got = [d.code for d in check(command, self).denials]
            if code not in got:
                what = f"denied with {', '.join(dict.fromkeys(got))} only" if got else "allowed"
                raise ConfigError(f"{self.source}: {where}.examples.deny: `{command}` is {what}, "
                                  f"but the example says it is denied with {code}")
        for name, sub in table.get("sub", {}).items():
            self._run_examples(sub, f"{where}.sub.{name}")

    def program_names(self) -> list[str]:
        names = {_stem_to_name(p.stem) for p in SPEC_DIR.glob("*.toml")}
        names.update(self.user_programs)
        return sorted(n for n in names if self.spec(n) is not None)


def _make_spec(name: str, table: Mapping[str, Any] | None, where: str) -> CommandSpec | None:
    if table is None:
        return None
    try:
        return build_spec(name, table, where, rule_exists=rules.exists)
    except SpecError as error:
        raise ConfigError(str(error)) from None


def _defaults() -> dict[str, Any]:
    def build() -> tuple[dict[str, Any], list[tuple[Path, bytes]]]:
        read: list[tuple[Path, bytes]] = []
        return _load_toml(_DEFAULTS_FILE, read), read

    return spec_cache.load(_DEFAULTS_FILE, build)


_DEFAULT: Policy | None = None


def settings_of(path: Path) -> dict[str, Any]:
    """The settings a config file holds: the whole file, or pyproject.toml's
    [tool.bash-policy] table."""
    data = _load_toml(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("bash-policy", {})
    return data


def find_config(directory: str | Path) -> Path | None:
    """The config file that governs `directory`, or None for the built-in policy.

    The directory is searched, then its parents up to the repository root
    (the first directory holding `.git`), as ruff does: the nearest
    `bash-policy.toml`, or `pyproject.toml` with a `[tool.bash-policy]` table,
    wins.  Outside any repository only the directory itself is read, so a
    stray file in a shared parent such as /tmp is never picked up."""
    chain = _chain(str(directory), "" if os.path.isabs(directory) else os.getcwd())
    root = next((k for k, d in enumerate(chain) if _stat(os.path.join(d, ".git"))), None)
    for candidate in chain[:root + 1] if root is not None else chain[:1]:
        own = os.path.join(candidate, "bash-policy.toml")
        if _is_file(own):
            return Path(own)
        pyproject = os.path.join(candidate, "pyproject.toml")
        if _is_file(pyproject) and _has_table(Path(pyproject)):
            return Path(pyproject)
    return None


@functools.lru_cache(maxsize=64)
def _chain(directory: str, cwd: str) -> tuple[str, ...]:
    """`directory` made absolute as pathlib does (lexically, `..` kept) and its
    parents: computed once per directory, as a server asks for every request."""
    start = Path(cwd, directory)
    return tuple(str(d) for d in (start, *start.parents))


def _stat(path: str) -> os.stat_result | None:
    """As pathlib's exists(): None for a missing path, other errors raised."""
    try:
        return os.stat(path)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return None
        raise
    except ValueError:
        return None


def _is_file(path: str) -> bool:
    """As pathlib's is_file()."""
    st = _stat(path)
    return st is not None and stat.S_ISREG(st.st_mode)


# pyproject.toml files already read, by path and stat: a server looks the
# config up for every request, and parsing the TOML cost more than the check;
# a hook, a new process for every tool call, paid tomllib's import and the
# parse (8 ms, a tenth of its start) in every Python project, so the answers
# are also kept in the user's cache directory (with the spec cache's switch).
_TABLES: dict[tuple, bool] = {}
_MAX_TABLES = 64
# A file changed this recently may change again within its timestamp's
# granularity without its stat changing, so its answer is not kept.
_SETTLED_NS = 2_000_000_000
_tables_read = False
_tables_lock = allocate_lock()


def _has_table(pyproject: Path) -> bool:
    """Whether `pyproject` has a [tool.bash-policy] table."""
    try:
        st = os.stat(pyproject)
        key: tuple | None = (str(pyproject), st.st_dev, st.st_ino, st.st_size,
                             st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        key = None
    known = _known_tables().get(key) if key is not None else None
    if known is not None:
        return known
    found = "bash-policy" in _load_toml(pyproject).get("tool", {})
    if key is not None and time.time_ns() - max(key[4], key[5]) > _SETTLED_NS:
        with _tables_lock:
            if len(_TABLES) >= _MAX_TABLES:
                del _TABLES[next(iter(_TABLES))]
            _TABLES[key] = found
            _write_tables()
    return found


def _tables_file() -> str:
    return os.path.join(spec_cache.cache_dir(), "pyproject-tables.json")


def _known_tables() -> dict[tuple, bool]:
    """_TABLES, with the answers kept on disk read in once (a file that is
    missing or not as written here adds nothing)."""
    global _tables_read
    if not _tables_read and spec_cache.ENABLED:
        import json

        try:
            with open(_tables_file(), encoding="utf-8") as fh:
                rows = json.load(fh)
            with _tables_lock:
                for *stamp, found in rows[-_MAX_TABLES:]:
                    if len(stamp) == 6 and isinstance(stamp[0], str) and isinstance(found, bool) \
                            and all(type(n) is int for n in stamp[1:]):
                        _TABLES.setdefault(tuple(stamp), found)
        except (OSError, ValueError, TypeError):
            pass
        _tables_read = True
    return _TABLES


def _write_tables() -> None:
    """Keep the answers on disk; a cache directory that cannot be written is only slower."""
    if not spec_cache.ENABLED:
        return
    import json

    path = _tables_file()
    partial = f"{path}.{os.getpid()}.{get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(partial, "w", encoding="utf-8") as fh:
            json.dump([[*key, found] for key, found in _TABLES.items()], fh)
        os.replace(partial, path)
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass
