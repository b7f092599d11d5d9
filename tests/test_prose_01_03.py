"""The sentences of notebooks 01–03 that say what a head does, and 04's bridge between head sizes,
each asserted on the shipped models (as test_prose_04_05.py does for 04 and 05).

Each test names the notebook cell it backs (the cell ids of the .ipynb files). The walkthrough models
were trained without a start token, so "I like to draw" is read as four words, as trained; the numbers
of the same heads with a <bos> in front (an input they never saw) are asserted too, for the record.
"""

import json
from pathlib import Path

import pytest
import torch

import helpers as H
from helpers.core.catalog import manifest
from helpers.core.model import GPT, GPTConfig

pytestmark = pytest.mark.skipif(not {"walkthrough-1", "walkthrough-12"} <= set(manifest()),
                                reason="data/models.json lists no walkthrough models")
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def cell(notebook: str, cell_id: str) -> str:
    """The source of one cell, whitespace flattened so a sentence can be found across line breaks."""
    nb = json.loads(next(NOTEBOOKS.glob(f"{notebook}_*.ipynb")).read_text())
    source = "".join(next(c["source"] for c in nb["cells"] if c.get("id") == cell_id))
    return " ".join(source.split())


def rounded(t) -> list[float]:
    return [round(float(v), 2) for v in t]


@pytest.fixture(scope="module")
def one(walk_one):
    return walk_one


@pytest.fixture(scope="module")
def twelve(walk_twelve):
    return walk_twelve


@pytest.fixture(scope="module")
def subject(twelve):
    return {k: rounded(v) for k, v in H.subject_scores(twelve).items()}


# --- the input: read as trained ---------------------------------------------------------------
def test_01_the_sentence_is_read_as_the_model_was_trained(one, twelve):
    """01 c02: "Every story this model was trained on began straight with its first word: it never saw a
    start token ... the four words make a [4 × 768] table"; the second printed line says so."""
    assert "never saw a start token" in cell("01", "c02") and "[4 × 768]" in cell("01", "c02")
    for walk in (one, twelve):
        assert walk.model.bos is False and walk.bos is False and walk.residual.shape == (4, 768)
        assert walk.describe().splitlines()[1] == ("trained without a start token (each story began with its "
                                                  "first word): read as trained")


def test_before_and_after_the_start_token_for_every_head_the_prose_describes(one, twelve):
    """The closing note's record: draw's row as trained (no <bos>) and with a <bos> the models never saw."""
    assert rounded(one.head(0).weights[-1]) == [0.37, 0.43, 0.06, 0.14]
    fed = H.walkthrough_layer("classroom", n_heads=1, bos=True)
    assert fed.tokens[0] == "<bos>" and rounded(fed.head(0).weights[-1]) == [0.21, 0.57, 0.15, 0.04, 0.03]
    rows, fed12 = twelve.steps().weights[:, -1], H.walkthrough_layer("classroom", n_heads=12, bos=True)
    rows_bos = fed12.steps().weights[:, -1]
    expected = {0: ([0.90, 0.09, 0.01, 0.00], [0.00, 0.98, 0.00, 0.00, 0.01]),
                1: ([0.66, 0.33, 0.02, 0.00], [0.62, 0.18, 0.11, 0.05, 0.04]),
                5: ([0.99, 0.01, 0.00, 0.00], [0.17, 0.60, 0.00, 0.09, 0.13]),
                6: ([1.00, 0.00, 0.00, 0.00], [0.02, 0.95, 0.01, 0.00, 0.01]),
                9: ([0.99, 0.00, 0.00, 0.00], [0.25, 0.71, 0.01, 0.00, 0.02])}
    for h, (plain, with_bos) in expected.items():
        assert (rounded(rows[h]), rounded(rows_bos[h])) == (plain, with_bos), h


def test_01_more_to_try_with_bos(one):
    """01 c26: with bos=True "the second line printed then says NOT read as trained, and draw's row changes
    (I 0.57, <bos> 0.21, like 0.15)"."""
    assert "(*I* 0.57, `<bos>` 0.21, *like* 0.15)" in cell("01", "c26")
    fed = H.walkthrough_layer("classroom", n_heads=1, bos=True)
    assert "NOT read as trained" in fed.describe()
    assert dict(zip(fed.tokens, rounded(fed.head(0).weights[-1])))  == {"<bos>": 0.21, "I": 0.57, "like": 0.15,
                                                                         "to": 0.04, "draw": 0.03}


# --- 01: the one head -------------------------------------------------------------------------
def test_01_the_one_head_gives_I_more_than_an_even_share_but_not_most(one):
    """01 c16: "the head gives I 0.37, more than an even share (0.25) but not most, and like 0.43"; "it gives
    the subject about a third to a half" (02 why-md2: on many stories, never most of it)."""
    row = one.head(0).weights[-1]
    assert rounded(row[:2]) == [0.37, 0.43] and 0.25 < float(row[0]) < 0.5
    scores = H.subject_scores(one)
    assert (rounded(scores["opening"]), rounded(scores["later"])) == ([0.32], [0.47])
    assert all(1 / 3 - 0.02 < float(s[0]) < 0.5 for s in (scores["opening"], scores["later"]))


