"""Machine output for `check`, `test` and `audit`: JSON, JSON lines, GitHub
Actions annotations and SARIF 2.1.0, plus the `--statistics` table.

Each subcommand turns what it found into `Annotation`s (a message, a code,
where it is); the GitHub and SARIF writers only lay those out.  Text is
render.py's; the JSON documents carry `schema_version` (verdict.py).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence

from .judge.codes import CODES
from .judge.verdict import SCHEMA_VERSION, Denial, Fix, Verdict
from .records import dataclass
from .render import escape

FORMATS = ("text", "json", "json-lines", "github", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "docs/codes.md"  # not a web address: see docs/model.md, "Documentation links"


@dataclass(frozen=True)
class Annotation:
    """One finding where a file or the command shows it.  `path` None: in the
    command itself (`check`), whose text `source` holds; `line` and the
    columns are 1-based, columns counted in code points, `end_column` past the end."""

    rule: str  # a BP code, or one of CORPUS_RULES
    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None
    level: str = "error"  # SARIF's levels: error, warning, note
    denial: Denial | None = None  # for the fix of a denial in `check`'s command


# Findings of `bash-policy test` that are not denial codes.
CORPUS_RULES = {
    "corpus-line": "A corpus line that is not `allow|deny [CODES] command`, or a file that cannot be read.",
    "corpus-verdict": "A corpus case whose verdict is not the expected one.",
}


def dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False)


# -- statistics ----------------------------------------------------------------

def statistics(verdicts: Iterable[Verdict]) -> list[dict]:
    """Denials per code, most frequent first, as ruff's --statistics: how many,
    and how many of them have a fix."""
    count: Counter[str] = Counter()
    fixable: Counter[str] = Counter()
    for verdict in verdicts:
        for d in verdict.denials:
            count[d.code] += 1
            fixable[d.code] += d.fix is not None
    return [{"code": code, "name": CODES[code].name, "count": n, "fixable": fixable[code]}
            for code, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))]


def statistics_text(rows: Sequence[dict]) -> str:
    if not rows:
        return "no denials"
    wide = max(len(str(r["count"])) for r in rows)
    named = max(len(r["name"]) for r in rows)
    return "\n".join(f"{r['count']:>{wide}}  {r['code']}  {r['name']:<{named}}"
                     + (f"  [{r['fixable']} with a fix]" if r["fixable"] else "") for r in rows).rstrip()


# -- annotations from verdicts -------------------------------------------------

def denial_annotations(verdict: Verdict, path: str | None = None, line: int | None = None,
                       offset: int | None = None, level: str = "error") -> list[Annotation]:
    """One annotation per denial.  In a file, `offset` is the column (0-based)
    where the command starts on `line`, when it stands there verbatim."""
    out = []
    for d in verdict.denials:
        message = f"{d.code} {d.name}: {escape(d.message)}; fix: {escape(d.hint)}"
        if path is None:
            at_line, column = _position(verdict.command, d.span.start)
            end = _position(verdict.command, max(d.span.end, d.span.start + 1))[1]
            out.append(Annotation(d.code, message, None, at_line, column, end, level, d))
        elif offset is not None and "\n" not in verdict.command:
            out.append(Annotation(d.code, message, path, line, offset + d.span.start + 1,
                                  offset + max(d.span.end, d.span.start + 1) + 1, level))
        else:
            out.append(Annotation(d.code, message, path, line, level=level))
    return out


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column (code points) of `text[index]`."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


# -- GitHub Actions --------------------------------------------------------------

def github(annotations: Iterable[Annotation]) -> str:
    """Workflow commands (`::error file=F,line=L,col=C,title=T::message`) that
    GitHub Actions shows on the file and line.  Values are escaped as the runner
    reads them (%, CR and LF; in properties also `:` and `,`), so a command's text
    cannot start a workflow command of its own."""
    out = []
    level = {"error": "error", "warning": "warning", "note": "notice"}
    for a in annotations:
        props = {"file": a.path, "line": a.line, "col": a.column, "endColumn": a.end_column,
                 "title": f"bash-policy {a.rule}"}
        if a.path is None:  # no file to point into: the line and columns would mislead
            props.update(line=None, col=None, endColumn=None)
        shown = ",".join(f"{k}={_github_property(str(v))}" for k, v in props.items() if v is not None)
        out.append(f"::{level[a.level]} {shown}::{_github_data(a.message)}")
    return "\n".join(out)


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


# -- SARIF 2.1.0 -------------------------------------------------------------------

def sarif(annotations: Sequence[Annotation], version: str, command: str | None = None,
          fix: bool = True) -> dict:
    """A SARIF 2.1.0 log (validated against the OASIS schema by tests/test_formats.py).
    `command`: the checked text, given as the run's only artifact, which
    annotations without a path point into (with their fixes as replacements)."""
    codes = sorted({a.rule for a in annotations})
    rules = [_rule(code) for code in codes]
    index = {code: k for k, code in enumerate(codes)}
    results = []
    for a in annotations:
        result: dict = {"ruleId": a.rule, "ruleIndex": index[a.rule], "level": a.level,
                        "message": {"text": a.message}}
        location = _location(a, command)
        if location is not None:
            result["locations"] = [location]
        if fix and command is not None and a.denial is not None and a.denial.fix is not None:
            result["fixes"] = [_fix(a.denial.fix)]
        results.append(result)
    run: dict = {
        "tool": {"driver": {"name": "bash-policy", "version": version, "rules": rules}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if command is not None:
        run["artifacts"] = [{"contents": {"text": command}, "length": len(command),
                             "description": {"text": "the checked command"}}]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _rule(code: str) -> dict:
    if code in CODES:
        from .reference import code_page

        c = CODES[code]
        # The page, not a helpUri: SARIF's must be an absolute address, and the
        # documentation is a file of the repository (docs/model.md).
        return {"id": code, "name": c.name, "shortDescription": {"text": c.blocks},
                "fullDescription": {"text": c.why},
                "help": {"text": code_page(c), "markdown": f"See `{c.url}` in the bash-policy repository."},
                "properties": {"url": c.url}}
    return {"id": code, "name": code, "shortDescription": {"text": CORPUS_RULES[code]}}


def _location(a: Annotation, command: str | None) -> dict | None:
    if a.line is None:
        return None
    region: dict = {"startLine": a.line}
    if a.column is not None:
        region["startColumn"] = a.column
        if a.end_column is not None:
            region["endColumn"] = a.end_column
    if a.path is None:
        if command is None:
            return None
        span = a.denial.span if a.denial is not None else None
        if span is not None:
            region.update(charOffset=span.start, charLength=span.end - span.start)
        return {"physicalLocation": {"artifactLocation": {"index": 0}, "region": region}}
    return {"physicalLocation": {"artifactLocation": {"uri": a.path}, "region": region}}


def _fix(fix: Fix) -> dict:
    return {"description": {"text": f"{fix.applicability} fix"},
            "artifactChanges": [{"artifactLocation": {"index": 0}, "replacements": [
                {"deletedRegion": {"charOffset": e.span.start, "charLength": e.span.end - e.span.start},
                 "insertedContent": {"text": e.replacement}} for e in fix.edits]}]}


def schema_document(kind: str, **fields) -> dict:
    """A JSON document of `test` or `audit`: its kind and schema version first."""
    return {"schema_version": SCHEMA_VERSION, "kind": kind, **fields}
