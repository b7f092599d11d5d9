"""One forward pass (core.run / GPT.run_blocks) that every consumer reads, instead of its own loop."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

import helpers as H
from helpers.analysis import knockout
from helpers.core import model as model_module
from helpers.core import tokenizer
from helpers.core.model import GPT, GPTConfig

ROOT = Path(__file__).resolve().parent.parent


def small_lm_run(mlp: bool):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=50, n_ctx=16, n_layer=3, n_head=4, n_embd=32, mlp=mlp)).eval()
    ids = torch.randint(0, 50, (2, 7))
    with torch.no_grad():
        return model, ids, model(ids, keep=True)


@pytest.mark.parametrize("mlp", [True, False])
def test_kept_tensors_are_what_each_block_reads_and_writes(mlp):
    model, ids, out = small_lm_run(mlp)
    L, H_, d = 3, 4, 8
    assert out.residuals.shape == (2, L + 1, 7, 32) and out.attention_inputs.shape == (2, L, 7, 32)
    assert out.head_outputs.shape == (2, L, H_, 7, d)
    with torch.no_grad():
        assert torch.equal(out.residuals[:, 0], model.embed(ids))
        for i, block in enumerate(model.h):
            assert torch.allclose(out.attention_inputs[:, i], block.ln_1(out.residuals[:, i]), atol=1e-6)
            w = H.head_weights(model, i)
            v = out.attention_inputs[:, i, None] @ w["W_V"] + w["b_V"][:, None]  # (B, H, T, d), from the weights
            assert torch.allclose(out.head_outputs[:, i], out.attentions[:, i] @ v, atol=1e-5)
            if not mlp:  # an attention-only block adds exactly its heads' recombined outputs
                update = torch.einsum("bhtd,hdD->btD", out.head_outputs[:, i], w["W_O"]) + w["b_O"]
                assert torch.allclose(out.residuals[:, i + 1], out.residuals[:, i] + update, atol=1e-5)
        assert torch.allclose(out.logits, model.unembed(out.residuals[:, -1]), atol=1e-6)
        plain = model(ids)  # keep=False: the same logits and maps, nothing extra kept
    assert plain.residuals is None and torch.equal(plain.logits, out.logits)


def test_restarting_from_a_kept_residual_gives_the_full_pass():
    model, ids, out = small_lm_run(True)
    with torch.no_grad():
        tail = model.run_blocks(out.residuals[:, 1], first=1)
    assert torch.allclose(tail.logits, out.logits, atol=1e-5)
    assert torch.allclose(tail.attentions, out.attentions[:, 1:], atol=1e-6)


def test_run_sentence_keeps_one_entry_per_layer():
    lm = H.load_model("classroom")
    run = H.run_sentence(lm, "the cat sat on the mat")
    T, cfg = len(run.tokens), lm.config
    assert run.residuals.shape == (cfg.n_layer + 1, T, cfg.n_embd)
    assert run.attention_inputs.shape == (cfg.n_layer, T, cfg.n_embd)
    assert run.head_outputs.shape == (cfg.n_layer, cfg.n_head, T, cfg.d_head)


def test_head_means_are_the_kept_head_outputs_averaged():
    lm = H.load_model("classroom")
    ids = torch.tensor([lm.tokenizer.encode("the cat sat on the mat")])
    means = knockout.head_means(lm, ids)
    assert torch.allclose(means, H.run_sentence(lm, "the cat sat on the mat").head_outputs.mean(dim=2), atol=1e-6)


def test_a_new_sentence_in_the_head_count_widget_is_read_once_and_run_once_per_model(monkeypatch):
    slider = H.HeadCountExplorer(heads=4)
    calls = {"split": 0, "forward": 0}
    split, forward = tokenizer.split_words, model_module.GPT.forward

    def counting_split(sentence):
        calls["split"] += 1
        return split(sentence)

    def counting_forward(self, *args, **kwargs):
        calls["forward"] += 1
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(tokenizer, "split_words", counting_split)
    monkeypatch.setattr(model_module.GPT, "forward", counting_forward)
    assert slider.set_sentence("the cat sat on the mat")
    assert calls == {"split": 1, "forward": 2}  # heads-4 for the maps, heads-12 for the merge
    assert slider.run.tokens == slider.merge_tokens == ["<bos>", "the", "cat", "sat", "on", "the", "mat"]


def test_only_the_model_loops_over_its_blocks():
    """No analysis, figure or widget walks model.h or re-derives the tied unembedding by hand."""
    offenders = []
    for path in sorted((ROOT / "helpers").rglob("*.py")):
        if path.name == "model.py":
            continue
        text = path.read_text()
        if re.search(r"for \w+ in [\w.]*\.h\b|\.h\[[^\]]+\]\(|wte\.weight\.T|\.embed\(", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
