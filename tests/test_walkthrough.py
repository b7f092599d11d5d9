"""The walkthrough data of notebooks 01–03: shapes, the trained models' behaviour, the seeded fallback."""

import pytest
import torch

import helpers as H
from helpers.core import walkthrough as W
from helpers.core.catalog import load_model, shipped_models
from helpers.core.model import GPT, GPTConfig, head_weights


def trained(name):
    if name not in shipped_models():
        pytest.skip(f"{name} is not in data/models.json yet")
    return load_model(name)


@pytest.mark.parametrize("n_heads", [1, 12])
def test_shapes_the_notebooks_state(n_heads):
    walk = W.walkthrough_layer("classroom", n_heads=n_heads)
    assert walk.tokens == ["I", "like", "to", "draw"]
    assert walk.residual.shape == walk.X.shape == (4, 768)  # [4 × 768]
    assert walk.d_model == 768 and walk.n_heads == n_heads and walk.d_head == 768 // n_heads
    assert walk.W_Q.shape == walk.W_K.shape == walk.W_V.shape == (n_heads, 768, 768 // n_heads)
    assert walk.W_O.shape == (n_heads, 768 // n_heads, 768)
    steps = walk.steps()
    assert steps.z.shape == (n_heads, 4, 768 // n_heads)
    assert steps.concat.shape == steps.update.shape == steps.out.shape == (4, 768)
    assert sum(t.numel() for t in walk.weights().values()) == 2_362_368
    assert torch.allclose(steps.weights.sum(-1), torch.ones(n_heads, 4), atol=1e-5)
    assert torch.all(steps.weights.triu(1) == 0)  # the models read left to right


def test_notebook_02_shapes_for_one_head_of_64():
    walk = W.walkthrough_layer("classroom", n_heads=12)
    h, draw = 0, 3
    q = walk.X[draw:draw + 1] @ walk.W_Q[h]
    K = walk.X @ walk.W_K[h]
    V = walk.X @ walk.W_V[h]
    assert q.shape == (1, 64) and K.shape == (4, 64) and (q @ K.T).shape == (1, 4) and V.shape == (4, 64)
    assert walk.head(h).z[draw].shape == (64,)
    with pytest.raises(RuntimeError):
        walk.residual[draw] + walk.head(h).z[draw]  # the failure notebook 02 shows


@pytest.mark.parametrize("name, n_heads", [("walkthrough-1", 1), ("walkthrough-12", 12)])
def test_trained_layer_equals_the_model(name, n_heads):
    lm = trained(name)
    walk = W.walkthrough_layer("classroom", n_heads=n_heads)
    assert walk.source == "trained"
    ids = torch.tensor([lm.tokenizer.encode("I like to draw", bos=False)])
    with torch.no_grad():
        out = lm.model(ids)
        e = lm.model.embed(ids)[0]
        layer_out = lm.model.h[0](e[None])[0]
    assert torch.allclose(walk.steps().weights, out.attentions[0, 0], atol=1e-5)
    assert torch.allclose(walk.steps().out, layer_out[0], atol=1e-4)


def test_trained_heads_look_from_draw_back_to_I():
    """What notebooks 01–02 measure, on the sentence read as trained (no start token): 12 narrow heads
    specialise, the single wide head splits its attention."""
    trained("walkthrough-1"), trained("walkthrough-12")
    one = W.walkthrough_layer("classroom", n_heads=1)
    twelve = W.walkthrough_layer("classroom", n_heads=12)
    draw, i = twelve.index("draw"), twelve.index("I")
    rows = twelve.steps().weights[:, draw]  # (12, T)
    assert (rows[:, i] > 0.5).sum() >= 3  # several heads give most of draw's attention to I
    h = twelve.pick_head(draw, i)
    assert int(rows[h].argmax()) == i
    single = one.head(0).weights[draw]
    assert 1 / len(one.tokens) < single[i] < rows[:, i].max()  # more than an even share, less than a specialist


def test_pick_head_prefers_a_spread_out_head_that_peaks_at_the_key():
    walk = W.seeded_layer(12)
    rows = walk.steps().weights[:, 3]
    h = walk.pick_head(3, 0)
    peaks = [k for k in range(12) if int(rows[k].argmax()) == 0]
    assert (h in peaks) if peaks else h == int(rows[:, 0].argmax())


def test_seeded_fallback_is_labelled_deterministic_and_non_uniform():
    a, b = W.seeded_layer(12, "the cat sat"), W.seeded_layer(12, "the cat sat")
    assert a.source == "seeded" and "SEEDED" in a.describe()
    assert torch.equal(a.X, b.X) and torch.equal(a.W_Q, b.W_Q)
    w = a.steps().weights
    assert (w[:, -1].max(-1).values > 0.45).any()  # some head clearly prefers one word
    assert torch.equal(W.word_vector("cat"), W.word_vector("cat"))
    assert not torch.equal(W.word_vector("cat"), W.word_vector("dog"))
    assert W.seeded_layer(1, "any words at all, even unknown ones").tokens[0] == "any"


def test_missing_model_falls_back_to_seeded(monkeypatch):
    def missing(name):
        raise FileNotFoundError(f"Model file data/{name}.safetensors is missing.")
    monkeypatch.setattr(W, "load_model", missing)
    with pytest.warns(W.SeededWeightsWarning, match="SEEDED .*walkthrough-12 is not available"):
        walk = W.walkthrough_layer("classroom", n_heads=12)
    assert walk.source == "seeded" and "walkthrough-12 is not available" in walk.describe()


def test_a_damaged_model_file_is_an_error_that_names_the_fix(monkeypatch, tmp_path):
    """Never a silent fall-back to untrained weights: a damaged walkthrough file stops with the fix."""
    from helpers.core import catalog

    entry = catalog.manifest()["walkthrough-12"]
    damaged = bytearray((catalog.DATA_DIR / entry["file"]).read_bytes())
    damaged[len(damaged) // 2] ^= 0x01  # one flipped bit in the weights
    (tmp_path / entry["file"]).write_bytes(bytes(damaged))
    monkeypatch.setattr(catalog, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match="corrupted.*git checkout -- data/walkthrough-12.safetensors"):
        W.walkthrough_layer("classroom", n_heads=12)


def test_any_language_model_and_fused_heads():
    from helpers.core.model import LanguageModel
    from helpers.core.tokenizer import WordTokenizer

    torch.manual_seed(0)
    vocab = ["<bos>", "I", "like", "to", "draw"]
    lm = LanguageModel("toy", GPT(GPTConfig(vocab_size=5, n_layer=2, n_head=4, n_embd=16)).eval(), WordTokenizer(vocab))
    walk = W.walkthrough_layer(lm, n_heads=4, bos=True)
    assert walk.tokens == vocab and walk.n_heads == 4 and walk.source == "trained"
    fused = W.walkthrough_layer(lm, n_heads=1)
    assert fused.n_heads == 1 and fused.d_head == 16 and "thought experiment" in fused.source
    w = head_weights(lm.model, 0)
    # the fused head's values are all heads' values side by side, and its W_O the whole recombination
    assert torch.allclose(fused.X @ fused.W_V[0], torch.cat([fused.X @ w["W_V"][h] for h in range(4)], dim=-1))
    assert torch.allclose(fused.W_O[0], w["W_O"].reshape(16, 16))
    with pytest.raises(ValueError, match="n_heads=2"):
        W.walkthrough_layer(lm, n_heads=2)


@pytest.mark.parametrize("kwargs, word", [(dict(sentence=""), "empty"), (dict(sentence="   "), "empty"),
                                          (dict(n_heads=5), "n_heads=5"), (dict(n_heads=0), "n_heads=0"),
                                          (dict(model="bert"), "bert")])
def test_bad_input_gives_one_line_errors(kwargs, word):
    with pytest.raises(ValueError) as err:
        W.walkthrough_layer(**kwargs)
    assert word in str(err.value) and "\n" not in str(err.value)


def test_bad_heads_for_seeded_and_unknown_words():
    with pytest.raises(ValueError, match="n_heads=7"):
        W.seeded_layer(7)
    with pytest.raises(ValueError, match="index|not in the sentence"):
        W.seeded_layer(12).index("zebra")
    if "walkthrough-12" in shipped_models():
        with pytest.raises(ValueError, match="zebra"):
            W.walkthrough_layer("classroom", 12, "I like zebra")


# --- read as trained: the walkthrough models never saw a start token ------------------------------
@pytest.mark.parametrize("name, n_heads, plain, with_bos", [("walkthrough-1", 1, 1.81, 2.00),
                                                            ("walkthrough-12", 12, 1.67, 1.81)])
def test_the_walkthrough_models_are_read_as_trained_without_a_start_token(name, n_heads, plain, with_bos):
    """They were trained on stories that start with their first word (recipe and record say bos=False), so
    bos=None reads "I like to draw" as four words; a <bos> in front raises their held-out loss."""
    from helpers.core.evaluation import HELD_OUT_SEED, next_token_loss
    from helpers.core.language import StoryWriter
    from helpers.train import RECIPES

    lm = trained(name)
    assert RECIPES[name].bos is False and lm.info["bos"] is False and lm.bos is False
    walk = W.walkthrough_layer("classroom", n_heads=n_heads)
    assert walk.bos is False and walk.tokens == ["I", "like", "to", "draw"]
    assert "trained without a start token" in walk.describe() and "read as trained" in walk.describe()
    assert "NOT read as trained" in W.walkthrough_layer("classroom", n_heads=n_heads, bos=True).describe()
    writer = StoryWriter(HELD_OUT_SEED)
    ids = torch.tensor([[lm.tokenizer.ids[t] for t in writer.story(64, bos=False).tokens] for _ in range(128)])
    with torch.no_grad():
        loss = next_token_loss(lm.model, ids)
        shifted = torch.cat([torch.full((len(ids), 1), lm.tokenizer.ids["<bos>"]), ids[:, :-1]], 1)
        logits = lm.model(shifted).logits[:, 1:-1]  # the predictions after each real token
        loss_bos = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), shifted[:, 2:].reshape(-1))
    assert (round(float(loss), 2), round(float(loss_bos), 2)) == (plain, with_bos)


def test_a_language_model_is_read_as_it_was_trained():
    from helpers.core.model import LanguageModel
    from helpers.core.tokenizer import WordTokenizer

    vocab = ["<bos>", "I", "like", "to", "draw"]
    model = GPT(GPTConfig(vocab_size=5, n_layer=1, n_head=2, n_embd=8)).eval()
    assert W.walkthrough_layer(LanguageModel("b", model, WordTokenizer(vocab), bos=True), 2).tokens[0] == "<bos>"
    bare = W.walkthrough_layer(LanguageModel("n", model, WordTokenizer(vocab), bos=False), 2)
    assert bare.tokens == vocab[1:] and bare.bos is False


def test_next_norm_and_next_words():
    seeded = W.seeded_layer(12)
    assert "seeded" in seeded.next_words(seeded.X[-1]) and H.subject_scores(seeded) is None
    assert torch.allclose(seeded.next_norm(seeded.X).norm(dim=-1), torch.full((4,), 768 ** 0.5), atol=0.01)
    walk = W.walkthrough_layer("classroom", n_heads=1)
    lm = trained("walkthrough-1")
    with torch.no_grad():
        assert torch.allclose(walk.next_norm(walk.steps().out), lm.model.ln_f(walk.steps().out))
        probs = lm.model(torch.tensor([lm.tokenizer.encode("I like to draw", bos=False)])).logits[0, -1].softmax(-1)
    assert walk.next_words(walk.steps().out[-1], k=1) == f"{lm.tokenizer.vocab[int(probs.argmax())]} {float(probs.max()):.2f}"
