"""The text of every kind of denial is kept, one file per code
(tests/fixtures/messages/): a change of wording shows as a diff there, and
a new kind of denial needs its entry (`python tests/messages.py` writes it)."""

import pytest
from messages import ROOT, found, met, saved

SAVED = saved()
ENTRIES = [entry for entries in SAVED.values() for entry in entries]


def test_there_are_entries():
    assert len(SAVED) > 25 and len(ENTRIES) > 250


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e.kind}:{e.command[:40]}")
def test_every_entry_holds(entry):
    assert entry in found(entry.command, entry.cwd), "the wording changed: run `python tests/messages.py`"


def test_every_kind_met_has_an_entry():
    kinds = {entry.kind for entry in ENTRIES}
    missing = sorted(set(met()) - kinds)
    assert not missing, f"kinds with no entry (run `python tests/messages.py`): {missing}"


def test_each_file_holds_its_code():
    from bash_policy import check

    for code, entries in SAVED.items():
        for entry in entries:
            verdict = check(entry.command, cwd=entry.cwd and str(ROOT / entry.cwd))
            assert code in {d.code for d in verdict.denials if d.kind == entry.kind}, entry




def test_every_denial_is_of_a_kind():
    """Every denial the corpora and examples produce is a typed problem: a
    denial built without one would have no entry to keep its wording."""
    from messages import commands

    from bash_policy import check

    untyped = [(command, d.code.value) for command, cwd in commands()
               for d in check(command, cwd=cwd and str(ROOT / cwd)).denials if not d.kind]
    assert not untyped, untyped[:5]
