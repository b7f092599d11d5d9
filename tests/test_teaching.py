"""The teacher's guide (docs/teaching.md): its expected answers are the shipped models' numbers."""

import re
from pathlib import Path

import numpy as np
import pytest

import helpers as H
from helpers.analysis.kvheads import group_similarity, held_out_maps, load_kv_variant
from helpers.core.catalog import manifest
from helpers.figures.deck import SLIDES
from helpers.grade.results import NAMES

GUIDE = (Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text()
FLAT = " ".join(GUIDE.split())  # whitespace flattened: a sentence found across line breaks
pytestmark = pytest.mark.skipif("classroom" not in manifest(), reason="data/models.json lists no classroom model")


def test_the_guide_names_the_doctor_and_a_fallback_for_every_widget():
    assert "python -m helpers.doctor" in GUIDE and "## Before class" in GUIDE
    for widget in ("04 head-count slider", "05 explorer", "06 knock-out explorer", "07 key/value-head slider",
                   "animations"):
        assert widget in GUIDE.split("## Static fallbacks")[1].split("## Notebook by notebook")[0], widget
    for session in ("Session 1", "Session 2"):
        assert GUIDE.count("Skip when short") >= 2 and session in GUIDE


def test_the_guides_answers_are_the_models_numbers():
    lm = H.load_model("classroom")
    types, _ = H.head_types(lm)
    c = H.type_counts(types)
    grammar = c["agreement"] + c["pronoun"] + c["induction"]
    assert f"**{grammar}** ({c['agreement']} agreement, {c['pronoun']} pronoun, {c['induction']} induction)" in GUIDE
    assert (f"{c['previous'] + c['offset'] + c['resting']} follow position ({c['previous']} previous, "
            f"{c['offset']} offset, {c['resting']} resting) and {c['none']} get no type") in FLAT
    resting = (H.first_token_scores(H.run_sentence(lm, "I like to draw").attentions) > 0.5).sum()
    assert f"{resting} of the 144 heads put more than half" in GUIDE
    assert f"{H.attention_param_count(768, 12):,} numbers" in GUIDE and H.attention_param_count(768, 1) == 2362368
    assert f"({H.attention_param_count(96, 1):,} per layer)" in GUIDE
    # the head-count answer over the seed runs is checked by value in tests/claims_guide.py


def test_the_guides_07_answers_are_the_variants_numbers():
    trained, pooled, alike = H.kv_results(), H.pooled_results(), H.similarity_by_kv_heads()
    table = H.kv_cache_table(context=8000)
    assert "Llama 2 7B       32     32   32   128        512                    3.91" in table and "**3.91 GiB.**" in GUIDE
    assert "Llama 3 8B       32     32    8   128        128" in table and "**128 KiB, four times less.**" in GUIDE
    within = sorted(round(s["within"], 2) for s in alike.values())
    across = sorted(round(s["across"], 2) for s in alike.values())
    assert (f"two heads of one group overlap {within[0]:.2f}–{within[-1]:.2f}, two of different groups "
            f"{across[0]:.2f}–{across[-1]:.2f}") in FLAT
    # the loss rise and the list accuracy over the seed runs: tests/test_prose_seeds.py; here the shipped pair
    assert (f"show {trained[1]['list_accuracy']:.0%} against {trained[12]['list_accuracy']:.0%}"
            .replace("%", " %") in " ".join(GUIDE.split()))
    losses = [pooled[n]["held_out_loss"] for n in (1, 2, 3, 4, 6)]
    assert f"(loss\n{min(losses):.2f}–{max(losses):.2f})" in GUIDE
    heads_12 = H.load_variant(12).info
    assert (f"held-out loss {trained[12]['held_out_loss']:.3f} against {heads_12['held_out_loss']:.3f}, list "
            f"{trained[12]['list_accuracy']:.0%} against {heads_12['accuracy_induction']:.0%}").replace("%", " %") in GUIDE


# --- issue 29: each sentence true on every input it speaks of ------------------------------------------
def test_the_guide_counts_178_tokens_for_the_12_layer_model():
    """04 "Three sizes of head": "the classroom language (177 tokens, and a 178th, the relay game's marker word,
    for the 12-layer model of 05–06 ...)": it used to say 177 for all of them."""
    assert "(177 tokens, and a 178th, the relay game's marker word, for the 12-layer model of 05–06;" in FLAT
    small = {name: H.load_model(name).config.vocab_size for name in ("walkthrough-1", "walkthrough-12")}
    small.update({f"heads-{n}": H.load_variant(n).model.config.vocab_size for n in H.HEAD_COUNTS})
    assert set(small.values()) == {177}, small
    classroom = H.load_model("classroom")
    assert classroom.config.vocab_size == 178 and classroom.tokenizer.vocab[-1] == "relay"


def test_the_guides_grammar_and_offset_answers_hold_for_every_head():
    """06: "13 ... by the typing rules, but 2 of them (L6 H10, L10 H0) beat position by less than the noise ...
    so 11 clearly do"; "22 of the 23 offset heads score high on objects or subjects ...; the 23rd, L6 H11,
    scores 0.54 on agreement" (it used to say all 23 score high on objects and subjects)."""
    assert "The 23 offset heads score high" not in FLAT
    assert "but 2 of them (L6 H10, L10 H0) beat position by less than the noise" in FLAT and "so 11 clearly do" in FLAT
    assert "22 of the 23 offset heads score high on objects or subjects" in FLAT
    assert "the 23rd, L6 H11, scores 0.54 on agreement" in FLAT
    lm = H.load_model("classroom")
    types, _ = H.head_types(lm)
    beyond = H.relation_scores(lm, beyond_previous=True)
    offset = [tuple(map(int, x)) for x in np.argwhere(types == "offset")]
    high = [h for h in offset if max(beyond["object"][h], beyond["subject"][h]) >= 0.5]
    assert len(offset) == 23 and len(high) == 22 and set(offset) - set(high) == {(6, 11)}
    assert f"{beyond['agreement'][6, 11]:.2f}" == "0.54"
    margins = H.grammar_margins(lm)
    assert sorted(r["head"] for r in margins if not r["clear"]) == [(6, 10), (10, 0)]
    assert sum(r["clear"] for r in margins) == 11


def test_the_guides_kv_1_answer_quotes_kv_1():
    """07: "kv-1's twelve heads overlap 0.49 on average, about as much as kv-12's heads, which share nothing
    (0.46)" (it used to answer the kv-1 question with kv-2…kv-6's group overlaps)."""
    assert ("kv-1's twelve heads overlap 0.49 on average, about as much as kv-12's heads, which share nothing "
            "(0.46)") in FLAT
    one = group_similarity(held_out_maps(load_kv_variant(1)), 1)["within"]  # all 12 heads in one group
    unshared = group_similarity(held_out_maps(load_kv_variant(12)), 1)["within"]  # every pair of kv-12's heads
    assert (f"{one:.2f}", f"{unshared:.2f}") == ("0.49", "0.46")


GRADER_FILES = set(NAMES)  # the files the grader writes (helpers/grade/results.py)


def test_every_fallback_picture_the_guide_names_is_made_by_the_checklist_or_a_named_button():
    """Each .png the guide names comes from the checklist's H.export_deck() (a deck slide), from an **Export for
    slides** button named in the same sentence, or is the Slides section's own example (it used to name
    kv_heads_3_and_12.png, which nothing in the checklist makes). Every widget module has a fallback row."""
    deck = {f"{s.name}.png" for s in SLIDES}
    assert "H.export_deck()" in GUIDE.split("## Before class")[1].split("## The notebooks")[0]
    sentences = re.split(r"(?<=[.;|])\s", FLAT)
    for name in sorted(set(re.findall(r"`?([0-9a-z_]+\.png)`?", GUIDE))):
        if name in deck or name == "draw_attention.png":  # the slides section's save_for_slides example
            continue
        if name in GRADER_FILES:  # written by `python -m helpers.grade`, which its section names
            assert "python -m helpers.grade" in GUIDE.split("## Grading a class")[1], name
            continue
        said = [s for s in sentences if name in s]
        assert said and all("Export for slides" in s for s in said), (name, said)
        assert re.fullmatch(r"kv_heads_\d+_and_12\.png", name), name  # what the 07 slider's button writes
    rows = GUIDE.split("## Static fallbacks")[1].split("## Notebook by notebook")[0]
    widgets = {"slider.py": "04 head-count slider", "explorer.py": "05 explorer", "knockout.py": "06 knock-out explorer",
               "kv_slider.py": "07 key/value-head slider"}
    found = {p.name for p in (Path(__file__).resolve().parent.parent / "helpers" / "widgets").glob("*.py")}
    assert set(widgets) <= found and all(f"| {row} |" in rows for row in widgets.values())
    assert "07_shared_keys_and_values" in {s.name for s in SLIDES}
