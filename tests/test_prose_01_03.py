"""What the sentences of notebooks 01–03 say beyond their numbers, and 04's bridge between head sizes,
each asserted on the shipped models (as test_prose_04_05.py does for 04 and 05).

The numbers a sentence of 01–03 quotes are checked by value in tests/claims_01.py … claims_03.py; the tests
here check what those numbers cannot: orders, "none", "all", which head does what, on every input named.
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
from helpers.analysis.recombination import update_ratios
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
    """01 gf-start: the model "never saw a start token" and reads "I like to draw" as trained, four words,
    [4 × 768]; the second printed line says so (02 jobs-md2: "these models never had a start token")."""
    for walk in (one, twelve):
        assert walk.model.bos is False and walk.bos is False and walk.residual.shape == (4, 768)
        assert walk.describe().splitlines()[1] == ("trained without a start token (each story began with its "
                                                  "first word): read as trained")


def test_before_and_after_the_start_token_for_every_head_the_prose_describes(one, twelve):
    """The record: draw's row as trained (no <bos>) and with a <bos> the models never saw."""
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


def test_01_more_to_try_with_bos():
    """01 gf-start: with bos=True "the second line printed then says NOT read as trained" (the row it quotes:
    tests/claims_01.py)."""
    fed = H.walkthrough_layer("classroom", n_heads=1, bos=True)
    assert "NOT read as trained" in fed.describe() and fed.tokens[0] == "<bos>"


# --- 01: the one head -------------------------------------------------------------------------
def test_01_the_steps_in_the_cells_are_the_models_own(one):
    """01 c07 … c22: the products the student's cells compute (Q = X @ W_Q + b_Q, …, the update through W_O)
    give the model's own layer, and the raw scores of draw are all negative (c12: "Each of draw's four scores
    is negative") while the softmax ignores a shift ("adding the same number to each changes no weight")."""
    X, draw = one.X, 3
    Q, K, V = (X @ getattr(one, f"W_{n}")[0] + getattr(one, f"b_{n}")[0] for n in "QKV")
    head = one.head(0)
    assert torch.allclose(Q, head.Q, atol=1e-5) and torch.allclose(K, head.K, atol=1e-5)
    scaled = (Q[draw] @ K.T) / Q.shape[-1] ** 0.5
    assert (scaled < 0).all() and torch.allclose(scaled.softmax(-1), head.weights[draw], atol=1e-6)
    assert torch.allclose((scaled + 10).softmax(-1), scaled.softmax(-1), atol=1e-6)
    update = head.weights[draw] @ V @ one.W_O[0] + one.b_O
    assert torch.allclose(one.residual[draw] + update, one.steps().out[draw], atol=1e-4)


def test_02_the_one_head_gives_I_less_than_like(one):
    """02 why-md: "the one head gave I 0.37 of draw's attention, less than it gave like"; 01 c16: "This head
    gives I 0.37 and like 0.43" (the numbers: tests/claims_01.py, claims_02.py)."""
    row = one.head(0).weights[-1]
    assert one.tokens[:2] == ["I", "like"] and float(row[0]) < float(row[1]) and int(row.argmax()) == 1


def test_02_the_one_head_sentence_by_sentence_not_never_most(one):
    """02 why-md2, on every held-out sentence, not the mean: when the sentence opens the story the subject gets
    0.26 to 0.39 "and in none of those 28 sentences the largest share"; later, "the row's largest weight in 172 of
    183 sentences and more than half in 68, but at most 0.63" (the numbers: tests/claims_02.py)."""
    each = H.subject_weights(one)
    opening, later = (each[w]["weight"][0] for w in ("opening", "later"))
    assert int(each["opening"]["largest"][0].sum()) == 0 and (opening <= 0.5).all()  # none the largest, none half
    assert int(each["later"]["largest"][0].sum()) > 0 and (later > 0.5).any()
    assert each["opening"]["weight"].shape == each["opening"]["largest"].shape == (1, 28)


def test_01_what_the_length_means_and_what_the_next_layernorm_does(one):
    """01 norm-md2 / norm-md3: the next LayerNorm (here the final one) brings every row to the same length,
    whatever it had before; the prediction after draw (my) is the same without the embedding."""
    layer, draw = one.steps(), 3
    lengths = one.next_norm(layer.out).norm(dim=-1)
    assert (f"{lengths.min():.1f}", f"{lengths.max():.1f}") == ("27.8", "27.9")
    assert (layer.out.norm(dim=-1).min() < 26) and (layer.out.norm(dim=-1).max() > 51)  # lengths before differ
    both, alone = one.next_words(layer.out[draw]), one.next_words(layer.update[draw])
    assert both.startswith("my 0.98") and alone.startswith("my 0.98")