def test_01_what_the_length_means_and_what_the_next_layernorm_does(one):
    """01 norm-md2 / norm-md3: the update is about 22 times as long as the embedding; the next LayerNorm (here
    the final one) brings every row to the same length; the new draw points where the update points
    (cosine 0.999); the prediction after draw (my) is the same without the embedding."""
    layer, draw = one.steps(), 3
    ratio = float(layer.update[draw].norm() / one.residual[draw].norm())
    assert f"{ratio:.0f}" == "22" and "22 times" in cell("01", "norm-md2")
    lengths = one.next_norm(layer.out).norm(dim=-1)
    assert (f"{lengths.min():.1f}", f"{lengths.max():.1f}") == ("27.8", "27.9")
    assert (layer.out.norm(dim=-1).min() < 26) and (layer.out.norm(dim=-1).max() > 51)  # lengths before differ
    both, alone = one.next_words(layer.out[draw]), one.next_words(layer.update[draw])
    assert both.startswith("my 0.98") and alone.startswith("my 0.98")


def test_01_in_the_12_layer_model_every_later_attention_update_is_shorter_than_the_stream():
    """01 norm-md3: "in the 12-layer classroom model of notebooks 05 and 06, from layer 1 on every attention
    update is shorter than the stream it joins" (while layer 0's, like the walkthrough's, is far longer)."""
    lm = H.load_model("classroom")
    with torch.no_grad():
        x = lm.model.embed(torch.tensor([lm.tokenizer.encode("I like to draw")]))
        ratios = []
        for block in lm.model.h:
            update = block.attn(block.ln_1(x))[0]
            ratios.append(float((update.norm(dim=-1) / x.norm(dim=-1)).max()))
            x = block(x)[0]
    assert min(r for r in ratios[:1]) > 10 and max(ratios[1:]) < 1, ratios


# --- 02: what the twelve heads do ------------------------------------------------------------
def test_02_four_subject_heads_no_resting_head_and_head_1_is_not_a_subject_head(twelve, subject):
    """02 jobs-md2: "Heads 0, 5, 6 and 9 find the subject wherever the sentence stands (0.88 or more in both
    columns) ... their 0.90 to 1.00 on I above is that job. No head rests: from a later sentence, every head
    puts 0.00 on the story's first word. ... head 1 ... gives the subject 0.19 when the sentence opens the story
    and 0.03 later, and in 'she likes to draw' it looks at likes"."""
    both = [h for h in range(12) if min(subject["opening"][h], subject["later"][h]) >= 0.88]
    assert both == [0, 5, 6, 9]
    assert sorted(rounded(twelve.steps().weights[both, -1, 0])) == [0.90, 0.99, 0.99, 1.00]
    assert subject["first word"] == [0.0] * 12
    assert (subject["opening"][1], subject["later"][1]) == (0.19, 0.03)
    she = H.walkthrough_layer("classroom", n_heads=12, sentence="she likes to draw")
    row = she.steps().weights[1, -1]
    assert she.tokens[int(row.argmax())] == "likes" and round(float(row.max()), 2) == 0.91
    assert twelve.pick_head(3, 0) == 1  # "the head we follow, head 1"


def test_02_followed_head_mixes_two_words(twelve):
    """02 jobs-md2: "a weighted sum that mixes two words" (I 0.66, like 0.33)."""
    row = twelve.steps().weights[1, -1]
    assert rounded(row[:2]) == [0.66, 0.33] and int((row > 0.1).sum()) == 2


def test_02_what_the_grid_of_twelve_shows(twelve):
    """02 c19: "Five look mostly at I (four of them the subject heads above, and head 1), head 8 at like, five
    at to, and head 3 splits evenly between to and draw"."""
    rows = twelve.steps().weights[:, -1]
    top = [twelve.tokens[int(r.argmax())] for r in rows]
    assert [h for h in range(12) if top[h] == "I"] == [0, 1, 5, 6, 9]
    assert [h for h in range(12) if top[h] == "like"] == [8]
    assert [h for h in range(12) if top[h] == "to" and h != 3] == [2, 4, 7, 10, 11]
    assert rounded(rows[3, 2:]) == [0.42, 0.42]


def test_02_summary_says_five_of_twelve_and_names_the_subject_heads(twelve):
    """02 c21: "five of the twelve heads give I more than half of it ... four of those five (heads 0, 5, 6, 9)
    find the subject wherever the sentence stands, while head 1 ... puts 0.66 on I here"."""
    text = cell("02", "c21")
    assert "five of the twelve heads give *I* more than half" in text and "(heads 0, 5, 6, 9)" in text
    assert int((twelve.steps().weights[:, -1, 0] > 0.5).sum()) == 5


