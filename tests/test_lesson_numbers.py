"""The numbers the prose of notebooks 01-03 states, asserted on the shipped walkthrough models.

01: the update is much longer than the embedding because it is made from the LayerNorm-ed input,
and the new 'draw' points where the update points; one head's W_V·W_O fold into one matrix.
02: the one head of 01 gives 'I' only part of draw's attention; several of the 12 heads give it most;
the head 02 follows is the most spread out of those that peak at 'I'; every head reads all 768
numbers. 03: lengths jump from about 1 to 28-79; the recombination figure's rows add up to concat·W_O;
each head's W_V[h]·W_O[h] has rank 64; the capstone's two inputs; each head of MultiHead(64, 8) works
in a projection of all 64 numbers.
"""

import math
import re

import pytest
import torch

import helpers as H
from helpers.exercises import capstone


@pytest.fixture(scope="module")
def one(walk_one):
    return walk_one


@pytest.fixture(scope="module")
def twelve(walk_twelve):
    return walk_twelve


def test_the_walkthrough_models_are_the_trained_ones(one, twelve):
    assert one.source == twelve.source == "trained"
    assert one.tokens == twelve.tokens == ["I", "like", "to", "draw"]


def test_01_update_is_long_because_it_is_made_from_the_normalised_input(one):
    layer, draw = one.steps(), 3
    assert round(float(one.residual[draw].norm()), 2) == 1.15
    assert round(float(one.X[draw].norm()), 2) == 25.65
    assert round(float(layer.update[draw].norm()), 2) == 25.04
    # LayerNorm: about √768 ≈ 27.7 times the learned scale
    scale = H.load_model("walkthrough-1").model.h[0].ln_1.weight.detach()
    assert abs(float(one.X[draw].norm()) - math.sqrt(768) * float(scale.pow(2).mean().sqrt())) < 2.0
    cosine = torch.nn.functional.cosine_similarity(layer.out[draw], layer.update[draw], dim=0)
    assert f"{float(cosine):.3f}" == "0.999"


def test_01_one_head_folds_W_V_and_W_O_without_changing_the_layer(one):
    layer, head = one.steps(), one.head(0)
    W_VO = one.W_V[0] @ one.W_O[0]
    folded = head.weights @ (one.X @ W_VO + one.b_V[0] @ one.W_O[0]) + one.b_O
    assert W_VO.shape == (768, 768)
    assert float((folded - layer.update).abs().max()) < 1e-5


def test_01_mask_changes_every_row_but_draws(one):
    head = one.head(0)
    unmasked = head.scaled.softmax(-1)
    assert torch.allclose(unmasked[3], head.weights[3])
    assert all(not torch.allclose(unmasked[q], head.weights[q]) for q in range(3))
    assert [round(w, 2) for w in head.weights[3].tolist()] == [0.37, 0.43, 0.06, 0.14]


def test_02_several_heads_look_from_draw_at_I_and_each_reads_all_768_numbers(twelve):
    to_I = twelve.steps().weights[:, 3, 0]
    assert int((to_I > 0.5).sum()) == 5
    x = twelve.X[3]
    piece = x.clone()
    piece[64:] = 0
    q_full, q_piece = x @ twelve.W_Q[0], piece @ twelve.W_Q[0]
    assert f"{float((q_full - q_piece).norm() / q_full.norm()):.0%}" == "94%"
    assert int((twelve.W_Q.abs().sum(-1) > 0).sum(-1).min()) == 768  # every head, every input row


def test_02_the_followed_head_peaks_at_I_and_is_the_most_spread_out_of_those(twelve):
    rows = twelve.steps().weights[:, 3]  # (12, 4): draw's row in every head
    candidates = [k for k in range(12) if int(rows[k].argmax()) == 0]
    assert candidates == [0, 1, 5, 6, 9]
    h = twelve.pick_head(3, 0)
    assert h == 1 and [f"{w:.2f}" for w in rows[h].tolist()] == ["0.66", "0.33", "0.02", "0.00"]
    entropy = -(rows * rows.clamp_min(1e-12).log()).sum(-1)
    assert h == max(candidates, key=lambda k: float(entropy[k]))  # the most spread-out candidate
    assert all(rows[k, 0] > rows[h, 0] for k in candidates if k != h)  # not the one that gives I the most
    assert f"{float(rows[6, 0]):.2f}" == "1.00" and float(rows[6, 1:].max()) < 0.005  # all but one value vector
    assert int((rows[h] > 0.1).sum()) == 2  # the followed head mixes two words


