"""bash-policy: decide whether a shell command may run in an AI agent's plan mode.

    >>> from bash_policy import check
    >>> check('rg -n "foo bar" src | head -20').allowed
    True
    >>> check("rg --pre cat x").denials[0].code
    'BP400'
"""

from .engine import check
from .hardening import hardened_env
from .policy import ConfigError, Policy
from .verdict import Denial, Verdict

__all__ = ["check", "hardened_env", "Policy", "ConfigError", "Verdict", "Denial"]
__version__ = "0.1.0"
