"""docker: `stats` that ends, and Compose projects whose files stay local; kubectl's files in flag values.

`docker stats` streams until it is stopped unless `--no-stream` is given.
Compose loads the project's compose files before `ps`, `top`, `logs`,
`images` and `config`; those files are repository content, and since Compose
2.2x an `include:` (or `-f`, or an `extends` file) may name a git repository
or an OCI artifact, which Compose fetches (network, a cache under
~/.cache/docker-compose) with variables interpolated into the address.  The
files are read as text, conservatively (there is no YAML parser here).  `ls` and `version` load no project.
A `.env` file in the project directory can set COMPOSE_FILE, which picks the
files instead of the command.
"""

from __future__ import annotations

import os
import re

from ...read.model import Word
from ...records import dataclass
from ...repo.files import Unreadable, physical
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .cd import known_directories
from .files import check_read_paths

_NO_CWD_NOTE = ("compose files were not looked at: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")
# Compose's default file names, in its order, and the override files read beside them.
_DEFAULT_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_OVERRIDE_FILES = ("compose.override.yaml", "compose.override.yml", "docker-compose.override.yaml",
                   "docker-compose.override.yml")
# Remote resources Compose loads: URLs (git over any scheme, oci://) and scp-like user@host:path.
_REMOTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|[\w.-]+@[\w.-]+:")
_INCLUDE = re.compile(r"include", re.IGNORECASE)
_EXTENDS = re.compile(r"extends", re.IGNORECASE)
# A backslash inside a double-quoted YAML scalar is an escape (`"\x69nclude"` is `include`).
_ESCAPE = re.compile(r'"[^"\n]*\\')
_COMPOSE_FILE_VAR = re.compile(r"^\s*(?:export\s+)?COMPOSE_FILE\s*=", re.MULTILINE)
# `docker` and `docker compose` flags that take a value (the engine has checked them).
_DOCKER_VALUED = {"-l", "--log-level", "-c", "--context"}
_COMPOSE_VALUED = {"-f", "--file", "-p", "--project-name", "--project-directory", "--env-file",
                   "--profile", "--ansi", "--progress", "--parallel"}
_NO_PROJECT = {"ls", "version"}


@dataclass(frozen=True)
class StatsStreams(Problem):
    code = Code.BP405
    effect = Effect.HANG
    message_format = "`{program}` keeps streaming resource usage and never ends"
    hint_format = "print one sample: {program} --no-stream"
    program: str


