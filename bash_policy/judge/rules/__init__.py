"""Named hooks: program logic that data alone cannot express.

A spec names its hook (`hook = "git_branch"`); the engine calls it with the
`Invocation` it read and the check `Context`, after the generic checks.  Each
hook lives beside the program it serves, in a module of this package, and is
registered here by name so that specs stay data and the engine stays generic.
"""

from __future__ import annotations

import importlib
from typing import Callable

# hook name -> "module:function", imported on first use.
REGISTRY: dict[str, str] = {
    "rust_toolchain_file": "toolchain:rust_toolchain_file",
    "cd_target": "cd:cd_target",
    "git_repo_config": "repository:git_repo_config",
    "sed_script": "sed:check",
    "awk_program": "awk:check",
    "jq_filter": "jq:check",
    "yq_filter": "jq:check_yq",
    "find_expression": "find:check",
    "printf_no_assign": "system:printf_no_assign",
    "date_format_only": "system:date_format_only",
    "test_no_variable_tests": "system:test_no_variable_tests",
    "sleep_bounded": "system:sleep_bounded",
    "seq_bounded": "system:seq_bounded",
    "interpreter_needs_flag": "system:interpreter_needs_flag",
    "cargo_metadata_no_deps": "system:cargo_metadata_no_deps",
    "env_command": "wrappers:env_command",
    "command_builtin": "wrappers:command_builtin",
    "tail_obsolete_follow": "tail:tail_obsolete_follow",
    "tree_clusters": "tree:tree_clusters",
    "git_global": "git:git_global",
    "git_log": "git:git_log",
    "git_branch": "git:git_branch",
    "git_tag": "git:git_tag",
    "git_config": "git:git_config",
    "git_stash": "git:git_stash",
    "git_reflog": "git:git_reflog",
    "git_remote_show": "git:git_remote_show",
    "gh_api": "gh:gh_api",
    "gh_jq": "gh:gh_jq",
    "gh_repo": "gh:gh_repo",
    "gh_repo_view": "gh:gh_repo_view",
}


def get(name: str) -> Callable:
    try:
        target = REGISTRY[name]
    except KeyError:
        raise LookupError(f"no hook named {name!r}") from None
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)