def test_01_in_the_12_layer_model_later_attention_updates_are_shorter_than_the_stream_on_which_input():
    """01 norm-md3: reading "I like to draw", each attention update from layer 1 on is shorter than the stream it
    joins; on 64 held-out stories that holds for all but 3 of the 45,056 (the numbers: tests/claims_01.py). Here:
    layer 0's update is longer (the sentence says "from layer 1 on"), and the ratio is the block's own update
    over its own input."""
    lm = H.load_model("classroom")
    sentence = update_ratios(lm, "I like to draw")  # (12, 5): <bos> and the four words
    assert sentence.shape == (12, 5) and sentence[0].min() > 10 and sentence[1:].max() < 1
    with torch.no_grad():
        x = lm.model.embed(torch.tensor([lm.tokenizer.encode("I like to draw", bos=lm.bos)]))
        block = lm.model.h[0]
        assert np.allclose((block.attn(block.ln_1(x))[0].norm(dim=-1) / x.norm(dim=-1))[0].numpy(), sentence[0],
                           rtol=1e-4)


# --- 02: what the twelve heads do ------------------------------------------------------------
def test_02_four_subject_heads_no_resting_head_and_head_1_is_not_a_subject_head(twelve, subject):
    """02 follow-md / jobs-md2: heads 0, 5, 6 and 9 find the subject wherever the sentence stands, the
    subject gets their largest weight "in all 28 story openings"; no head rests; head 1 is not a subject head
    and "in 'she likes to draw' it looks at likes"; the head the notebook follows, head 0, is a subject head
    (the numbers: tests/claims_02.py)."""
    both = [h for h in range(12) if min(subject["opening"][h], subject["later"][h]) >= 0.88]
    assert both == [0, 5, 6, 9] and 1 not in both
    assert subject["first word"] == [0.0] * 12
    each = H.subject_weights(twelve)
    assert each["opening"]["largest"][both].all() and each["opening"]["largest"].shape == (12, 28)
    attn, pairs = _subject_pairs(twelve, 128)
    b, q, k = (torch.tensor(c) for c in zip(*pairs["first word"]))
    assert float(attn[b, 0, :, q, k].max()) < 0.055  # every head, every later sentence
    she = H.walkthrough_layer("classroom", n_heads=12, sentence="she likes to draw")
    row = she.steps().weights[1, -1]
    assert she.tokens[int(row.argmax())] == "likes" and round(float(row.max()), 2) == 0.91


def test_02_the_followed_head_looks_mostly_at_I(twelve):
    """02 follow-md / c10: head 0 gives I most of draw's attention, "so the update is mostly I's value", and the
    cells' products give the helpers' head."""
    h, draw = 0, 3
    row = twelve.steps().weights[h, draw]
    assert int(row.argmax()) == 0 and float(row[0]) > 0.5
    x = twelve.X
    q = x[draw:draw + 1] @ twelve.W_Q[h] + twelve.b_Q[h]
    weights = (q @ (x @ twelve.W_K[h] + twelve.b_K[h]).T / twelve.d_head ** 0.5).softmax(-1)
    z = weights @ (x @ twelve.W_V[h] + twelve.b_V[h])
    assert z.shape == (1, 64) and torch.allclose(z[0], twelve.head(h).z[draw], atol=1e-5)


def test_02_what_the_grid_of_twelve_shows(twelve):
    """02 c19: "5 heads look mostly at I, head 8 at like, 5 at to, and head 3 splits evenly between to and
    draw"."""
    rows = twelve.steps().weights[:, -1]
    top = [twelve.tokens[int(r.argmax())] for r in rows]
    assert [h for h in range(12) if top[h] == "I"] == [0, 1, 5, 6, 9]
    assert [h for h in range(12) if top[h] == "like"] == [8]
    assert [h for h in range(12) if top[h] == "to" and h != 3] == [2, 4, 7, 10, 11]
    assert rounded(rows[3, 2:]) == [0.42, 0.42]


# --- 03: the recombination --------------------------------------------------------------------
def test_03_concatenate_then_recombine_is_the_sum_of_the_decompressed_heads(twelve):
    """03 c05 … c11: the cells' concatenation, stacked W_O and sum of decompressed updates are the model's own."""
    layer = twelve.steps()
    concat = torch.cat(list(layer.z), dim=-1)
    W_O = torch.cat(list(twelve.W_O), dim=0)
    assert concat.shape == (4, 768) and W_O.shape == (768, 768) and torch.equal(concat, layer.concat)
    assert torch.allclose(concat @ W_O, sum(layer.z[k] @ twelve.W_O[k] for k in range(12)), atol=1e-4)
    assert torch.allclose(twelve.residual + concat @ W_O + twelve.b_O, layer.out, atol=1e-4)