# --- 03: a block of the recombination is a map, not a weight ------------------------------------
def test_03_a_block_is_a_full_map_not_a_weight(twelve):
    """03 c08 / block-md / c23: each block is a full [64 × 768] map of rank 64, and the same head's update
    comes out longer for one word and shorter for another (a single weight would scale every word alike)."""
    assert "weighs the heads" not in cell("03", "c23") and "It does not weigh the heads" in cell("03", "c23")
    layer, h = twelve.steps(), twelve.pick_head(3, 0)
    assert all(twelve.W_O[k].shape == (64, 768) and int(torch.linalg.matrix_rank(twelve.W_O[k])) == 64
               for k in range(12))
    gain = layer.per_head[h].norm(dim=-1) / layer.z[h].norm(dim=-1)
    assert rounded(gain) == [0.89, 1.09, 1.03, 0.94] and float(gain.min()) < 1 < float(gain.max())
    every = layer.per_head.norm(dim=-1) / layer.z.norm(dim=-1)  # (12, 4)
    assert float((every.max(-1).values / every.min(-1).values).min()) > 1.05  # no head scaled alike for all words


def test_03_lengths_and_directions_after_the_layer(twelve):
    """03 len-md: "32 to 66 times as long as the embedding it joins ... every row's direction is the update's
    (cosine 0.999 or more)"."""
    layer = twelve.steps()
    ratio = layer.update.norm(dim=-1) / layer.residual.norm(dim=-1)
    assert (f"{ratio.min():.0f}", f"{ratio.max():.0f}") == ("32", "66")
    cosine = torch.nn.functional.cosine_similarity(layer.out, layer.update, dim=-1)
    assert float(cosine.min()) >= 0.999
    with torch.no_grad():
        assert torch.allclose(twelve.next_norm(layer.out), twelve.model.model.ln_f(layer.out))  # "the final one"


# --- 04: three sizes of head ----------------------------------------------------------------
def test_04_three_sizes_of_head_the_table_and_the_claims():
    """04 sizes-md / sizes-code / sizes-md2: heads of 768, 64, 96…8, and 8 in the 12-layer model; each trains in
    1 to 18 minutes; 177 tokens, stories of 64; the 12-head model (heads of 8) ends within 0.01 of the best
    held-out loss of the six; GPT-2 small has 124,439,808 parameters and 50,257 tokens; a head of 8 matches
    through W_Q·W_Kᵀ of rank at most 8 (the classroom model's reach 8)."""
    sizes = {name: H.load_model(name).config.d_head for name in
             ("walkthrough-1", "walkthrough-12", "heads-1", "heads-12", "classroom")}
    assert sizes == {"walkthrough-1": 768, "walkthrough-12": 64, "heads-1": 96, "heads-12": 8, "classroom": 8}
    minutes = [manifest()[n]["info"]["train_seconds"] / 60 for n in sizes]
    assert 1 <= min(minutes) and round(max(minutes)) == 18
    assert H.load_model("heads-12").config.vocab_size == 177 and H.load_model("heads-12").config.n_ctx == 64
    losses = H.loss_by_heads()
    assert len(losses) == 6 and losses[12] - min(losses.values()) < 0.01
    with torch.device("meta"):
        gpt2 = GPT(GPTConfig(vocab_size=50257, n_ctx=1024, n_layer=12, n_head=12, n_embd=768))
    assert gpt2.num_params() == 124_439_808 and gpt2.config.d_head == 64
    w = H.head_weights(H.load_model("classroom").model, 5)
    ranks = {int(torch.linalg.matrix_rank(w["W_Q"][h] @ w["W_K"][h].T)) for h in range(12)}
    assert ranks == {8}
    text = cell("04", "sizes-md2")
    assert "rank at most 8" in text and "$\\sqrt 8 \\approx 2.8$" in text and "50,257" in text


def test_04_the_kinds_of_head_named_for_gpt2_are_the_published_ones():
    """04 sizes-md2: "heads that look one word back, or find the earlier copy of a repeated list (induction
    heads), have been published for GPT-2 small as well (notebook 05 names them ...)"."""
    from helpers.analysis.detectors import PUBLISHED_GPT2_HEADS

    assert PUBLISHED_GPT2_HEADS["previous"] and PUBLISHED_GPT2_HEADS["induction"]
    assert "L4 H11" in cell("05", next(c["id"] for c in json.loads(next(NOTEBOOKS.glob("05_*.ipynb")).read_text())["cells"]
                                       if "L4 H11" in "".join(c["source"])))
    assert "have been published for GPT-2 small" in cell("04", "sizes-md2")