def test_03_lengths_and_the_recombination_figure(twelve):
    layer = twelve.steps()
    assert [round(v, 2) for v in layer.residual.norm(dim=-1).tolist()] == [0.89, 1.44, 1.19, 0.88]
    assert [round(v, 2) for v in layer.out.norm(dim=-1).tolist()] == [49.98, 60.81, 78.97, 28.35]
    fig = H.plot_recombination(layer, 3, twelve.tokens)
    texts = [t.get_text() for t in fig.axes[0].texts]
    lengths = [float(t) for t in texts if t.strip().replace(".", "").isdigit()]
    assert lengths[:12] == [round(float(v), 1) for v in layer.per_head[:, 3].norm(dim=-1)]
    gap = float((layer.per_head[:, 3].sum(0) - layer.concat[3] @ layer.recombination).abs().max())
    shown = [float(re.search(r"differs by ([-+.e0-9]+);", t).group(1)) for t in texts if "differs by" in t]
    assert gap < 1e-4 and len(shown) == 1 and shown[0] < 1e-4


def test_03_each_heads_value_and_output_blocks_have_rank_64(twelve):
    ranks = [int(torch.linalg.matrix_rank(twelve.W_V[h] @ twelve.W_O[h])) for h in range(12)]
    assert ranks == [64] * 12


def test_03_capstone_inputs_are_the_sentence_and_a_batch_of_two():
    attn, inputs = capstone._layer_and_inputs()
    assert [list(x.shape) for x in inputs] == [[1, 4, 768], [2, 6, 768]]
    with torch.no_grad():
        mine = H.MultiHead(768, 12, causal=True, qkv_bias=True)
        mine.qkv.load_state_dict(attn.c_attn.state_dict())
        mine.out.load_state_dict(attn.c_proj.state_dict())
        for x in inputs:  # the printed reference class equals the model's own layer
            assert torch.allclose(mine(x), attn(x)[0], atol=1e-4)


def test_03_each_capstone_head_works_in_a_projection_of_all_64_numbers():
    torch.manual_seed(0)  # as notebook 03's cell: MultiHead(dim=64, heads=8)
    mha = H.MultiHead(dim=64, heads=8)
    x = torch.rand(1, 1, 64)
    piece = x.clone()
    piece[..., 8:] = 0  # only the first 8 numbers: what head 0 would get if heads took slices
    query = lambda t: mha.split(mha.qkv(t).chunk(3, dim=-1)[0])[0, 0, 0]  # noqa: E731  head 0's query, [8]
    with torch.no_grad():
        assert query(x).shape == (8,) and not torch.allclose(query(x), query(piece))
    assert int((mha.qkv.weight[:64].abs().sum(0) > 0).sum()) == 64  # every input number feeds the queries


def test_01_folding_twelve_heads_would_cost_six_times_the_numbers(twelve):
    folded = sum((twelve.W_V[h] @ twelve.W_O[h]).numel() for h in range(12))
    factors = twelve.W_V.numel() + twelve.W_O.numel()
    assert (folded, factors) == (7_077_888, 1_179_648)


def test_02_the_mask_hides_nothing_in_draws_row(twelve):
    h = twelve.pick_head(3, 0)  # the head 02 follows; its cells take the softmax without a mask
    head = twelve.head(h)
    unmasked = head.scaled.softmax(-1)
    assert torch.allclose(unmasked[3], head.weights[3])
    assert all(not torch.allclose(unmasked[q], head.weights[q]) for q in range(3))


def test_03_W_O_writes_into_64_dimensions_and_does_not_bring_the_input_back(twelve):
    assert [int(torch.linalg.matrix_rank(twelve.W_O[h])) for h in range(12)] == [64] * 12
    layer, h = twelve.steps(), twelve.pick_head(3, 0)
    decompressed = layer.z[h, 3] @ twelve.W_O[h]  # [768], as in 03's first cell
    cosine = torch.nn.functional.cosine_similarity(decompressed, twelve.X[3], dim=0)
    assert decompressed.shape == (768,) and abs(float(cosine)) < 0.1