def test_03_a_block_is_a_full_map_not_a_weight(twelve):
    """03 gf-weigh / block-md: each block is a full [64 × 768] map of rank 64, and the same head's update comes
    out longer for one word and shorter for another (a single weight would scale every word alike)."""
    layer = twelve.steps()
    assert all(twelve.W_O[k].shape == (64, 768) and int(torch.linalg.matrix_rank(twelve.W_O[k])) == 64
               for k in range(12))
    gain = layer.per_head[5].norm(dim=-1) / layer.z[5].norm(dim=-1)
    assert rounded(gain) == [0.70, 1.54, 1.54, 0.70] and float(gain.min()) < 1 < float(gain.max())
    every = layer.per_head.norm(dim=-1) / layer.z.norm(dim=-1)  # (12, 4)
    assert float((every.max(-1).values / every.min(-1).values).min()) > 1.05  # no head scaled alike for all words


def test_03_what_the_article_means_by_weighing_the_heads_and_what_is_true(twelve):
    """03 block-md: "most of the difference between the rows comes from the heads themselves" (their blocks'
    factors only 1.8 times against 3.3); the figure writes every row's length as |z| × the block's factor (the
    numbers: tests/claims_03.py)."""
    layer, draw = twelve.steps(), 3
    s = H.head_scaling(layer, draw)
    assert np.allclose(s["update"] * s["scale"], s["contribution"])
    long, short = int(s["contribution"].argmax()), int(s["contribution"].argmin())
    assert f"{s['contribution'][long] / s['contribution'][short]:.1f}" == "6.0"  # longest over shortest
    own, block = s["update"][long] / s["update"][short], s["scale"][long] / s["scale"][short]
    assert own > block
    logs = {k: np.log(v) for k, v in s.items()}  # "most": the heads' own updates carry most of the spread
    assert logs["update"].var() > logs["scale"].var() and logs["update"].var() > logs["contribution"].var() / 2
    fig = H.plot_recombination(layer, draw, twelve.tokens)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "= |z| × block" in texts
    rows = [t for t in texts if t.startswith("= ") and t != "= |z| × block"]
    assert rows == [f"= {u:4.1f} × {g:.2f}" for u, g in zip(s["update"], s["scale"])]
    assert H.check_slide(fig).ok


def test_03_lengths_and_directions_after_the_layer(twelve):
    """03 len-md: "every row's direction is the update's (cosine 0.999 or more)", for every word; the LayerNorm
    that reads them next is "the final one"."""
    layer = twelve.steps()
    cosine = torch.nn.functional.cosine_similarity(layer.out, layer.update, dim=-1)
    assert float(cosine.min()) >= 0.999
    with torch.no_grad():
        assert torch.allclose(twelve.next_norm(layer.out), twelve.model.model.ln_f(layer.out))  # "the final one"


# --- 04: three sizes of head ----------------------------------------------------------------
def test_04_three_sizes_of_head_the_table_and_the_claims():
    """04 sizes-md / sizes-code / sizes-md2: heads of 768, 64, 96…8, and 8 in the 12-layer model; each trains in
    1 to 18 minutes; 177 tokens, stories of 64 (how far the 12-head model ends from the best mean loss over
    its seed runs: tests/claims_04.py); the shipped 12-head file within 0.01 of the best shipped loss; GPT-2 small has 124,439,808 parameters and 50,257 tokens; a head of 8 matches
    through W_Q·W_Kᵀ of rank at most 8 (the classroom model's reach 8)."""
    sizes = {name: H.load_model(name).config.d_head for name in
             ("walkthrough-1", "walkthrough-12", "heads-1", "heads-12", "classroom")}
    assert sizes == {"walkthrough-1": 768, "walkthrough-12": 64, "heads-1": 96, "heads-12": 8, "classroom": 8}
    minutes = [manifest()[n]["info"]["train_seconds"] / 60 for n in sizes]
    assert 1 <= min(minutes) and round(max(minutes)) == 18
    assert H.load_model("heads-12").config.vocab_size == 177 and H.load_model("heads-12").config.n_ctx == 64
    classroom = H.load_model("classroom")  # "and a 178th, the relay game's marker word, for the 12-layer model"
    assert classroom.config.vocab_size == 178 and set(classroom.tokenizer.ids) - set(H.load_model("heads-12").tokenizer.ids) == {"relay"}
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
