"""bash-policy: decide whether a shell command may run in an AI agent's plan mode.

    >>> from bash_policy import check
    >>> check('rg -n "foo bar" src | head -20').allowed
    True
    >>> check("rg --pre cat x").denials[0].code
    'BP400'
"""

__all__ = ["check", "hardened_env", "run", "PlanGate", "Policy", "ConfigError", "Verdict", "Denial"]
__version__ = "0.1.0"

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # what type checkers see; at run time they load lazily (below)
    from .integrations.gate import PlanGate
    from .integrations.runner import run
    from .judge.engine import check
    from .judge.policy import ConfigError, Policy
    from .judge.verdict import Denial, Verdict
    from .repo.hardening import hardened_env

# Where each public name lives.  They load on first use, so that importing a
# submodule (the CLI, a hook) pays only for what that submodule needs.
_PUBLIC = {
    "check": "judge.engine", "hardened_env": "repo.hardening", "run": "integrations.runner",
    "PlanGate": "integrations.gate", "Policy": "judge.policy", "ConfigError": "judge.policy",
    "Verdict": "judge.verdict", "Denial": "judge.verdict",
}


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'bash_policy' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_PUBLIC[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
