"""Saving and loading weights: round trip, hub layout, and clear errors for damaged files."""

import json

import pytest
import torch
from safetensors.torch import load_file

from helpers.core import catalog
from helpers.core.model import GPT, GPTConfig
from helpers.core.weights import atomic_write, read_model, save_model, sha256

VOCAB = [f"w{i}" for i in range(20)]


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, n_ctx=8, n_layer=2, n_head=2, n_embd=16)).eval()
    path = tmp_path / "m.safetensors"
    digest = save_model(model, path, VOCAB, {"held_out_loss": 1.5})
    return model, path, digest


def test_round_trip_in_fp16(saved):
    model, path, digest = saved
    loaded, vocab, info = read_model(path, digest)
    assert vocab == VOCAB and info == {"held_out_loss": 1.5}
    assert loaded.config == model.config
    ids = torch.randint(0, 20, (1, 8))
    assert torch.allclose(loaded(ids).logits, model(ids).logits, atol=2e-2)


def test_file_uses_the_hub_layout(saved):
    _, path, _ = saved
    state = load_file(str(path))
    assert state["h.0.attn.c_attn.weight"].shape == (16, 48)  # Conv1D: [in, out]
    assert state["h.0.mlp.c_fc.weight"].shape == (16, 64)
    assert state["wte.weight"].dtype == torch.float16
    assert "lm_head.weight" not in state  # tied to wte


def test_missing_file_names_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing\. Regenerate it with `python -m helpers.train x`"):
        read_model(tmp_path / "nope.safetensors", "0" * 64, remedy="python -m helpers.train x")


def test_checksum_mismatch_is_refused(saved):
    _, path, digest = saved
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupted.*python -m helpers.train x"):
        read_model(path, digest, remedy="python -m helpers.train x")


def test_truncated_file_is_a_one_line_error(saved):
    _, path, _ = saved
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="truncated or not a model file") as err:
        read_model(path, sha256(path), remedy="python -m helpers.train x")
    assert "\n" not in str(err.value)


def test_pickle_files_are_never_loaded(tmp_path):
    path = tmp_path / "evil.safetensors"
    torch.save({"a": torch.zeros(1)}, path)  # a pickle, not safetensors
    with pytest.raises(ValueError, match="not a model file"):
        read_model(path, sha256(path))


@pytest.mark.parametrize("digest", [None, "", "abc", 123])
def test_a_model_is_never_read_without_its_checksum(saved, digest):
    """A flipped byte in fp16 weights loads fine and silently changes the attention: no checksum, no read."""
    _, path, _ = saved
    with pytest.raises(ValueError, match="needs the sha256"):
        read_model(path, digest)


def test_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "out.bin"

    def half_then_fail(tmp):
        open(tmp, "wb").write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, half_then_fail)
    assert list(tmp_path.iterdir()) == []


def test_record_model_writes_manifest_beside_the_file(saved, tmp_path):
    model, _, _ = saved
    path = tmp_path / "sub" / "toy.safetensors"
    catalog.record_model("toy", model, VOCAB, {"held_out_loss": 1.0}, path)
    entry = json.loads((path.parent / "models.json").read_text())["toy"]
    assert entry["sha256"] == sha256(path) and entry["bytes"] == path.stat().st_size
    assert entry["command"] == "python -m helpers.train toy"


def test_unknown_model_name_lists_the_choices():
    with pytest.raises(ValueError, match="gpt2"):
        catalog.load_model("no-such-model")


def test_saving_the_same_model_again_gives_the_same_bytes(tmp_path):
    """safetensors writes its metadata in hash-map order; save_model sorts the header, so the sha256 repeats."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=5, n_ctx=8, n_layer=1, n_head=2, n_embd=8)).eval()
    digests = {save_model(model, tmp_path / f"m{i}.safetensors", list("abcde"), {"b": 1, "a": 2, "c": 3})
               for i in range(8)}
    assert len(digests) == 1
    again, vocab, info = read_model(tmp_path / "m0.safetensors", digests.pop())
    assert vocab == list("abcde") and info == {"b": 1, "a": 2, "c": 3}
    for (name, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a.half().float(), b), name