@dataclass(frozen=True)
class ComposeFileUnseen(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = "`docker compose -f {value}` loads the compose file from {source}, which the checker cannot see"
    hint_format = "save the file locally and name its path"
    value: str
    source: str  # "standard input" or "a remote resource"


@dataclass(frozen=True)
class ComposeProjectUnreadable(Problem):
    code = Code.BP601
    effect = Effect.NETWORK
    message_format = "the compose project cannot be judged: {error}"
    hint_format = "name a project directory inside the repository"
    error: Exception


@dataclass(frozen=True)
class ComposeFileVariable(Problem):
    code = Code.BP601
    effect = Effect.NETWORK
    message_format = ("`docker compose {sub}` reads {env}, which sets COMPOSE_FILE: the compose files are "
                      "chosen by the file, not by the command")
    hint_format = "name the files with -f, or read them with cat"
    sub: str
    env: str


@dataclass(frozen=True)
class ComposeRemoteFile(Problem):
    code = Code.BP601
    effect = Effect.NETWORK
    message_format = ("`docker compose {sub}` loads {path}, which {why} (Compose fetches remote files, "
                      "with variables interpolated into their address)")
    hint_format = ("read the file instead (cat {path}); `docker ps --filter "
                   "label=com.docker.compose.project=NAME` lists the project's containers")
    sub: str
    path: str
    why: str


@dataclass(frozen=True)
class ManifestUrl(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = "`{program} -f {url}` fetches the manifest from that address"
    hint_format = "download nothing in plan mode; name a local file"
    program: str
    url: str


@rule("docker_stats_once", codes=[Code.BP405],
      deny=["docker stats", "docker container stats web"], allow=["docker stats --no-stream"])
def docker_stats_once(inv, ctx) -> None:
    """`docker stats` without --no-stream, which streams until stopped.
    Only --no-stream makes it print one sample and end."""
    if not inv.has("--no-stream"):
        ctx.deny(StatsStreams(inv.spec.display), inv.words[0].span)


def _compose_arguments(words) -> tuple[list[tuple[str, object]], str | None]:
    """The `docker compose` flags (name, value word pairs) and the subcommand name."""
    k = 1
    while k < len(words) and words[k].value != "compose":
        k += 2 if words[k].value in _DOCKER_VALUED else 1
    k += 1
    flags = []
    while k < len(words) and (words[k].value or "").startswith("-"):
        text = words[k].value
        name, eq, attached = text.partition("=")
        if name in _COMPOSE_VALUED and not eq:
            flags.append((name, words[k + 1] if k + 1 < len(words) else None))
            k += 2
            continue
        if not name.startswith("--") and len(name) > 2 and name[:2] in _COMPOSE_VALUED:
            name, attached, eq = name[:2], text[2:], "="  # -fFILE
        flags.append((name, attached if eq else None))
        k += 1
    return flags, words[k].value if k < len(words) else None


def _value(value) -> str | None:
    return value if isinstance(value, str) or value is None else value.value


def _project_files(directory: str, files: list[str], project_dir: str | None) -> tuple[list[str], str]:
    """The compose files Compose reads from `directory`, and the project directory."""
    if files:
        paths = [os.path.join(directory, f) for f in files]
        return paths, os.path.join(directory, project_dir) if project_dir else os.path.dirname(paths[0])
    start = physical(os.path.join(directory, project_dir or "."))
    here = start
    while True:
        for name in _DEFAULT_FILES:
            if os.path.isfile(os.path.join(here, name)):
                found = [os.path.join(here, n) for n in (name, *_OVERRIDE_FILES)]
                return [p for p in found if os.path.isfile(p)], here
        parent = os.path.dirname(here)
        if parent == here or project_dir:
            return [], start
        here = parent


def _remote_risk(text: str | None) -> str | None:
    """Why a compose file may make Compose load another file, or None.  Read as
    text, conservatively: any `include`, escapes the checker does not decode,
    or `extends` in a file that names a remote address."""
    if text is None:
        return "cannot be read"
    if _INCLUDE.search(text):
        return "includes other compose files"
    if _ESCAPE.search(text):
        return "has escapes in double-quoted strings, which the checker does not decode"
    if _EXTENDS.search(text) and _REMOTE.search(text):
        return "extends services and names a remote address"
    return None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(1_000_000)
    except OSError:
        return None


@rule("docker_compose_files", codes=[Code.BP403, Code.BP601],
      deny=["docker compose -f https://github.com/o/r.git ps", "docker compose -f - config"],
      allow=["docker compose ps", "docker compose ls"])
def docker_compose_files(inv, ctx) -> None:
    """Compose projects whose files name remote files, or that the checker cannot see.
    An `include:` or `-f` can name a git repository or OCI artifact that Compose
    fetches (with variables interpolated into the address) before a plain `ps`."""
    flags, sub = _compose_arguments(inv.words)
    if sub is None or sub in _NO_PROJECT or sub.startswith("-"):
        return
    anchor = inv.words[0].span
    files, project_dir, env_files = [], None, []
    for name, holder in flags:
        value = _value(holder)
        if value is None:
            continue
        if name in ("-f", "--file"):
            if value == "-" or _REMOTE.search(value):
                what = "standard input" if value == "-" else "a remote resource"
                ctx.deny(ComposeFileUnseen(value, what), anchor)
                return
            files.append(value)
        elif name == "--project-directory":
            project_dir = value
        elif name == "--env-file":
            env_files.append(value)
    for directory in known_directories(ctx, anchor, "the compose files it loads", _NO_CWD_NOTE,
                                       "network"):
        try:
            paths, project = _project_files(directory, files, project_dir)
        except Unreadable as error:
            ctx.deny(ComposeProjectUnreadable(error), anchor)
            return
        envs = [os.path.join(directory, e) for e in env_files] or [os.path.join(project, ".env")]
        for env in envs:
            text = _read(env) if os.path.isfile(env) else ""
            if text is None or _COMPOSE_FILE_VAR.search(text):
                ctx.deny(ComposeFileVariable(sub, env), anchor)
                return
        for path in paths:
            if not os.path.isfile(path):
                continue  # Compose stops: no such file
            text = _read(path)
            why = _remote_risk(text)
            if why:
                ctx.deny(ComposeRemoteFile(sub, path, why), anchor)
                return


# kubectl output formats whose value after `=` (or, bare, the --template value) is a file.
_TEMPLATE_FILE_FORMATS = frozenset({"go-template-file", "templatefile", "jsonpath-file", "custom-columns-file"})


@rule("kubectl_files", codes=[Code.BP403, Code.BP601],
      deny=["kubectl get -f https://example.com/pod.yaml", "kubectl get pods -o jsonpath-file=/dev/zero",
            "kubectl get pods -o go-template-file --template=/dev/zero"],
      allow=["kubectl get -f pod.yaml", "kubectl get pods -o jsonpath='{.items[*].metadata.name}'",
             "kubectl get pods -o go-template-file=t.tmpl", "kubectl get pods --template='{{.kind}}' -o go-template"],
      reads=("-f", "--filename", "-o", "--output", "--template"))
def kubectl_files(inv, ctx) -> None:
    """kubectl -f URL, which fetches from any host, and template files named inside -o.
    `-o jsonpath-file=PATH` (and go-template-file=, templatefile=,
    custom-columns-file=) reads PATH, and the bare form reads the --template
    value as a file (kubectl 1.32, tried): each is judged as a file read."""
    paths = []
    for use in inv.uses("-f", "--filename"):
        if use.value is not None and "://" in use.value:
            ctx.deny(ManifestUrl(inv.spec.display, use.value), (use.value_word or use.word).span)
    template_is_file = False
    for use in inv.uses("-o", "--output"):
        form, eq, path = (use.value or "").partition("=")
        if form in _TEMPLATE_FILE_FORMATS:
            if eq:
                paths.append(Word(path, (use.value_word or use.word).span, path))
            else:
                template_is_file = True
    if template_is_file:
        paths += [Word(use.value, (use.value_word or use.word).span, use.value)
                  for use in inv.uses("--template") if use.value is not None]
    check_read_paths(paths, ctx, inv.spec.display)
