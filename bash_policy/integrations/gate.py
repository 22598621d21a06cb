"""A plan-mode permission gate for agent harnesses.

A ruleset is a sequence of `Rule(permission, pattern, action)`.  Rulesets
merge by concatenation (defaults, then plan mode, then the user's) and are
evaluated last-match-wins, with "ask" when nothing matches, so a later layer
always overrides an earlier one.  The shell is not ruled by pattern in plan
mode: the bash policy's verdict on the command becomes the plan layer's rule
for it, so a denial carries the policy's actionable message.

Plan mode has explicit states (off, planning, ready) and `off` is reachable
from every state; every denial issued in plan mode names the way out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from ..records import dataclass, field
from .harnesses import HARNESSES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

ALLOW, ASK, DENY = "allow", "ask", "deny"
ACTIONS = (ALLOW, ASK, DENY)

OFF, PLANNING, READY = "off", "planning", "ready"
STATES = (OFF, PLANNING, READY)


@dataclass(frozen=True, slots=True)
class Rule:
    permission: str
    pattern: str
    action: str

    def __post_init__(self):
        if self.action not in ACTIONS:
            raise ValueError(f"rule action must be one of {', '.join(ACTIONS)}, not {self.action!r}")


Ruleset = tuple[Rule, ...]


# Permissions whose subjects are file paths: there `*` stays within one
# path component and `**` crosses them; elsewhere `*` matches anything.
PATH_PERMISSIONS = frozenset({"read", "edit"})


@lru_cache(maxsize=512)
def _wildcard_regex(pattern: str, paths: bool) -> re.Pattern:
    if pattern == "*":  # a lone star is the catch-all, paths or not
        return re.compile(".*", re.DOTALL)
    star, one = ("[^/]*", "[^/]") if paths else (".*", ".")
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append(star)
            i += 1
        elif pattern[i] == "?":
            out.append(one)
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def wildcard_match(pattern: str, text: str, paths: bool = False) -> bool:
    """A lone `*` matches anything; otherwise `*` matches any text (within
    one path component when `paths`), `**` any text, `?` one character."""
    return _wildcard_regex(pattern, paths).fullmatch(text) is not None


def merge(*rulesets: Iterable[Rule]) -> Ruleset:
    """Concatenate rulesets in order; later rules win."""
    return tuple(rule for ruleset in rulesets for rule in ruleset)


def from_config(config: Mapping[str, Any]) -> Ruleset:
    """Rules from a mapping such as `{"read": "allow", "edit": {"*": "deny", "docs/*.md": "allow"}}`."""
    rules = []
    for permission, value in config.items():
        if isinstance(value, str):
            rules.append(Rule(permission, "*", value))
        elif isinstance(value, Mapping):
            rules.extend(Rule(permission, pattern, action) for pattern, action in value.items())
        else:
            raise ValueError(f"{permission}: expected an action or a table of pattern = action")
    return tuple(rules)


def find_rule(ruleset: Sequence[Rule], permission: str, subjects: Sequence[str]) -> Rule | None:
    """The last rule whose permission and pattern match (any of the subject's spellings)."""
    paths = permission in PATH_PERMISSIONS
    for rule in reversed(ruleset):
        if wildcard_match(rule.permission, permission) and any(
            wildcard_match(rule.pattern, s, paths) for s in subjects
        ):
            return rule
    return None


def evaluate(ruleset: Sequence[Rule], permission: str, subject: str = "*") -> str:
    rule = find_rule(ruleset, permission, (subject,))
    return rule.action if rule else ASK


def disabled(tools: Iterable[str], ruleset: Sequence[Rule]) -> set[str]:
    """Tools to remove from the model's tool list: those whose permission's
    last matching rule is a `*` deny, so no call to them could ever pass."""
    out = set()
    for tool in tools:
        permission = permission_of(tool)
        rule = next((r for r in reversed(ruleset) if wildcard_match(r.permission, permission)), None)
        if rule is not None and rule.pattern == "*" and rule.action == DENY:
            out.add(tool)
    return out


# The plain lower-case tool names many harnesses use (OpenCode and the like);
# the names of the clients bash-policy hooks into come from their records.
PLAIN_TOOLS: dict[str, tuple[str, str | None]] = {
    "read": ("read", "file_path"),
    **{name: ("search", None) for name in ("grep", "glob", "ls", "list")},
    **{name: ("edit", "file_path") for name in ("edit", "write")},
    **{name: ("shell", "command") for name in ("bash", "shell")},
    "task": ("task", "subagent_type"),
    "plan_exit": ("plan_exit", None),
    "plan_enter": ("plan_enter", None),
}


def _tool_table() -> dict[str, tuple[str, str | tuple[str, ...] | None]]:
    """Tool name -> (permission, the tool_input key naming its subject).  A
    name two clients use for the same permission under different keys (an
    `edit` tool's `file_path` or `path`) keeps both keys, first one present wins."""
    table: dict[str, tuple[str, str | tuple[str, ...] | None]] = dict(PLAIN_TOOLS)
    for harness in HARNESSES.values():
        for tool, (permission, key) in harness.tools.items():
            known, keys = table.setdefault(tool, (permission, key))
            if known != permission:
                raise ValueError(f"tool {tool!r} means two things: {known} and {permission}")
            merged = tuple(k for k in (keys if isinstance(keys, tuple) else (keys,)) if k)
            if key and key not in merged:
                table[tool] = (permission, (*merged, key))
    return table


TOOLS = _tool_table()


def permission_of(tool: str) -> str:
    return TOOLS.get(tool, (tool, None))[0]


DEFAULTS: Ruleset = (
    Rule("*", "*", ALLOW),
    Rule("plan_enter", "*", ALLOW),
    Rule("plan_exit", "*", DENY),
)
READ_ONLY_AGENTS = ("Explore", "Plan", "explore", "plan")


def plan_rules(plan_files: Sequence[str], read_only_agents: Sequence[str] = READ_ONLY_AGENTS) -> Ruleset:
    """The planning layer: read and search; edits only to plan files; only
    read-only subagents; everything unknown asks.  The shell is added per
    call from the bash policy's verdict."""
    return (
        Rule("*", "*", ASK),
        Rule("read", "*", ALLOW),
        Rule("search", "*", ALLOW),
        Rule("edit", "*", DENY),
        *(Rule("edit", glob, ALLOW) for glob in plan_files),
        Rule("task", "*", DENY),
        *(Rule("task", agent, ALLOW) for agent in read_only_agents),
        Rule("shell_input", "*", DENY),
        Rule("foreign_shell", "*", DENY),
        Rule("plan_enter", "*", DENY),
        Rule("plan_exit", "*", ALLOW),
    )


# Waiting for the user to approve the plan: nothing runs but the hand-over.
READY_RULES: Ruleset = (Rule("*", "*", DENY), Rule("plan_exit", "*", ALLOW))


@dataclass(frozen=True, slots=True)
class Decision:
    action: str
    reason: str
    permission: str
    subject: str = "*"
    verdict: Any = None  # the bash policy's Verdict, for shell calls

    @property
    def allowed(self) -> bool:
        return self.action == ALLOW


class TransitionError(ValueError):
    pass


# state -> {event: next state}.  "off" is an event in every state.
TRANSITIONS = {
    OFF: {"enter": PLANNING, "off": OFF},
    PLANNING: {"finish": READY, "approve": OFF, "off": OFF},
    READY: {"revise": PLANNING, "approve": OFF, "off": OFF},
}


@dataclass
class PlanGate:
    """Plan-mode state plus the rules it implies.

    `plan_files`: globs of the files the plan may be written to (relative
    ones are matched against paths relative to `root`; `~` is expanded).
    `way_out`: how the user leaves plan mode, named in every denial.
    `user_rules`: merged last, so they override defaults and plan mode.
    """

    plan_files: tuple[str, ...] = (".plans/*.md",)
    way_out: str = "/plan off"
    root: str = "."
    user_rules: Ruleset = ()
    read_only_agents: tuple[str, ...] = READ_ONLY_AGENTS
    policy: Any = None
    state: str = OFF
    history: list[str] = field(default_factory=list)

    # -- states -------------------------------------------------------------
    def transition(self, event: str) -> str:
        allowed = TRANSITIONS[self.state]
        if event not in allowed:
            raise TransitionError(
                f"cannot {event!r} while {self.state}; possible: {', '.join(allowed)}")
        self.history.append(f"{self.state} -{event}-> {allowed[event]}")
        self.state = allowed[event]
        return self.state

    def enter(self) -> str:
        return self.transition("enter")

    def finish(self) -> str:
        return self.transition("finish")

    def revise(self) -> str:
        return self.transition("revise")

    def approve(self) -> str:
        return self.transition("approve")

    def off(self) -> str:
        return self.transition("off")

    @property
    def active(self) -> bool:
        return self.state != OFF

    # -- rules --------------------------------------------------------------
    def ruleset(self, computed: Ruleset = ()) -> Ruleset:
        """Defaults, the current state's layer, `computed` rules, then the user's."""
        if self.state == PLANNING:
            layer = plan_rules([resolve_glob(g) for g in self.plan_files], self.read_only_agents)
        else:
            layer = READY_RULES if self.state == READY else ()
        return merge(DEFAULTS, layer, computed, self.user_rules)

    def disabled(self, tools: Iterable[str]) -> set[str]:
        return disabled(tools, self.ruleset())

    def tools(self, tools: Sequence[str]) -> list[str]:
        """The tool list to offer the model in the current state."""
        gone = self.disabled(tools)
        return [t for t in tools if t not in gone]

    def reminder(self, exit_tool: str = "ExitPlanMode") -> str:
        return reminder(self.plan_files, self.way_out, exit_tool) if self.active else ""

    # -- decisions ----------------------------------------------------------
    def check_tool(self, tool: str, tool_input: Mapping[str, Any] | None = None, *,
                   cwd: str | None = None) -> Decision:
        """Decide one tool call given its name and arguments."""
        permission, keys = TOOLS.get(tool, (tool, None))
        given = tool_input or {}
        key = next((k for k in (keys if isinstance(keys, tuple) else (keys,)) if k in given), None)
        subject = given[key] if key else "*"
        if not isinstance(subject, str):
            return self._deny(permission, "*", f"{tool}: `{key}` is not a string")
        return self.decide(permission, subject, cwd=cwd)

    def decide(self, permission: str, subject: str = "*", *, cwd: str | None = None) -> Decision:
        """Allow, ask or deny `permission` on `subject`; any internal failure
        (a NUL byte in a path, an unreadable directory) is a denial."""
        try:
            return self._decide(permission, subject, cwd)
        except Exception as error:  # never raise, never fail open
            return self._deny(permission, subject, f"the plan gate failed ({type(error).__name__}: {error}), "
                              "so the call is denied")

    def _decide(self, permission: str, subject: str, cwd: str | None) -> Decision:
        if permission == "patch":
            return self._decide_patch(subject, cwd)
        subjects: tuple[str, ...] = (subject,)
        computed: Ruleset = ()
        verdict = None
        if permission in PATH_PERMISSIONS and subject != "*":
            subjects = path_spellings(subject, cwd or self.root, self.root)
        if permission == "shell" and self.state == PLANNING:
            verdict = self._check_command(subject, cwd)
            computed = (Rule("shell", "*", ALLOW if verdict.allowed else DENY),)
        rule = find_rule(self.ruleset(computed), permission, subjects)
        action = rule.action if rule else ASK
        reason = self._reason(action, permission, subject, verdict)
        return Decision(action, reason, permission, subject, verdict)

    def _decide_patch(self, patch: str, cwd: str | None) -> Decision:
        """A patch is an edit of every file it names: the first denial (or
        else the first ask) among them decides it whole."""
        from .patches import PatchError, patch_targets

        try:
            targets = patch_targets(patch)
        except PatchError as error:
            return self._deny("patch", "*", f"patch: {error}; bash-policy cannot tell which files "
                                            "it writes, so it is denied")
        decisions = [self._decide("edit", target, cwd) for target in targets]
        for action in (DENY, ASK):
            worst = next((d for d in decisions if d.action == action), None)
            if worst is not None:
                return Decision(action, worst.reason, "patch", worst.subject)
        return Decision(ALLOW, decisions[0].reason, "patch", ", ".join(targets))

    def _check_command(self, command: str, cwd: str | None):
        from ..judge.engine import check

        return check(command, self.policy, cwd=cwd or self.root)

    def _deny(self, permission: str, subject: str, why: str) -> Decision:
        return Decision(DENY, self._with_way_out(why), permission, subject)

    def _with_way_out(self, text: str) -> str:
        if not self.active:
            return text
        return f"{text}\nPlan mode is on; to leave it: {self.way_out}"

    def _reason(self, action: str, permission: str, subject: str, verdict) -> str:
        if action == ALLOW:
            return "allowed in plan mode" if self.active else "allowed"
        if action == ASK:
            return f"{permission}: needs the user's approval"
        if verdict is not None and not verdict.allowed:
            from ..render import text

            return self._with_way_out(f"bash-policy {text(verdict)}")
        if self.state == READY:
            why = (f"{permission}: the plan is waiting for approval; approve it, "
                   "revise it, or turn plan mode off")
        elif permission == "edit":
            where = ", ".join(self.plan_files) or "no file"
            why = f"edit {subject}: plan mode only writes the plan ({where})"
        elif permission == "task":
            why = f"task {subject}: plan mode only dispatches read-only subagents"
        elif permission == "shell_input":
            why = ("shell_input: text typed into a running shell is a command the check never sees; "
                   "run it as a command of its own")
        elif permission == "foreign_shell":
            why = ("foreign_shell: a PowerShell command; bash-policy reads bash only, "
                   "so run the command through the bash tool")
        else:
            why = f"{permission}: not allowed in plan mode"
        return self._with_way_out(why)


def path_spellings(path: str, cwd: str, root: str) -> tuple[str, ...]:
    """The resolved absolute path, and its form relative to `root` when
    inside it; symlinks and `..` are resolved so they cannot dodge a glob."""
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    real_root = os.path.realpath(root)
    spellings = [full]
    if full.startswith(real_root.rstrip("/") + "/"):
        spellings.append(os.path.relpath(full, real_root))
    return tuple(spellings)


def resolve_glob(glob: str) -> str:
    """Expand `~` and resolve symlinks in a glob's literal directory prefix,
    so it matches `path_spellings` output."""
    glob = os.path.expanduser(glob)
    if not os.path.isabs(glob):
        return glob
    literal = re.split(r"[*?\[]", glob, maxsplit=1)[0]
    head = literal.rsplit("/", 1)[0] or "/"
    return os.path.realpath(head).rstrip("/") + glob[len(head.rstrip("/")):]


def reminder(plan_files: Sequence[str], way_out: str = "/plan off",
             exit_tool: str = "ExitPlanMode") -> str:
    """The plan-mode instruction a harness re-injects every turn: a one-off
    instruction fades in a long conversation."""
    where = " or ".join(plan_files) if plan_files else "your reply"
    return (
        "<system-reminder>Plan mode is on. Explore with read-only tools and read-only "
        "shell commands; do not change files other than the plan. Write the plan to "
        f"{where}, then call {exit_tool} so the user can review it. The user can leave "
        f"plan mode at any time with {way_out}.</system-reminder>"
    )
