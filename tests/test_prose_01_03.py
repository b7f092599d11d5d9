"""The sentences of notebooks 01–03 that say what a head does, and 04's bridge between head sizes,
each asserted on the shipped models (as test_prose_04_05.py does for 04 and 05).

Each test names the notebook cell it backs (the cell ids of the .ipynb files). The walkthrough models
were trained without a start token, so "I like to draw" is read as four words, as trained; the numbers
of the same heads with a <bos> in front (an input they never saw) are asserted too, for the record.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import helpers as H
from helpers.analysis.recombination import spread
from helpers.analysis.stream import update_ratios
from helpers.analysis.walkthrough_heads import _subject_pairs
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
    """01 c16: "the head gives I 0.37, more than an even share (0.25) but not most, and like 0.43"; notebook 02
    measures "on average a third when the sentence opens the story, as this one does, and about half when it
    comes later" (means, said as means; 02 why-md2 gives the sentences one by one)."""
    row = one.head(0).weights[-1]
    assert rounded(row[:2]) == [0.37, 0.43] and 0.25 < float(row[0]) < 0.5
    scores = H.subject_scores(one)
    assert (rounded(scores["opening"]), rounded(scores["later"])) == ([0.32], [0.47])
    assert "on average a third when the sentence opens the story, as this one does, and about half" in cell("01", "c16")
    assert "a third to a half)" not in cell("01", "c16")


def test_02_the_one_head_sentence_by_sentence_not_never_most(one):
    """02 why-md2, on every held-out sentence, not the mean: "When it opens the story ... the subject gets 0.26
    to 0.39 ..., and in none of those 28 sentences the largest share. In a later sentence ... the row's largest
    weight in 172 of 183 sentences and more than half in 68, but at most 0.63" (it used to say "never most of
    it", false in 68 later sentences)."""
    text = cell("02", "why-md2")
    assert "never most of it" not in text
    for said in ("0.26 to 0.39", "in none of those 28 sentences the largest share", "172 of 183 sentences",
                 "more than half in 68", "at most 0.63"):
        assert said in text, said
    each = H.subject_weights(one)
    opening, later = (each[w]["weight"][0] for w in ("opening", "later"))
    assert opening.size == 28 and later.size == 183
    assert (f"{opening.min():.2f}", f"{opening.max():.2f}", int(each["opening"]["largest"][0].sum())) == ("0.26", "0.39", 0)
    assert int(each["later"]["largest"][0].sum()) == 172 and int((later > 0.5).sum()) == 68
    assert f"{later.max():.2f}" == "0.63" and (opening <= 0.5).all()  # only openings stay below half
    assert each["opening"]["weight"].shape == each["opening"]["largest"].shape == (1, 28)


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


def test_01_in_the_12_layer_model_later_attention_updates_are_shorter_than_the_stream_on_which_input():
    """01 norm-md3: reading "I like to draw", "each attention update from layer 1 on is shorter than the stream
    it joins (at most 0.62 of its length). On 64 held-out stories that holds for all but 3 of the 45,056 updates
    from layer 1 on; those 3, in layer 10, are up to 1.06 times as long" (it used to say "every", of no input)."""
    text = cell("01", "norm-md3")
    assert "from layer 1 on every attention update is shorter" not in text
    for said in ('reading "I like to draw", each attention update from layer 1 on is shorter', "at most 0.62",
                 "all but 3 of the 45,056 updates", "in layer 10, are up to 1.06 times"):
        assert said in text, said
    lm = H.load_model("classroom")
    sentence = update_ratios(lm, "I like to draw")  # (12, 5): <bos> and the four words
    assert sentence.shape == (12, 5) and sentence[0].min() > 10 and f"{sentence[1:].max():.2f}" == "0.62"
    stories = update_ratios(lm)  # (12, 64 stories × 64 tokens)
    later = stories[1:]
    assert later.size == 45_056 and int((later >= 1).sum()) == 3
    assert set(np.nonzero(later >= 1)[0] + 1) == {10} and f"{later.max():.2f}" == "1.06"
    with torch.no_grad():  # the ratio is the block's own update over its own input
        x = lm.model.embed(torch.tensor([lm.tokenizer.encode("I like to draw", bos=lm.bos)]))
        block = lm.model.h[0]
        assert np.allclose((block.attn(block.ln_1(x))[0].norm(dim=-1) / x.norm(dim=-1))[0].numpy(), sentence[0],
                           rtol=1e-4)


