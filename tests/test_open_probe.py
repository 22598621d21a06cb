"""Open probe: a value or operand that names a path opens only what the spec marks as read.

Every allowed flag that takes a value and every operand position of every
installed program is given a FIFO among sibling FIFOs, and a directory of
FIFOs and links to /dev/null, under strace (tests/open_probe_support.py); a
program that opens the FIFO, its siblings or the files in the directory
must have the flag or operand marked with that shape in its spec (`reads`,
`positionals.files`), so that the checker looks at those files.

Run alone with `pytest -m oracle -s tests/test_open_probe.py` to see the figures.
"""

from __future__ import annotations

import shutil

import pytest
from open_probe_support import OpenReport, run_open_probes

from bash_policy.judge.policy import Policy

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(shutil.which("strace") is None or shutil.which("git") is None,
                                 reason="needs strace and git")]

# Opens the spec rightly does not mark, and why.
KNOWN: dict[tuple[str, str], str] = {
    ("df", "operand 1"): "df opens each operand with O_NONBLOCK only to make an automounter mount it, and "
                         "reads nothing from it (coreutils 9.1 under strace: a FIFO returns at once)",
    ("df", "operand 2"): "as operand 1",
    ("ag", "operand 1"): "operand 1 is ag's pattern, so ag searches the working directory and reads the ignore "
                         "files of each directory it walks (bp-open/.git/info/exclude): walks are bounded by the "
                         "harness's timeout (docs/threat-model.md), as for rg and fd",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> OpenReport:
    result = run_open_probes(Policy.default(), tmp_path_factory.mktemp("open"), KNOWN)
    print(f"\nopen probe: {len(result.programs)} programs, {result.targets} specs and subcommands, "
          f"{result.flag_uses} value-taking flag uses ({result.flags} probed: a flag a program's "
          f"subcommands share once), {result.operands} operand positions, {result.runs} runs "
          f"({result.fifo_runs} opened a FIFO) "
          f"in {result.seconds:.0f} s; {len(result.findings)} findings; did not end: "
          f"{'; '.join(result.hung) or 'none'}; slowest: "
          f"{', '.join(f'{p} {t:.0f} s' for p, t in result.slowest())}; skipped: {'; '.join(result.skipped)}")
    return result


def test_nothing_opened_that_the_spec_does_not_mark(report):
    assert not report.findings, "\n".join(map(str, report.findings))


def test_the_probe_reaches_the_programs(report):
    """A probe that silently stopped tracing would pass everything."""
    assert len(report.programs) > 80 and report.flags > 500 and report.runs > 1500
    assert report.fifo_runs > 100, "programs that open their values were seen doing it"
