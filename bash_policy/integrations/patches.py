"""The files a Codex-style patch (`*** Begin Patch` … `*** End Patch`) writes.

Codex's apply_patch tool takes the patch as text, and the files it adds,
updates, deletes or moves to are named inside it, one header line each.
A gate needs every one of them, so this reads the headers more widely than
Codex does and refuses what it cannot read exactly: any line that, once
stripped, starts with a header marker counts as a header (Codex trims hunk
headers, codex-rs/apply-patch/src/parser.rs), and a header with whitespace
around it, a path with control characters, or a patch without its begin and
end markers is an error, not a guess.  Checked against Codex CLI 0.171.0
(tests/e2e: a patch that adds a plan file runs, one that also names a
source file is denied whole).
"""

from __future__ import annotations

BEGIN, END = "*** Begin Patch", "*** End Patch"
# Codex parses `*** Move to: ` on the raw line and the others on the trimmed one.
TARGET_MARKERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
OTHER_MARKERS = (BEGIN, END, "*** End of File")
HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')


class PatchError(ValueError):
    """The text is not a patch whose targets can be read exactly."""


def patch_targets(text: str) -> tuple[str, ...]:
    """Every path the patch names, in order, as written (relative paths are
    relative to the directory the client applies it in)."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.strip().split("\n")]
    if len(lines) >= 4 and lines[0] in HEREDOC_OPENERS and lines[-1].endswith("EOF"):
        lines = lines[1:-1]  # Codex's lenient parser accepts a heredoc around the patch
    if not lines or lines[0].strip() != BEGIN or lines[-1].strip() != END:
        raise PatchError(f"a patch must start with {BEGIN!r} and end with {END!r}")
    targets = []
    for number, line in enumerate(lines, 1):
        header = line.strip()
        if not header.startswith("***"):
            continue
        marker = next((m for m in TARGET_MARKERS if header.startswith(m)), None)
        if marker is None:
            if header not in OTHER_MARKERS:
                raise PatchError(f"line {number}: {header[:80]!r} is no patch header bash-policy knows")
            continue
        if header != line:
            raise PatchError(f"line {number}: a patch header with whitespace around it")
        path = header[len(marker):]
        if not path or path != path.strip() or any(ord(c) < 32 or ord(c) == 127 for c in path):
            raise PatchError(f"line {number}: the path {path!r} is empty or has spaces or control "
                             "characters at its ends")
        targets.append(path)
    if not targets:
        raise PatchError("the patch names no file")
    return tuple(targets)
