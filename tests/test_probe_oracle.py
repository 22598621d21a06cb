"""Probe oracle: every spec reads argv the way the real program does.

For each allowed flag of each installed program (tests/probe_support.py):
the real program must take the word after the flag as a value exactly when
the spec says so; a dangerous word after a value-taking flag (the spec's own
denied write and exec flags, git's --output) must either be denied by the
checker or not acted on; options after an operand must be options or
operands as the spec says; tail's and head's obsolete first words must be
denied exactly when they follow (never end).  Any command that wrote a file,
ran the stub or did not end in the sandbox must be denied.

Run alone with `pytest -m oracle -s` to see the figures.
"""

from __future__ import annotations

import fnmatch
import shutil

import pytest
from probe_support import Report, run_probes

from bash_policy.judge.policy import Policy

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]

# Readings the probe cannot make, and why: the spec is right for them.
MISREAD = {
    ("git", "--version"): "git runs `git version` with the words after it",
    ("git", "-v"): "git runs `git version` with the words after it",
    ("git", "-h"): "git runs `git help` with the words after it",
    ("git diff", "--cached"): "git diff prints its usage, naming no option, for an unknown one here",
    ("git diff", "--staged"): "git diff prints its usage, naming no option, for an unknown one here",
    ("git diff", "--no-index"): "git diff prints its usage, naming no option, for an unknown one here",
    ("git diff", ""): "git diff prints its usage, naming no option, for an unknown one after a commit",
    ("git rev-parse", "--sq-quote"): "rev-parse prints the words after it, quoted",
    ("git rev-parse", "--sq"): "rev-parse prints the words after it, quoted",
    ("stty", "-a"): "stty reads the next word as a setting and refuses settings with -a (nothing set)",
    ("stty", "--all"): "stty reads the next word as a setting and refuses settings with -a (nothing set)",
    ("stty", "-g"): "stty reads the next word as a setting and refuses settings with -g (nothing set)",
    ("stty", "--save"): "stty reads the next word as a setting and refuses settings with -g (nothing set)",
    ("tar", ""): "tar reads a first word without a dash as old-style option letters (input.txt holds t and u); "
                 "`tar tf x --bogus` shows it permutes",
    ("getconf", "-a"): "getconf -a takes an optional PATH operand after it, which the spec reads as an operand",
    ("jar", "-h"): "jar names an unknown option in other words after -h or -? (`Illegal option: --x`, not "
                   "`unrecognized option : --x`), so the canary reads as taken; it was not (`jar -h --x` refuses --x)",
    ("jar", "-?"): "jar names an unknown option in other words after -h or -? (`Illegal option: --x`, not "
                   "`unrecognized option : --x`), so the canary reads as taken; it was not (`jar -? --x` refuses --x)",
    ("ag", "-A"): "ag takes the word after -A only when strtol reads all of it, and gives the canary back "
                  "as its pattern (ag 2.2.0); rule ag_context_lines denies any value but a plain number",
    ("ag", "-B"): "as -A",
    ("ag", "-C"): "as -A",
    ("vmstat", "-f"): "vmstat prints the fork count and exits as it reads -f (`vmstat -f --bogus` exits 0)",
    ("vmstat", "--forks"): "vmstat prints the fork count and exits as it reads -f (`vmstat -f --bogus` exits 0)",
}
# top takes the next word as the value whatever it is, and names it when it is
# a bad value: `top -b -d -n 1` says "bad delay interval '-n'".
MISREAD |= {("top", flag): "top names a bad value it took in its complaint, as it names an unknown option"
            for flag in ("-d", "--delay", "-E", "--scale-summary-mem", "-e", "--scale-task-mem", "-n",
                         "--iterations", "-o", "--sort-override", "-p", "--pid", "-U", "--filter-any-user",
                         "-u", "--filter-only-euser")}

# Allowed flags the installed version refuses in the probe's form, so that they do
# nothing here: flags it does not have (each checked against the manual of the
# version named), and flags it takes only in other company (said why).
NEWER = {
    "gh search code *": "gh 2.23 has no `search code` (gh manual, later releases)",
    "gh cache *": "gh 2.23 has no `cache` (gh manual, later releases)",
    "gh variable *": "gh 2.23 has no `variable` (gh manual, later releases)",
    "gh org *": "gh 2.23 has no `org` (gh manual, later releases)",
    "gh ruleset *": "gh 2.23 has no `ruleset` (gh manual, later releases)",
    "gh run list *": "-s/--status and -e/--event (gh manual, later releases)",
    "gh run view *": "-a/--attempt (gh manual, later releases)",
    "git * --default-prefix": "git 2.41",
    "git diff --merge-base": "git diff --merge-base with one commit: git 2.40",
    "git * --omit-empty": "git 2.42",
    "git for-each-ref *": "--exclude, --stdin, --column: git 2.42 and later",
    "git show-ref *": "--exists and --branches: git 2.43 and later",
    "git check-attr --source": "git 2.40",
    "git shortlog *": "revision options shortlog reads only in later versions",
    "jq *": "jq 1.7: --raw-output0, -b/--binary, --build-configuration",
    "apt-cache -*": "apt reads every option before it knows the command, then refuses one the command does not "
                    "take; the probe gives the option with no command (each command's own are probed too)",
    "apt -*": "as apt-cache",
    "jps -help": "jps takes its help options only as the sole word: `jps -help -x` says `illegal argument: -help`",
    "jps -[?h]": "as jps -help",
    "jps --help": "as jps -help",
    "mawk *": "the awk spec is shared by gawk, mawk and the one-true-awk; mawk refuses gawk's options",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Report:
    result = run_probes(Policy.default(), tmp_path_factory.mktemp("probe"))
    print(f"\nprobe oracle: {result.targets} specs and subcommands, {result.flags} allowed flags "
          f"({result.names} names; {result.value_flags} take a value), {result.runs} reading runs, "
          f"{result.effect_runs} dangerous-word runs; skipped: {'; '.join(result.skipped)}; "
          f"no unknown-option message: {'; '.join(result.unreadable)}")
    return result


def test_nothing_with_an_effect_is_allowed(report):
    effects = [str(f) for f in report.findings if f.kind == "effect"]
    assert not effects, "\n".join(effects)


def test_specs_read_values_and_operands_as_the_programs_do(report):
    wrong = [str(f) for f in report.findings
             if f.kind != "effect" and (f.target, f.flag) not in MISREAD]
    assert not wrong, "\n".join(wrong)


def test_flags_missing_from_the_installed_versions_are_known(report):
    unexplained = [u for u in report.unknown if not any(fnmatch.fnmatch(u, p) for p in NEWER)]
    assert not unexplained, "\n".join(unexplained)


def test_the_oracle_reads_most_flags(report):
    """A probe that silently stopped reading would pass everything."""
    assert report.targets > 100 and report.value_flags > 900 and report.runs > 3000
    assert report.effect_runs > 1000
