"""Text output is safe on a terminal: what comes from the command is escaped,
and the caret sits under the span by display width."""

from __future__ import annotations

import re

import pytest

from bash_policy import check
from bash_policy.render import escape, text, width


def _caret_column(rendered: str) -> tuple[str, int, int]:
    """The echoed line, and where the first caret line starts and how wide it is."""
    lines = rendered.splitlines()
    at = next(k for k, line in enumerate(lines) if re.fullmatch(r" +\^+", line))
    caret = lines[at]
    return lines[at - 1], len(caret) - len(caret.lstrip()), len(caret.strip())


@pytest.mark.parametrize("command,shown", [
    ("echo \x1b]0;pwned\x07 > x", "echo \\x1b]0;pwned\\x07 > x"),  # sets the terminal title if raw
    ("rg x\x00y", "rg x\\x00y"),
    ("rg foo\r", "rg foo\\x0d"),
    ("rg \x9b31m x", "rg \\x9b31m x"),                              # C1 CSI
    ("rg \u202efoo", "rg \\u202efoo"),                              # a bidi override reverses text
    ("rg a\u200bb > o", "rg a\\u200bb > o"),                        # zero-width space
    ("rg a\tb > o", "rg a\\x09b > o"),
    ("rg \udcff > o", "rg \\xff > o"),                              # a byte that was not UTF-8
])
def test_control_characters_are_escaped(command, shown):
    rendered = text(check(command), pointers=True)
    assert not any(c < " " and c != "\n" or "\x7f" <= c <= "\x9f" for c in rendered), repr(rendered)
    assert "\u202e" not in rendered and "\u200b" not in rendered
    assert f"    {shown}" in rendered.splitlines()


def test_messages_and_hints_are_escaped_too():
    verdict = check("rg --pre \x1bx y")
    assert "\x1b" not in text(verdict)


def test_colour_is_still_painted():
    assert text(check("rg foo > out"), color=True).count("\x1b[") >= 4


@pytest.mark.parametrize("command,target", [
    ("rg 日本語 > 出力", "> 出力"),                 # wide: two columns each
    ("rg 👍 > out", "> out"),                      # emoji
    ("rg e\u0301e\u0301 > out", "> out"),          # combining acute: no column
    ("rg \x1b x", "\x1b"),                         # BP104 on ESC, shown as four columns
    ("echo 日本\n  rg 語 > o", "> o"),              # second line, with its line number
])
def test_caret_is_under_the_span(command, target):
    line, column, caret = _caret_column(text(check(command)))
    at = line.index(escape(target))
    assert column == width(line[:at])
    assert caret == width(escape(target))


def test_width():
    assert width("abc") == 3 and width("日本") == 4 and width("👍") == 2 and width("e\u0301") == 1


def test_long_lines_keep_the_caret_under_the_span():
    command = "rg " + "日" * 150 + " > out " + "x" * 200
    line, column, caret = _caret_column(text(check(command)))
    assert line.strip().startswith("…")
    at = line.index("> out")
    assert column == width(line[:at]) and caret == 5
