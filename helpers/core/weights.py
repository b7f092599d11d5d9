"""Saving and loading model weights: safetensors only, never pickle.

Files use the Hugging Face GPT-2 key layout, where the four projection matrices
are stored as [in, out] ("Conv1D"), so one loader reads our classroom models and
the real GPT-2 small. Writes are atomic (files.atomic_write: temporary file, then rename).
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save

from .arguments import whole_number
from .files import atomic_write, sha256
from .model import GPT, GPTConfig

# Conv1D weights in the checkpoint are [in, out]; nn.Linear wants [out, in].
CONV1D_SUFFIXES = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def checked_config(**fields) -> GPTConfig:
    """A GPTConfig from sizes that came from outside (a model file, a Hugging Face config.json, a
    training recipe), each checked with a one-line error; the model itself trusts its config.
    Numpy and tensor integers are stored as plain ints, so the config saves as JSON."""
    for size in ("vocab_size", "n_ctx", "n_layer", "n_head", "n_embd"):  # True or 4.0 is no size
        if size in fields:
            fields[size] = whole_number(fields[size], size, low=1, valid="sizes are positive integers")
    config = GPTConfig(**fields)
    if config.n_embd % config.n_head:
        raise ValueError(f"n_embd={config.n_embd} is not divisible by n_head={config.n_head}; "
                         f"pick a head count that divides the width.")
    n_kv = whole_number(config.n_kv_head, "n_kv_head", low=1, high=config.n_head,
                        valid=f"n_kv_head counts key/value heads: 1..n_head={config.n_head}")
    if config.n_head % n_kv:
        raise ValueError(f"n_kv_head={n_kv} does not divide n_head={config.n_head}; each key/value head "
                         f"serves a whole group of query heads: pick a divisor of {config.n_head}.")
    if not isinstance(config.mlp, bool):  # "no" or 0 would be read as a wish it does not say
        raise ValueError(f"mlp={config.mlp!r} is not True or False; pass mlp=False for an attention-only model.")
    eps = config.ln_eps
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"ln_eps={eps!r} is not a small positive number; LayerNorm needs one, e.g. 1e-5.")
    return GPTConfig(**{**config.__dict__, "n_kv_head": n_kv, "ln_eps": float(eps)})


def to_checkpoint_layout(model: GPT, dtype=torch.float16) -> dict[str, torch.Tensor]:
    """Our state dict in the hub's layout: Conv1D weights transposed to [in, out]."""
    state = {}
    for name, tensor in model.state_dict().items():
        if name.endswith(CONV1D_SUFFIXES):
            tensor = tensor.T
        state[name] = tensor.detach().to(dtype).contiguous()
    return state


def _is_buffer_or_tied(key: str) -> bool:
    """GPT-2's causal-mask buffers (h.N.attn.bias, .masked_bias) and lm_head (tied to wte) carry no weights."""
    return key.split(".")[-2:] in (["attn", "bias"], ["attn", "masked_bias"]) or key == "lm_head.weight"


def model_from_checkpoint(state: dict[str, torch.Tensor], config: GPTConfig, source: str = "checkpoint") -> GPT:
    """Build a GPT from hub-layout tensors, checking every name and shape instead of hoping."""
    state = {k.removeprefix("transformer."): v for k, v in state.items()}
    state = {k: v for k, v in state.items() if not _is_buffer_or_tied(k)}
    model = GPT(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    if missing or extra:
        raise ValueError(
            f"{source} does not match the model config: missing {missing[:3]}, unexpected {extra[:3]}; "
            f"check that the config belongs to this file."
        )
    loaded = {}
    for name, tensor in state.items():
        tensor = tensor.T if name.endswith(CONV1D_SUFFIXES) else tensor
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise ValueError(f"{source}: {name} has shape {list(tensor.shape)}, expected {list(expected[name].shape)}.")
        loaded[name] = tensor.float()
    model.load_state_dict(loaded)
    return model.eval()


def save_model(model: GPT, path: str | Path, vocab: list[str], info: dict | None = None) -> str:
    """Write fp16 safetensors with config, vocabulary and info in its metadata; return the sha256."""
    path = Path(path)
    metadata = {
        "config": json.dumps(model.config.to_dict()),
        "vocab": json.dumps(vocab),
        "info": json.dumps(info or {}),
    }
    blob = in_sorted_order(save(to_checkpoint_layout(model), metadata=metadata))
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(blob), mode=0o644)  # 0o644: for everyone to read
    return sha256(path)


