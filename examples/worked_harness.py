"""A worked plan-mode harness, runnable offline: `python3 examples/worked_harness.py`.

A scripted "model" asks to localise a login page's error messages.  The
harness puts together the three plan-mode means: the instruction (a
reminder re-injected every turn), the permission layer (bash_policy.integrations.gate:
writes only to the plan file, shell commands through the bash policy) and
tool trimming (the tool list comes from the gate), then hands over with an
approval step.  The user first sends the plan back, then approves it, and
the same edit that was blocked before now goes through.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bash_policy import run  # noqa: E402
from bash_policy.integrations.gate import ALLOW, DENY, PlanGate  # noqa: E402

ALL_TOOLS = ["Read", "Grep", "Bash", "Edit", "Write", "Task", "ExitPlanMode", "EnterPlanMode"]
PLAN_FILE = ".plans/login-i18n.md"
LOGIN = 'export function Login() {\n  const errorMsg = "Wrong password";\n  return errorMsg;\n}\n'

# The scripted model: one user turn, then its tool calls.
SCRIPT: list[tuple[str, dict]] = [
    ("user", {"text": "Localise the error messages on the login page."}),
    ("Grep", {"pattern": "errorMsg"}),
    ("Read", {"file_path": "src/Login.tsx"}),
    ("Bash", {"command": "rg -n errorMsg src"}),
    ("Bash", {"command": "git log --oneline -5"}),
    ("Bash", {"command": "rg -n errorMsg src > hits.txt"}),
    ("Edit", {"file_path": "src/Login.tsx", "old_string": '"Wrong password"', "new_string": 't("login.wrongPassword")'}),
    ("Task", {"subagent_type": "general-purpose", "prompt": "apply the change"}),
    ("Write", {"file_path": PLAN_FILE, "content": "# Plan: login i18n\n1. Add the key login.wrongPassword\n"}),
    ("ExitPlanMode", {"plan": "# Plan: login i18n\n1. Add the key login.wrongPassword"}),
    ("user", {"text": "Also cover the lockout message."}),
    ("Write", {"file_path": PLAN_FILE,
               "content": "# Plan: login i18n\n1. Add login.wrongPassword\n2. Add login.lockedOut\n"}),
    ("ExitPlanMode", {"plan": "# Plan: login i18n\n1. login.wrongPassword\n2. login.lockedOut"}),
    ("user", {"text": "Go ahead."}),
    ("Edit", {"file_path": "src/Login.tsx", "old_string": '"Wrong password"', "new_string": 't("login.wrongPassword")'}),
]


class Harness:
    """Runs tool calls through the plan gate and keeps the transcript."""

    def __init__(self, root: Path, approve: Callable[[str], tuple[bool, str]]):
        self.root = root
        self.approve = approve
        self.gate = PlanGate(plan_files=(".plans/*.md",), root=str(root))
        self.messages: list[dict] = []
        self.log: list[str] = []

    def say(self, line: str) -> None:
        self.log.append(line)

    # Means 1: the instruction, re-sent every turn while plan mode is on.
    def user_turn(self, text: str) -> None:
        content = [text] + ([self.gate.reminder()] if self.gate.active else [])
        self.messages.append({"role": "user", "content": content, "tools": self.gate.tools(ALL_TOOLS)})
        self.say(f"> {text}" + ("   [+ plan-mode reminder]" if self.gate.active else ""))

    # Means 2: the permission layer, then the tool itself.
    def call(self, tool: str, args: dict) -> str:
        if tool == "ExitPlanMode" and self.gate.check_tool(tool, args).action == ALLOW:
            return self._hand_over(args["plan"])
        decision = self.gate.check_tool(tool, args, cwd=str(self.root))
        if decision.action == DENY:
            return "denied: " + decision.reason
        if decision.action != ALLOW:
            return f"denied: the user declined {tool}"  # this script's user answers "no" to asks
        return self._execute(tool, args)

    # Means 3 is `self.gate.tools(...)` above: the model never sees EnterPlanMode
    # while planning, and a subagent dispatched now could only be a read-only one.

    def _hand_over(self, plan: str) -> str:
        self.gate.finish()
        approved, feedback = self.approve(plan)
        if approved:
            self.gate.approve()
            return "approved: plan mode is off; you can edit files now"
        self.gate.revise()
        return f"keep planning: {feedback}"

    def _execute(self, tool: str, args: dict) -> str:
        if tool == "Read":
            return (self.root / args["file_path"]).read_text()
        if tool == "Grep":
            hits = [f"{p.relative_to(self.root)}:{n}: {line.strip()}"
                    for p in sorted((self.root / "src").rglob("*")) if p.is_file()
                    for n, line in enumerate(p.read_text().splitlines(), 1) if args["pattern"] in line]
            return "\n".join(hits)
        if tool == "Bash":
            if self.gate.active:  # read-only, hardened, detached
                result = run(args["command"], cwd=str(self.root), timeout=20)
                return (result.stdout + result.stderr).decode(errors="replace")
            done = subprocess.run(["bash", "-c", args["command"]], cwd=self.root, capture_output=True,
                                  text=True, stdin=subprocess.DEVNULL, timeout=20)
            return done.stdout + done.stderr
        path = self.root / args["file_path"]
        if tool == "Write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args["content"])
            return f"wrote {args['file_path']}"
        if tool == "Edit":
            path.write_text(path.read_text().replace(args["old_string"], args["new_string"], 1))
            return f"edited {args['file_path']}"
        return f"{tool} is not implemented in this example"


def scripted_user():
    """Sends the first plan back with feedback, approves the second."""
    answers = iter([(False, "also cover the lockout message"), (True, "")])
    return lambda plan: next(answers)


def play(root: Path) -> Harness:
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "Login.tsx").write_text(LOGIN)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=demo", "-c", "user.email=demo@example.com", "commit",
                    "-q", "--allow-empty", "-m", "Login page"], cwd=root, check=True)
    harness = Harness(root, scripted_user())
    harness.gate.enter()
    harness.say(f"plan mode: {harness.gate.state}; tools offered: {', '.join(harness.gate.tools(ALL_TOOLS))}")
    for tool, args in SCRIPT:
        if tool == "user":
            harness.user_turn(args["text"])
            continue
        shown = args.get("command") or args.get("file_path") or args.get("pattern") or args.get(
            "subagent_type") or ""
        harness.say(f"* {tool}({shown})")
        result = harness.call(tool, args)
        harness.say("    " + result.strip().replace("\n", "\n    "))
    harness.say(f"plan mode: {harness.gate.state}")
    return harness


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        print("\n".join(play(Path(tmp)).log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
