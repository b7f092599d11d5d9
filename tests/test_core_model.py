"""The GPT-style model: shapes, causal maps, per-head weights and knock-outs."""

import math

import pytest
import torch

from helpers.core.model import GPT, GPTConfig, head_weights
from helpers.core.weights import checked_config


def small_model(seed=0, **overrides):
    torch.manual_seed(seed)
    cfg = dict(vocab_size=50, n_ctx=16, n_layer=2, n_head=4, n_embd=32)
    cfg.update(overrides)
    return GPT(GPTConfig(**cfg)).eval()


def test_forward_shapes_and_maps_are_causal_distributions():
    model = small_model()
    out = model(torch.randint(0, 50, (3, 7)))
    assert out.logits.shape == (3, 7, 50)
    assert out.attentions.shape == (3, 2, 4, 7, 7)
    assert torch.allclose(out.attentions.sum(-1), torch.ones(3, 2, 4, 7), atol=1e-6)
    future = torch.ones(7, 7, dtype=torch.bool).triu(1)
    assert out.attentions[..., future].abs().max() == 0


def test_prefix_predictions_do_not_see_the_future():
    model = small_model()
    ids = torch.randint(0, 50, (1, 9))
    full = model(ids).logits[0, :5]
    prefix = model(ids[:, :5]).logits[0]
    assert torch.allclose(full, prefix, atol=1e-5)


@pytest.mark.parametrize("mlp", [True, False])
def test_head_weights_rebuild_the_layer(mlp):
    """Per-head W_Q/W_K/W_V/W_O, used head by head, give the fused layer's output exactly."""
    model = small_model(mlp=mlp)
    ids = torch.randint(0, 50, (1, 6))
    x = model.h[1].ln_1(model.embed(ids))[0]  # (T, D)
    fused, maps, _ = model.h[1].attn(x[None])
    w = head_weights(model, 1)
    assert w["W_Q"].shape == (4, 32, 8) and w["W_O"].shape == (4, 8, 32)
    total = w["b_O"].clone()
    for h in range(4):
        q, k, v = (x @ w[f"W_{n}"][h] + w[f"b_{n}"][h] for n in "QKV")  # (T, d)
        scores = (q @ k.T / math.sqrt(8)).masked_fill(torch.ones(6, 6).triu(1).bool(), float("-inf"))
        weights = scores.softmax(-1)
        assert torch.allclose(weights, maps[0, h], atol=1e-6)
        total = total + weights @ v @ w["W_O"][h]  # each head's update through its own rows of W_O
    assert torch.allclose(total, fused[0], atol=1e-5)


def test_bad_sizes_are_one_line_errors():
    with pytest.raises(ValueError, match="not divisible by n_head=5"):
        checked_config(vocab_size=10, n_embd=32, n_head=5)
    with pytest.raises(ValueError, match="n_head=0"):
        checked_config(vocab_size=10, n_head=0)
    with pytest.raises(ValueError, match="reads at most 16"):
        small_model()(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match="layers 0..1"):
        head_weights(small_model(), 2)


def test_gpt2_small_sizes():
    cfg = GPTConfig(vocab_size=50257, n_ctx=1024)
    assert (cfg.n_layer, cfg.n_head, cfg.d_head) == (12, 12, 64)
    assert cfg.n_layer * cfg.n_head == 144


def test_run_sentence_uses_the_start_token_the_model_was_trained_with():
    from helpers.core.language import vocabulary
    from helpers.core.model import LanguageModel
    from helpers.core.run import run_sentence
    from helpers.core.tokenizer import WordTokenizer

    tok = WordTokenizer(vocabulary())
    model = small_model(vocab_size=len(tok))
    with_bos = run_sentence(LanguageModel("m", model, tok, bos=True), "I like to draw")
    bare = run_sentence(LanguageModel("m", model, tok, bos=False), "I like to draw")
    assert with_bos.tokens[0] == "<bos>" and with_bos.attentions.shape == (2, 4, 5, 5)
    assert bare.tokens == ["I", "like", "to", "draw"] and bare.attentions.shape == (2, 4, 4, 4)
    assert run_sentence(LanguageModel("m", model, tok, bos=False), "I like to draw", bos=True).tokens[0] == "<bos>"
    with pytest.raises(ValueError, match="reads at most 16"):
        run_sentence(LanguageModel("m", model, tok), " ".join(["cat"] * 16))
