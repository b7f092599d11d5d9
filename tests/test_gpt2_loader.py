"""Our GPT loaded from a hub-layout GPT-2 checkpoint equals Hugging Face's GPT-2 (the oracle)."""

from __future__ import annotations

import pytest
import torch
from test_gpt2_fakes import hf_config_dict, write_hub_checkpoint, write_tokenizer_json

from helpers.core import gpt2
from helpers.core.weights import model_from_checkpoint

transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def tiny_hf():
    """A tiny random GPT-2 from transformers, with eager attention so it returns its maps."""
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_head=4, n_embd=32, vocab_size=100, n_positions=64,
                                     bos_token_id=99, eos_token_id=99, attn_implementation="eager")
    model = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # random LayerNorm and biases too, so a mix-up of any tensor shows
        for name, p in model.named_parameters():
            if name.endswith("bias") or ".ln_" in name:
                p.add_(0.1 * torch.randn_like(p))
    return model


@pytest.fixture(scope="module")
def tiny_folder(tiny_hf, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    write_hub_checkpoint(tiny_hf.state_dict(), hf_config_dict(tiny_hf.config), folder)
    write_tokenizer_json(folder / "tokenizer.json")
    return folder


def hf_outputs(model, ids):
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    assert len(out.attentions) == model.config.n_layer, "eager attention must return every map"
    return out.logits, torch.stack(out.attentions, dim=1)  # (B, L, H, T, T)


def assert_same_as_hf(ours, hf_model, ids):
    logits, maps = hf_outputs(hf_model, ids)
    with torch.no_grad():
        out = ours(ids)
    assert out.attentions.shape == maps.shape
    torch.testing.assert_close(out.logits, logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out.attentions, maps, atol=1e-5, rtol=1e-5)


def test_checkpoint_has_the_hub_layout(tiny_folder):
    from safetensors import safe_open

    with safe_open(str(tiny_folder / "model.safetensors"), framework="pt") as f:
        keys = set(f.keys())
        c_attn = f.get_tensor("h.0.attn.c_attn.weight")
    assert "wte.weight" in keys and "h.0.attn.bias" in keys
    assert not any(k.startswith("transformer.") or k == "lm_head.weight" for k in keys)
    assert c_attn.shape == (32, 96)  # Conv1D: [in, out]


def test_model_from_checkpoint_matches_transformers(tiny_hf, tiny_folder):
    from safetensors.torch import load_file

    config = gpt2._config_for(tiny_folder)
    ours = model_from_checkpoint(load_file(str(tiny_folder / "model.safetensors")), config)
    ids = torch.randint(0, 100, (3, 17), generator=torch.Generator().manual_seed(1))
    assert_same_as_hf(ours, tiny_hf, ids)


def test_load_gpt2_from_a_folder_matches_transformers(tiny_hf, tiny_folder, monkeypatch):
    monkeypatch.setenv(gpt2.VERIFY_ENV, "0")  # a stand-in, not the pinned file
    lm = gpt2.load_gpt2(tiny_folder)
    assert lm.name == "gpt2" and lm.config.n_layer == 2 and lm.config.n_head == 4
    assert torch.equal(lm.model.wte.weight, tiny_hf.lm_head.weight)
    ids = torch.randint(0, 100, (1, 64), generator=torch.Generator().manual_seed(2))  # the full context
    assert_same_as_hf(lm.model, tiny_hf, ids)


def test_load_gpt2_accepts_the_model_file_path(tiny_folder, monkeypatch):
    monkeypatch.setenv(gpt2.VERIFY_ENV, "0")
    lm = gpt2.load_gpt2(tiny_folder / "model.safetensors")
    assert lm.config.vocab_size == 100


def test_load_gpt2_refuses_a_file_that_is_not_gpt2_small(tiny_folder, monkeypatch):
    monkeypatch.delenv(gpt2.VERIFY_ENV, raising=False)
    with pytest.raises(gpt2.GPT2Unavailable, match="wrong sha256") as err:
        gpt2.load_gpt2(tiny_folder)
    assert "\n" not in str(err.value) and "548 MB" in str(err.value)
    assert (tiny_folder / "model.safetensors").is_file(), "a file the user pointed at is refused, not deleted"


def test_load_gpt2_names_a_missing_tokenizer(tiny_folder, tmp_path, monkeypatch):
    monkeypatch.setenv(gpt2.VERIFY_ENV, "0")
    (tmp_path / "model.safetensors").write_bytes((tiny_folder / "model.safetensors").read_bytes())
    with pytest.raises(gpt2.GPT2Unavailable, match="tokenizer.json is missing"):
        gpt2.load_gpt2(tmp_path)


def test_gpt2_small_config_is_the_published_one():
    c = gpt2.GPT2_SMALL
    assert (c.vocab_size, c.n_ctx, c.n_layer, c.n_head, c.n_embd, c.d_head) == (50257, 1024, 12, 12, 768, 64)
    hf = transformers.GPT2Config()  # transformers' defaults are GPT-2 small's
    assert (hf.vocab_size, hf.n_positions, hf.n_layer, hf.n_head, hf.n_embd) == \
        (c.vocab_size, c.n_ctx, c.n_layer, c.n_head, c.n_embd)
    assert hf.layer_norm_epsilon == c.ln_eps and hf.activation_function == "gelu_new"


def test_gpt2_small_key_layout_matches_our_model():
    """The 160 tensor names of the real file (NOTES) are exactly ours plus the 12 mask buffers."""
    from helpers.core.model import GPT

    with torch.device("meta"):  # names and shapes only, no 500 MB of memory
        ours = GPT(gpt2.GPT2_SMALL).state_dict()
    assert len(ours) == 148
    assert tuple(ours["h.0.attn.c_attn.weight"].shape) == (2304, 768)  # the file has [768, 2304]
    hf_shapes = {"wte.weight": (50257, 768), "wpe.weight": (1024, 768), "h.11.mlp.c_proj.weight": (768, 3072)}
    assert all(tuple(ours[k].shape) == v for k, v in hf_shapes.items())