# --- 02: what the twelve heads do ------------------------------------------------------------
def test_02_four_subject_heads_no_resting_head_and_head_1_is_not_a_subject_head(twelve, subject):
    """02 jobs-md2: "Heads 0, 5, 6 and 9 find the subject wherever the sentence stands: 0.88 or more in both
    columns, and sentence by sentence the subject gets their largest weight in all 28 story openings and in 173
    to 183 of the 183 later sentences ... their 0.90 to 1.00 on I above is that job. No head rests: from a later
    sentence, no head puts more than 0.05 on the story's first word (0.00 on average ...). ... head 1 ... gives
    the subject 0.19 when the sentence opens the story and 0.03 later, and in 'she likes to draw' it looks at
    likes"."""
    text = cell("02", "jobs-md2")
    for said in ("largest weight in all 28 story openings and in 173 to 183 of the 183 later sentences",
                 "no head puts more than 0.05 on the story's first word (0.00 on average"):
        assert said in text, said
    both = [h for h in range(12) if min(subject["opening"][h], subject["later"][h]) >= 0.88]
    assert both == [0, 5, 6, 9]
    assert sorted(rounded(twelve.steps().weights[both, -1, 0])) == [0.90, 0.99, 0.99, 1.00]
    assert subject["first word"] == [0.0] * 12
    each = H.subject_weights(twelve)
    assert each["opening"]["largest"][both].all() and each["opening"]["largest"].shape == (12, 28)
    later = each["later"]["largest"][both].sum(-1)
    assert (int(later.min()), int(later.max()), each["later"]["largest"].shape[1]) == (173, 183, 183)
    attn, pairs = _subject_pairs(twelve, 128)
    b, q, k = (torch.tensor(c) for c in zip(*pairs["first word"]))
    assert f"{attn[b, 0, :, q, k].max():.2f}" == "0.05"  # every head, every later sentence
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
    assert "It does not weigh the heads" not in cell("03", "c23")
    assert "It weighs the heads, as the article says, but not with one number each" in cell("03", "c23")
    layer, h = twelve.steps(), twelve.pick_head(3, 0)
    assert all(twelve.W_O[k].shape == (64, 768) and int(torch.linalg.matrix_rank(twelve.W_O[k])) == 64
               for k in range(12))
    gain = layer.per_head[h].norm(dim=-1) / layer.z[h].norm(dim=-1)
    assert rounded(gain) == [0.89, 1.09, 1.03, 0.94] and float(gain.min()) < 1 < float(gain.max())
    every = layer.per_head.norm(dim=-1) / layer.z.norm(dim=-1)  # (12, 4)
    assert float((every.max(-1).values / every.min(-1).values).min()) > 1.05  # no head scaled alike for all words


def test_03_what_the_article_means_by_weighing_the_heads_and_what_is_true(twelve):
    """03 c08 / block-md / c23, against the article ("it also decides how much weight each head's update gets"):
    for draw the blocks scale the heads' updates by 0.70 to 1.46 (block 9 by 1.46, block 5 to 0.70); the rows
    are 3.2 to 19.3 long; "most of the difference between the rows comes from the heads themselves": the longest
    row (head 9, 19.3) is 6.0 times the shortest (head 2, 3.2), their own updates differ 3.3 times (13.2 against
    4.0), their blocks' factors 1.8 times (1.46 against 0.80); head 5's block scales draw by 0.70 and like by
    1.54. The figure writes every row's length as |z| × the block's factor."""
    assert "decides how much weight each head's update gets in the final result" in cell("03", "c08")
    text = cell("03", "block-md")
    for said in ("block 9 stretches head 9's update by 1.46", "block 5 shrinks head 5's to 0.70",
                 "most of the difference between the rows comes from the heads themselves", "(19.3)",
                 "6.0 times as long as the shortest, head 2's (3.2)", "differ 3.3 times (13.2 against 4.0)",
                 "only 1.8 times (1.46 against 0.80)", "scales *draw*'s update by 0.70 and *like*'s by 1.54"):
        assert said in text, said
    assert "scale the heads' updates by 0.70 to 1.46" in cell("03", "c23") and "(4.0 to 13.2 long)" in cell("03", "c23")
    layer, draw = twelve.steps(), 3
    s = H.head_scaling(layer, draw)
    assert np.allclose(s["update"] * s["scale"], s["contribution"])
    assert (f"{s['scale'].min():.2f}", f"{s['scale'].max():.2f}") == ("0.70", "1.46")
    assert (int(s["scale"].argmax()), int(s["scale"].argmin())) == (9, 5)
    assert (f"{s['update'].min():.1f}", f"{s['update'].max():.1f}") == ("4.0", "13.2")
    assert (f"{s['contribution'].min():.1f}", f"{s['contribution'].max():.1f}") == ("3.2", "19.3")
    long, short = int(s["contribution"].argmax()), int(s["contribution"].argmin())
    assert (long, short) == (9, 2) and f"{spread(s['contribution']):.1f}" == "6.0"
    own, block = s["update"][long] / s["update"][short], s["scale"][long] / s["scale"][short]
    assert (f"{own:.1f}", f"{block:.1f}") == ("3.3", "1.8") and own > block
    logs = {k: np.log(v) for k, v in s.items()}  # "most": the heads' own updates carry most of the spread
    assert logs["update"].var() > logs["scale"].var() and logs["update"].var() > logs["contribution"].var() / 2
    five = layer.per_head[5].norm(dim=-1) / layer.z[5].norm(dim=-1)
    assert rounded(five)[3] == 0.70 and rounded(five)[1] == 1.54 and twelve.tokens[1] == "like"
    fig = H.plot_recombination(layer, draw, twelve.tokens)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "= |z| × block" in texts
    rows = [t for t in texts if t.startswith("= ") and t != "= |z| × block"]
    assert rows == [f"= {u:4.1f} × {g:.2f}" for u, g in zip(s["update"], s["scale"])]
    assert H.check_slide(fig).ok


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
    classroom = H.load_model("classroom")  # "and a 178th, the relay game's marker word, for the 12-layer model"
    assert classroom.config.vocab_size == 178 and set(classroom.tokenizer.ids) - set(H.load_model("heads-12").tokenizer.ids) == {"relay"}
    assert "(177 tokens, and a 178th, the relay game's marker word, for the 12-layer model of 05–06;" in cell("04", "sizes-md")
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
