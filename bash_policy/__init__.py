"""bash-policy: decide whether a shell command may run in an AI agent's plan mode.

    >>> from bash_policy import check
    >>> check('rg -n "foo bar" src | head -20').allowed
    True
    >>> check("rg --pre cat x").denials[0].code
    'BP400'
"""

from .judge.engine import check
from .judge.policy import ConfigError, Policy
from .judge.verdict import Denial, Verdict
from .repo.hardening import hardened_env

__all__ = ["check", "hardened_env", "run", "PlanGate", "Policy", "ConfigError", "Verdict", "Denial"]
__version__ = "0.1.0"


def __getattr__(name: str):
    """`run` and `PlanGate` load on first use, so `import bash_policy` stays cheap."""
    if name == "run":
        from .integrations.runner import run

        return run
    if name == "PlanGate":
        from .integrations.gate import PlanGate

        return PlanGate
    raise AttributeError(f"module 'bash_policy' has no attribute {name!r}")
