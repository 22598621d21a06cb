"""tree-sitter-bash nests pipelines otherwise than bash in two shapes; the
tree-sitter reader maps them back, and nothing else (issue 18, reader precision).

`a | b | c && d`: tree-sitter reads `pipeline(a, list(pipeline(b, c), d))`,
bash `list(pipeline(a, b, c), d)`.  `a | b 2>x | c`: tree-sitter hangs the
redirection on `pipeline(a, b)`, bash on `b`.  Both were denied (BP106),
among them one of the shapes agents type most
(`ps aux | grep x | grep -v grep | wc -l && echo done`).  These tests run
without bashlex (the default install).
"""

from __future__ import annotations

import pytest

from bash_policy import check
from bash_policy.read import exact, treesitter
from bash_policy.read.crosscheck import compare

MISNESTED = [
    "ps aux | grep x | grep -v grep | wc -l && echo done",
    "ls | sort | head -n 3 || echo none",
    "ls | sort | head && ls | wc -l | cat || echo no; echo end",
    "! ls | grep -q x | cat && echo absent",
    "time ls | sort | head && echo timed",
    "ls | time sort | head && echo x",  # after `|`, `time` is a program
    "ls |& sort | head && echo y",
    "ls | sort | head && echo y 2>/dev/null",
    "if ls | sort | head && true; then echo a; fi",
    'echo "$(ls | sort | head && echo in)"',
    "ls | sort | head &&\necho on the next line",
    "{ ls; } | sort | uniq -c && echo grouped",
    "ls | grep x 2>/dev/null | wc -l",
    "ls | grep x 2>/dev/null | grep y 2>&1 | wc -l && echo z",
    "! ls | grep x 2>/dev/null | wc -l",
    "ls | grep x 2>/dev/null |& wc -l",
]


def _misnested(node) -> bool:
    """Whether tree-sitter's raw tree holds one of the two shapes."""
    if node.type == "pipeline":
        members = [c for c in node.children if c.type not in ("|", "|&", "comment")]
        first = members[0]
        if members[-1].type == "list":
            return True
        body = first.child_by_field_name("body") if first.type == "redirected_statement" else None
        if body is not None and body.type == "pipeline":
            return True
    return any(_misnested(c) for c in node.children)


@pytest.mark.parametrize("command", MISNESTED)
def test_tree_sitter_misnests_and_is_read_back_as_bash_reads(command):
    assert _misnested(treesitter._PARSER.parse(command.encode()).root_node)
    mine = exact.parse(command)
    assert not mine.problems, mine.problems
    assert compare(mine, treesitter.parse(command), "tree-sitter") is None
    assert check(command).allowed, command


# The source tree-sitter reads, and a different reading of the same words that
# the comparison must still tell apart.
ELSEWHERE = [
    ("ls | sort | head && echo x", "ls | sort && head | echo x"),
    ("ls | sort | head && echo x", "ls | sort | head || echo x"),
    ("ls | sort | head && echo x", "ls | sort | head ; echo x"),
    ("ls | sort | head && echo x", "ls | sort |& head && echo x"),
    ("ls | sort | head && echo x", "! ls | sort | head && echo x"),
    ("ls | grep x 2>/dev/null | wc", "ls 2>/dev/null | grep x | wc"),
    ("ls | grep x 2>/dev/null | wc", "ls | grep x | wc 2>/dev/null"),
]


@pytest.mark.parametrize("source, other", ELSEWHERE)
def test_a_different_reading_still_differs(source, other):
    theirs = treesitter.parse(source)
    assert compare(exact.parse(source), theirs, "tree-sitter") is None
    assert compare(exact.parse(other), theirs, "tree-sitter") is not None


@pytest.mark.parametrize("command", [
    "ls | ! sort | head && echo x",      # `!` after `|` is a syntax error in bash
    "ls | sort | head && rm -rf x",
    "ls | sort > out | head && echo x",
])
def test_denials_stay(command):
    assert not check(command).allowed
