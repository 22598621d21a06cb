"""The files a Codex-style patch writes, read from its headers; what is not
read exactly is an error, so the gate denies the patch whole."""

import pytest

from bash_policy.integrations import gate
from bash_policy.integrations.patches import PatchError, patch_targets


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


@pytest.mark.parametrize("text,targets", [
    (patch("*** Add File: plan.md", "+# plan"), ("plan.md",)),
    (patch("*** Update File: a.py", "@@ def f():", "-    pass", "+    return 1", "*** End of File",
           "*** Delete File: old.py"), ("a.py", "old.py")),
    (patch("*** Update File: a.py", "*** Move to: b/a.py", "@@", "-x", "+y"), ("a.py", "b/a.py")),
    # Content that looks like a header is content: an added line starts with +.
    (patch("*** Add File: plan.md", "+*** Update File: src.py"), ("plan.md",)),
    # Codex accepts a heredoc around the patch and whitespace around the whole.
    ("<<'EOF'\n" + patch("*** Add File: p.md", "+x") + "EOF\n", ("p.md",)),
    ("\n\n  " + patch("*** Add File: p.md", "+x") + "\n\n", ("p.md",)),
    (patch("*** Add File: with space.md", "+x"), ("with space.md",)),
])
def test_targets(text, targets):
    assert patch_targets(text) == targets


@pytest.mark.parametrize("text,problem", [
    ("", "must start"),
    ("*** Add File: a\n+x\n", "must start"),
    (patch("*** Add File: a", "+x")[:-len("*** End Patch\n")], "must start"),
    (patch("*** Copy File: a"), "no patch header"),
    (patch("*** Add File:  a", "+x"), "spaces"),  # Codex would write the file " a"
    (patch("*** Add File: ", "+x"), "no patch header"),  # trimmed: no marker left
    (patch(" *** Move to: elsewhere"), "whitespace around it"),
    (patch("*** Add File: a\tb\x1b", "+x"), "control characters"),
    (patch("@@", "-x"), "names no file"),
])
def test_what_cannot_be_read_exactly_is_an_error(text, problem):
    with pytest.raises(PatchError, match=problem):
        patch_targets(text)


def test_the_gate_decides_a_patch_as_an_edit_of_every_file_it_names(tmp_path):
    planning = gate.PlanGate(plan_files=("plans/*.md",), root=str(tmp_path), state=gate.PLANNING)
    ok = planning.decide("patch", patch("*** Add File: plans/a.md", "+x"))
    assert ok.action == gate.ALLOW
    for text in (patch("*** Add File: plans/a.md", "+x", "*** Delete File: src.py"),
                 patch("*** Update File: plans/a.md", "*** Move to: ../a.md", "@@", "-x", "+y"),
                 patch("*** Update File: plans/../src.py", "@@", "-x", "+y")):
        denied = planning.decide("patch", text)
        assert denied.action == gate.DENY and "plan mode only writes the plan" in denied.reason, text
    broken = planning.decide("patch", "rm -rf /")
    assert broken.action == gate.DENY and "cannot tell which files" in broken.reason
    assert gate.PlanGate(state=gate.OFF).decide("patch", patch("*** Delete File: x")).action == gate.ALLOW
