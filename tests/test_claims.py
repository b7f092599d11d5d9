"""Every number a notebook's sentences quote, measured (tests/claims.py; one table per notebook, claims_NN.py)."""

import importlib
from pathlib import Path

import pytest

import claims

TABLES = sorted(p.stem for p in Path(__file__).parent.glob("claims_*.py"))


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


@pytest.mark.parametrize("notebook, anchor, old, reworded", [
    ("04", r"the list game is not reliable", "Then the list game is not reliable: the\n1-head model learned it in",
     "For a single head the list game is not reliable: that model picked it up in"),
    ("07", r"Seed by seed, one key/value head is below twelve", "and below two in", "and under two in"),
])
def test_a_reworded_sentence_passes_and_a_changed_number_fails_naming_it(notebook, anchor, old, reworded):
    """A teacher rewords a sentence of 04 and of 07, keeping its numbers: the claim still holds. Then changes one of
    its numbers: the claim fails with one line naming the sentence, the number written and the number measured."""
    table = importlib.import_module(f"claims_{notebook}")
    claim = next(c for c in table.CLAIMS if c.anchor == anchor)
    text = claims.markdown(notebook)
    sentence = claims.find_sentence(notebook, anchor)
    flat = " ".join(text.split())
    assert " ".join(old.split()) in flat, "the sentence this test rewords has changed; pick its new words"
    edited = flat.replace(" ".join(old.split()), reworded)
    claims.check(notebook, claim, text)  # as shipped
    claims.check(notebook, claim, edited)  # reworded, numbers kept
    first = claims.numbers(claims.find_sentence(notebook, anchor, edited))[0]
    changed = edited.replace(claims.find_sentence(notebook, anchor, edited),
                             claims.find_sentence(notebook, anchor, edited).replace(f"{first:g}", f"{first + 3:g}", 1))
    with pytest.raises(AssertionError) as failure:
        claims.check(notebook, claim, changed)
    line = str(failure.value)
    assert "\n" not in line and f"writes {first + 3:g}" in line and f"measured {first:g}" in line
    assert reworded.split(":")[0][:20] in line and sentence != claims.find_sentence(notebook, anchor, edited)
