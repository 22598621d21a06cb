"""Generated docs match the code table and the specs they are made from."""

from bash_policy import docgen
from bash_policy.judge.codes import CODES


def test_codes_doc_is_current():
    assert (docgen.DOCS / "codes.md").read_text() == docgen.codes_md(), \
        "docs/codes.md is stale: run python -m bash_policy.docgen"


def test_rules_doc_is_current():
    assert (docgen.DOCS / "rules.md").read_text() == docgen.rules_md(), \
        "docs/rules.md is stale: run python -m bash_policy.docgen"


def test_reference_doc_is_current():
    assert (docgen.DOCS / "reference.md").read_text() == docgen.reference_md(), \
        "docs/reference.md is stale: run python -m bash_policy.docgen"


def test_every_code_is_documented_completely():
    for code in CODES.values():
        assert all([code.blocks, code.why, code.example, code.fix, code.passes]), code.code
