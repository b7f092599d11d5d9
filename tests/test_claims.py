"""Every number a notebook's sentences quote, measured (tests/claims.py; one table per notebook, claims_NN.py)."""

import importlib
from pathlib import Path

import pytest

import claims

TABLES = sorted(p.stem for p in Path(__file__).parent.glob("claims_[0-9][0-9].py"))


def all_claims():
    for table in TABLES:
        module = importlib.import_module(table)
        for claim in module.CLAIMS:
            yield pytest.param(module.NOTEBOOK, claim, id=f"{module.NOTEBOOK}: {claim.anchor}")


@pytest.mark.parametrize("notebook, claim", list(all_claims()))
def test_claim(notebook, claim):
    claims.check(notebook, claim)


def test_sentences_and_numbers_are_read_as_a_reader_reads_them():
    text = "Heads learned it in 9 of 16 runs (32–79 %). The loss fell to −0.14, then 45,056 updates.\n\n- A list item 2.5"
    assert claims.sentences(text) == ["Heads learned it in 9 of 16 runs (32–79 %).",
                                      "The loss fell to −0.14, then 45,056 updates.", "- A list item 2.5"]
    assert claims.numbers(claims.sentences(text)[0]) == [9, 16, 32, 79]
    assert claims.numbers("L0H3 moved −0.14 and 45,056") == [-0.14, 45056]
    assert claims.in_order([9, 16], [1, 9, 3, 16], 0) and not claims.in_order([16, 9], [9, 16], 0)
