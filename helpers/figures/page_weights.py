"""A classroom model packed for the offline page, so the page can run it (page_model.js).

    model_data(H.load_model("classroom"))   # {"name", "config", "vocab", "tensors", "weights", "numbers"}

The weights travel in 16 bits: every tensor of the state dict, in its PyTorch layout (nn.Linear is
(out, in)), one after the other in one base64 string of little-endian float16. The shipped models
are stored in 16 bits already (data/*.safetensors), so the page decodes exactly the numbers Python
loads; only the order of the sums differs. GPT-2 small is far too big for a page (~500 MB in
16 bits): its page stays the precomputed kind.
"""

from __future__ import annotations

import base64

import numpy as np

from ..analysis.seeds import seed_runs
from ..core.model import LanguageModel
from ..core.tokenizer import BOS, PUNCTUATION, WordTokenizer

MAX_LIVE_BYTES = 4_000_000  # 16-bit weights of one model; the 12 × 12 classroom model is 2.7 MB
REST_WORDS = ("<bos>", "<|endoftext|>", ".")  # where heads rest: analysis/captions.py RESTING


def can_run_in_page(lm: LanguageModel) -> bool:
    """True for a model the page can run itself: a word tokenizer and at most MAX_LIVE_BYTES of weights."""
    return isinstance(lm.tokenizer, WordTokenizer) and 2 * lm.model.num_params() <= MAX_LIVE_BYTES


def _numbers(lm: LanguageModel) -> dict:
    """What models.json says about the model: held-out loss and list accuracy, and their range over seeds."""
    info, runs = lm.info or {}, seed_runs(lm.name)  # {} for a model models.json does not list
    numbers = {key: info[key] for key in ("held_out_loss", "accuracy_induction") if key in info}
    for key in ("held_out_loss", "list_accuracy"):
        values = [run[key] for run in runs.values() if key in run]
        if values:
            numbers[f"{key}_seeds"] = [min(values), max(values), len(values)]
    return numbers


def model_data(lm: LanguageModel) -> dict:
    """The model as JSON-ready data for page_model.js: sizes, words, tensor index and 16-bit weights."""
    if not can_run_in_page(lm):
        raise ValueError(f"{lm.name} cannot run in a page (a word tokenizer and at most "
                         f"{MAX_LIVE_BYTES / 1e6:.0f} MB of 16-bit weights); export it with live=False.")
    cfg, tensors, parts, offset = lm.config, {}, [], 0
    for name, tensor in lm.model.state_dict().items():
        values = tensor.detach().float().numpy().astype("<f2")  # the shipped files are float16 already
        tensors[name] = [offset, list(values.shape)]
        parts.append(values.reshape(-1))
        offset += values.size
    blob = np.concatenate(parts).tobytes()
    return {"name": lm.name, "bos": bool(lm.bos), "start": BOS, "punctuation": PUNCTUATION,
            "rest": list(REST_WORDS), "vocab": list(lm.tokenizer.vocab),
            "config": {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_kv_head": cfg.n_kv_head,
                       "n_embd": cfg.n_embd, "n_ctx": cfg.n_ctx, "vocab_size": cfg.vocab_size,
                       "mlp": cfg.mlp, "ln_eps": cfg.ln_eps},
            "tensors": tensors, "weights": base64.b64encode(blob).decode("ascii"), "numbers": _numbers(lm)}