def in_sorted_order(blob: bytes) -> bytes:
    """The same safetensors file with its header's keys sorted. safetensors writes the metadata in
    hash-map order, which changes from run to run, so the same model would get another sha256 each
    time it is saved; sorted, training again gives the same bytes. The tensors' data is untouched
    (each header entry names its own byte offsets, so their order in the header does not matter)."""
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + size])
    metadata = header.pop("__metadata__", None)
    ordered = ({"__metadata__": dict(sorted(metadata.items()))} if metadata else {}) | dict(sorted(header.items()))
    text = json.dumps(ordered, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format pads the header to a multiple of 8 bytes with spaces
    return len(text).to_bytes(8, "little") + text + blob[8 + size:]


def read_checked(path: Path, expected_sha256: str, kind: str, fix: str) -> tuple[dict, dict]:
    """(metadata, tensors) of a safetensors file whose sha256 is the recorded one; each problem in one
    line: missing, corrupted (a flipped byte still loads, so the checksum comes first), truncated."""
    if not path.is_file():
        raise FileNotFoundError(f"{kind.capitalize()} file {path} is missing.{fix}")
    if sha256(path) != expected_sha256:
        raise ValueError(f"{kind.capitalize()} file {path} is corrupted (its sha256 does not match the recorded "
                         f"one).{fix}")
    try:
        with safe_open(str(path), framework="pt") as f:
            metadata = f.metadata() or {}
        return metadata, load_file(str(path))
    except (SafetensorError, OSError) as err:
        raise ValueError(f"{kind.capitalize()} file {path} is truncated or not a {kind} file ({err}).{fix}") from None


def read_model(path: str | Path, expected_sha256: str, remedy: str = "") -> tuple[GPT, list[str], dict]:
    """Load (model, vocab, info) from a file written by save_model, after checking its sha256.

    The checksum is required: a flipped byte in fp16 weights still loads and quietly changes
    the attention, so nothing is read that cannot be checked against the sha256 save_model returned."""
    path = Path(path)
    fix = f" Regenerate it with `{remedy}`." if remedy else ""
    if not (isinstance(expected_sha256, str) and len(expected_sha256) == 64):
        raise ValueError(f"read_model needs the sha256 recorded for {path.name} (64 hex digits, as returned by "
                         f"save_model or listed in data/models.json), got {expected_sha256!r}.")
    metadata, state = read_checked(path, expected_sha256, "model", fix)
    config, vocab, info = read_metadata(metadata, path, fix or " Write it again with save_model.")
    model = model_from_checkpoint(state, config, source=str(path))
    return model, vocab, info


def read_metadata(metadata: dict, path: Path, fix: str) -> tuple[GPTConfig, list[str], dict]:
    """(config, vocab, info) from a model file's metadata; anything missing, unknown or invalid is one
    line naming the file, what is wrong and `fix` (never a TypeError from deep inside, never NaN maps)."""
    def bad(what: str) -> ValueError:
        return ValueError(f"Model file {path} has {what}.{fix}")

    parsed = {}
    for key, default in (("config", None), ("vocab", None), ("info", "{}")):
        text = metadata.get(key, default)
        if text is None:
            raise bad(f"no {key!r} in its metadata")
        try:
            parsed[key] = json.loads(text)
        except json.JSONDecodeError as err:
            raise bad(f"a {key!r} that is not valid JSON ({err})") from None
    config, vocab, info = parsed["config"], parsed["vocab"], parsed["info"]
    if not isinstance(config, dict):
        raise bad(f"a config that is not a JSON object (it is a {type(config).__name__})")
    known = [f.name for f in fields(GPTConfig)]  # all are written (GPTConfig.to_dict); n_kv_head only when it differs
    unknown, missing = sorted(set(config) - set(known)), [k for k in known if k != "n_kv_head" and k not in config]
    if unknown or missing:
        raise bad(f"a config with {'unknown key' if unknown else 'no key'} {(unknown or missing)[0]!r} "
                  f"(a config has {', '.join(known)})")
    try:
        config = checked_config(**config)
    except (ValueError, TypeError) as err:
        raise bad(f"an invalid config ({str(err).splitlines()[0]})") from None
    if not (isinstance(vocab, list) and all(isinstance(w, str) for w in vocab) and len(vocab) == config.vocab_size):
        raise bad(f"a vocabulary that is not a list of {config.vocab_size} words")
    if not isinstance(info, dict):
        raise bad(f"an 'info' that is not a JSON object (it is a {type(info).__name__})")
    return config, vocab, info
