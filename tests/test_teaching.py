"""The teacher's guide (docs/teaching.md): its expected answers are the shipped models' numbers."""

from pathlib import Path

import pytest

import helpers as H
from helpers.core.catalog import manifest

GUIDE = (Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text()
pytestmark = pytest.mark.skipif("classroom" not in manifest(), reason="data/models.json lists no classroom model")


def test_the_guide_names_the_doctor_and_a_fallback_for_every_widget():
    assert "python -m helpers.doctor" in GUIDE and "## Before class" in GUIDE
    for widget in ("04 head-count slider", "05 explorer", "06 knock-out explorer", "animations"):
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
            f"{c['offset']} offset,\n12 resting) and {c['none']} get no type") in GUIDE and c["resting"] == 12
    resting = (H.first_token_scores(H.run_sentence(lm, "I like to draw").attentions) > 0.5).sum()
    assert f"{resting} of the 144 heads put more than half" in GUIDE
    assert f"{H.attention_param_count(768, 12):,} numbers" in GUIDE and H.attention_param_count(768, 1) == 2362368
    assert f"({H.attention_param_count(96, 1):,} per layer)" in GUIDE
    repeats = {h: H.load_variant(h).info["accuracy_induction"] for h in H.HEAD_COUNTS}
    others = [round(100 * a) for h, a in repeats.items() if h > 1]
    assert f"{round(100 * repeats[1])} % of the time, every other count {min(others)}–{max(others)} %" in GUIDE


def test_the_guides_07_answers_are_the_variants_numbers():
    trained, pooled, alike = H.kv_results(), H.pooled_results(), H.similarity_by_kv_heads()
    table = H.describe_kv_cache_table(context=8000)
    assert "Llama 2 7B       32     32   32   128        512                    3.91" in table and "**3.91 GiB.**" in GUIDE
    assert "Llama 3 8B       32     32    8   128        128" in table and "**128 KiB, four times less.**" in GUIDE
    within = sorted(round(s["within"], 2) for s in alike.values())
    across = sorted(round(s["across"], 2) for s in alike.values())
    assert f"overlap {within[0]:.2f}–{within[-1]:.2f}, across groups {across[0]:.2f}–{across[-1]:.2f}" in GUIDE
    rise = trained[1]["held_out_loss"] - trained[12]["held_out_loss"]
    assert round(rise, 2) == 0.04 and "loss rises by about 0.04" in GUIDE
    lists = [round(100 * trained[n]["list_accuracy"]) for n in (2, 3, 4, 6)]
    assert (f"said again {trained[1]['list_accuracy']:.0%} of the time instead of {trained[12]['list_accuracy']:.0%}"
            .replace("%", " %") in GUIDE and f"keep {min(lists)}–{max(lists)} %" in GUIDE)
    losses = [pooled[n]["held_out_loss"] for n in (1, 2, 3, 4, 6)]
    assert f"(loss\n{min(losses):.2f}–{max(losses):.2f})" in GUIDE
    heads_12 = H.load_variant(12).info
    assert (f"held-out loss {trained[12]['held_out_loss']:.3f} against {heads_12['held_out_loss']:.3f}, list "
            f"{trained[12]['list_accuracy']:.0%} against {heads_12['accuracy_induction']:.0%}").replace("%", " %") in GUIDE
