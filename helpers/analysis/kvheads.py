"""Heads that share keys and values (notebook 07): multi-query and grouped-query attention.

Plain numbers, no matplotlib (the KV cache of published models is in kvcache.py): the
parameters of one attention layer, the six trained "kv-N" variants (12 query heads sharing N
key/value heads; kv-12 is heads-12's recipe), how alike the maps inside a group are, and the
mean-pooled conversion of a trained multi-head model (Ainslie et al. 2023's starting point): kv-12,
or with MODEL = "gpt2" GPT-2 small, measured on a paragraph of English written for notebook 07.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import torch
from torch.nn import functional as F

from ..core.attention import check_heads
from ..core.catalog import DATA_DIR, info_number, load_model, manifest, pick_model, recorded, record_measurements
from ..core.evaluation import evaluate, held_out_batch, one_thread
from ..core.model import GPT, LanguageModel
from ..core.run import run_sentence
from .headcount import check_divisor
from .kvcache import kv_cache_bytes_per_token

KV_COUNTS = (1, 2, 3, 4, 6, 12)  # every divisor of the 12 query heads
N_QUERY_HEADS, WIDTH, D_HEAD, N_LAYER = 12, 96, 8, 2
POOL_SOURCE = "kv-12"  # the trained 12-head model of the six (heads-12's recipe, trained by today's code)
SENTENCE = "list : red fox old mat . again : red fox old mat ."
POOL_TEXT = ("The bakery on the corner opens before the sun comes up. By six o'clock the first loaves are out of "
             "the oven, and a small queue has formed at the door. Most people buy the same thing every morning, "
             "so the baker knows their orders by heart. On rainy days she hands out hot tea to whoever is waiting "
             "outside, and nobody seems to mind the rain very much.")  # written for notebook 07, not downloaded
POOL_SENTENCE = "Anna lent her old red bike to Tom, and a week later Tom gave her old red bike back to Anna."


# --- one attention layer -----------------------------------------------------------------------------
def kv_attention_params(width: int, n_head: int, n_kv_head: int) -> int:
    """Parameters of one attention layer with biases: W_Q and W_O stay width × width, while W_K and W_V
    shrink to width × (n_kv_head · head size): 2·(D² + D) + 2·(D·H_kv·d + H_kv·d)."""
    d_head = check_heads(width, n_head, ("width", "n_head"))  # one line when n_head does not divide width
    kv_width, width = check_kv_count(n_kv_head, int(n_head)) * d_head, int(width)
    return 2 * (width * width + width) + 2 * (width * kv_width + kv_width)


def check_kv_count(n_kv_head, n_head: int = N_QUERY_HEADS, name: str = "n_kv_head") -> int:
    """n_kv_head as a plain int that divides n_head, or a one-line ValueError naming the choices."""
    return check_divisor(n_kv_head, n_head, name, "query heads")


def group_of(head: int, n_kv_head: int, n_head: int = N_QUERY_HEADS) -> int:
    """The key/value head query head `head` reads: neighbours share (0..g-1 -> 0), as repeat_interleave does."""
    return head // (n_head // n_kv_head)


# --- the trained variants ------------------------------------------------------------------------------
def variant_name(n_kv_head: int) -> str:
    """The shipped model with n_kv_head key/value heads: kv-N."""
    return f"kv-{check_kv_count(n_kv_head)}"


def load_kv_variant(n_kv_head: int) -> LanguageModel:
    """The variant with n_kv_head key/value heads, loaded once per kernel."""
    return _load(variant_name(n_kv_head))


@cache
def _load(name: str) -> LanguageModel:
    return load_model(name)


def available_kv_counts() -> list[int]:
    """The key/value head counts whose model is shipped in data/."""
    shipped = manifest()
    return [n for n in KV_COUNTS if variant_name(n) in shipped]


def kv_results() -> dict[int, dict]:
    """Per shipped variant: held-out loss, list accuracy, attention parameters per layer, cache per token."""
    shipped = manifest()
    out = {}
    for n in available_kv_counts():
        name = variant_name(n)  # a line without its numbers: one ValueError naming the entry (info_number)
        out[n] = {"model": name, "held_out_loss": info_number(name, "held_out_loss", shipped),
                  "list_accuracy": info_number(name, "accuracy_induction", shipped), "group_size": N_QUERY_HEADS // n,
                  "params_per_layer": kv_attention_params(WIDTH, N_QUERY_HEADS, n),
                  "cache_bytes_per_token": kv_cache_bytes_per_token(N_LAYER, n, D_HEAD, 2)}
    return out


def kv_results_table() -> str:
    """The table of the six variants (the closing table of issue 25), as text."""
    lines = [f"{'kv heads':>8} {'model':<9}{'group':>6}{'held-out loss':>15}{'list right':>12}"
             f"{'attn params/layer':>19}{'cache B/token':>15}"]
    for n, r in kv_results().items():
        lines.append(f"{n:>8} {r['model']:<9}{r['group_size']:>6}{r['held_out_loss']:>15.4f}"
                     f"{r['list_accuracy']:>12.1%}{r['params_per_layer']:>19,}{r['cache_bytes_per_token']:>15,}")
    return "\n".join(lines)


def kv_caption(settings: tuple[int, ...] = (12, 1)) -> str:
    """One sentence for the deck slide and its speaker notes, from the recorded numbers."""
    results = kv_results()
    parts = [f"{n} key/value head{'s' * (n > 1)}: held-out loss {results[n]['held_out_loss']:.3f}, list said again "
             f"{results[n]['list_accuracy']:.0%}, {results[n]['cache_bytes_per_token']} bytes of KV cache per token"
             for n in settings]
    return "12 query heads sharing " + "; ".join(parts) + "."


# --- how alike are the maps inside a group? --------------------------------------------------------------
def map_overlap(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Share of attention two maps put on the same keys: Σ_k min(a, b) per query row, 1 = identical rows.
    a, b (..., T, T) -> (..., T)."""
    return torch.minimum(a, b).sum(-1)


def map_moved(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """Share of attention a map moved to other keys: Σ_k max(0, before − after) per query row, 0 = unchanged.
    It equals 1 − map_overlap when both rows sum to 1, but is exactly 0 for identical maps: float32 rows
    sum to 1 only to within rounding, which differs from one kind of CPU to another."""
    return (before - after).clamp(min=0).sum(-1)


def group_similarity(attentions: torch.Tensor, n_kv_head: int) -> dict[str, float]:
    """Mean overlap of pairs of query heads that share a key/value head ("within") against pairs that do
    not ("across"), over every query row but the first (which can only look at itself); also per layer.
    attentions (B, L, H, T, T). With H_kv = H the groups are only a labelling: the baseline."""
    H = attentions.shape[2]
    n_kv = check_kv_count(n_kv_head, H)
    rows = attentions[..., 1:, :]  # (B, L, H, T-1, T)
    pairs = torch.full((attentions.shape[1], H, H), float("nan"))  # (L, H, H): mean overlap of heads i < j
    for i in range(H - 1):
        pairs[:, i, i + 1:] = map_overlap(rows[:, :, i:i + 1], rows[:, :, i + 1:]).mean(dim=(0, 3))  # (L, H-i-1)
    groups = torch.tensor([group_of(h, n_kv, H) for h in range(H)])
    same = (groups[:, None] == groups[None, :]) & torch.ones(H, H, dtype=torch.bool).triu(1)
    other = (groups[:, None] != groups[None, :]) & torch.ones(H, H, dtype=torch.bool).triu(1)
    mean = lambda mask, p: p[mask].mean().item() if mask.any() else float("nan")
    both = pairs.mean(0)  # (H, H): both layers
    return {"within": mean(same, both), "across": mean(other, both),
            "within_by_layer": [mean(same, p) for p in pairs], "across_by_layer": [mean(other, p) for p in pairs]}


@torch.no_grad()
def held_out_maps(lm: LanguageModel, n_stories: int = 32) -> torch.Tensor:
    """(B, L, H, T, T) maps of the model reading held-out stories (never seen in training)."""
    ids, _ = held_out_batch(tuple(lm.tokenizer.vocab), n_stories, lm.bos)
    with one_thread():
        return lm.model(ids).attentions


@cache
def similarity_by_kv_heads() -> dict[int, dict]:
    """For each shipped variant with groups of 2 or more and at least two groups: within vs across, and
    the same pairs of kv-12's heads (which share nothing) as the baseline ("baseline_…" keys)."""
    baseline = held_out_maps(load_kv_variant(N_QUERY_HEADS))
    out = {}
    for n in available_kv_counts():
        if 1 < n < N_QUERY_HEADS:
            base = group_similarity(baseline, n)
            out[n] = {**group_similarity(held_out_maps(load_kv_variant(n)), n),
                      **{f"baseline_{key}": value for key, value in base.items()}}
    return out


# --- mean-pooled conversion: the trained 12-head model turned into grouped-query ---------------------------
def pooled_model(lm: LanguageModel, n_kv_head: int) -> GPT:
    """lm's weights with the key and value heads of each group averaged into one (Ainslie et al. 2023's
    initialisation before uptraining); queries, W_O and the rest unchanged. Not a trained model."""
    cfg = lm.config
    n_kv = check_kv_count(n_kv_head, cfg.n_head)
    if cfg.n_kv_head != cfg.n_head:
        raise ValueError(f"{lm.name} already shares keys and values; pool a multi-head model such as kv-12.")
    D, d, g = cfg.n_embd, cfg.d_head, cfg.n_head // n_kv
    model = GPT(type(cfg)(**{**cfg.to_dict(), "n_kv_head": n_kv}))
    state = dict(lm.model.state_dict())
    for i in range(cfg.n_layer):
        key = f"h.{i}.attn.c_attn"
        W, b = state[f"{key}.weight"], state[f"{key}.bias"]  # (3D, D): rows [q | k | v]; (3D,)
        pool = lambda t: t.reshape(n_kv, g, d, *t.shape[1:]).mean(1).reshape(n_kv * d, *t.shape[1:])
        state[f"{key}.weight"] = torch.cat([W[:D], pool(W[D:2 * D]), pool(W[2 * D:])])
        state[f"{key}.bias"] = torch.cat([b[:D], pool(b[D:2 * D]), pool(b[2 * D:])])
    model.load_state_dict(state)
    return model.eval()


def measure_pooled(lm: LanguageModel, n_kv_head: int) -> dict[str, float]:
    """Held-out loss and list accuracy of lm mean-pooled to n_kv_head key/value heads, no training."""
    with one_thread():
        result = evaluate(pooled_model(lm, n_kv_head), lm.tokenizer)
    return {"held_out_loss": float(result["held_out_loss"]), "list_accuracy": float(result["accuracy_induction"])}


def pooled_results() -> dict[int, dict[str, float]]:
    """The pooled conversion of kv-12 for every KV count, as recorded beside the shipped file
    (`python -m helpers.train kv-12` writes them); measured live when nothing is recorded."""
    stored = recorded(POOL_SOURCE, "kv_pooled")
    return {n: stored[str(n)] if str(n) in stored else _live_pooled(n) for n in KV_COUNTS}


@cache
def _live_pooled(n_kv_head: int) -> dict[str, float]:
    return measure_pooled(load_kv_variant(N_QUERY_HEADS), n_kv_head)


def record_pooled_results(path: Path = DATA_DIR / f"{POOL_SOURCE}.safetensors") -> dict[str, dict]:
    """Measure the pooled conversions of the kv-12 file at path and write them into its manifest entry."""
    return record_measurements(POOL_SOURCE, "kv_pooled",
                               lambda lm: {str(n): measure_pooled(lm, n) for n in KV_COUNTS}, path)


# --- mean pooling on any multi-head model: a paragraph's loss and how far each head's map moves -------------
def pool_source(model: str = "classroom") -> LanguageModel:
    """Section 5's trained multi-head model: kv-12 for "classroom", GPT-2 small for "gpt2" (without its
    files: pick_model's one line, then kv-12)."""
    if model not in ("classroom", "gpt2"):
        raise ValueError(f"MODEL={model!r} has no pooling experiment; use 'classroom' (kv-12) or 'gpt2' (GPT-2 small).")
    if model == "gpt2":
        return pick_model("gpt2", fallback=POOL_SOURCE, load=_load)  # offline: one line, then kv-12 (loaded once)
    return load_kv_variant(N_QUERY_HEADS)


def text_loss(lm: LanguageModel, text: str) -> tuple[float, int]:
    """Mean next-token loss (nats) of lm reading text, from one forward pass, and the tokens it read."""
    run = run_sentence(lm, text)
    return F.cross_entropy(run.logits[:-1], torch.tensor(run.ids[1:])).item(), len(run.ids)


def pooling_on_text(lm: LanguageModel, text: str = POOL_TEXT, sentence: str = POOL_SENTENCE) -> dict[int, dict]:
    """lm mean-pooled, without training, to every key/value-head count that divides its heads. Per count:
    "loss" on text (and its "tokens"), and "map_change" (L, H): how far each head's map of sentence moved,
    map_moved per query row, averaged over every row but the first (0 = unchanged)."""
    before, n_head, out = run_sentence(lm, sentence).attentions, lm.config.n_head, {}  # (L, H, T, T)
    for n in (k for k in range(1, n_head + 1) if n_head % k == 0):
        pooled = LanguageModel(f"{lm.name} pooled to {n}", pooled_model(lm, n), lm.tokenizer, lm.info, lm.bos)
        change = map_moved(before[..., 1:, :], run_sentence(pooled, sentence).attentions[..., 1:, :]).mean(-1)
        loss, tokens = text_loss(pooled, text)
        out[n] = {"loss": loss, "tokens": tokens, "map_change": change, "mean_change": change.mean().item()}
    return out


def pooling_table(results: dict[int, dict], name: str = "gpt2") -> str:
    """pooling_on_text as lines: loss, its rise over the unpooled model, and the mean and largest map change."""
    full = max(results)
    lines = [(f"{name} mean-pooled, NOT retrained: loss on the paragraph ({results[full]['tokens']} tokens), and how "
              f"far each head's map of the sentence moved (0 = same, 1 = nothing in common)")]
    for n in sorted(results, reverse=True):
        r, change = results[n], results[n]["map_change"]
        layer, head = divmod(int(change.argmax()), change.shape[1])
        moved = "every map as before" if n == full else \
            f"maps moved {r['mean_change']:.2f} on average, most L{layer} H{head} {change.max():.2f}"
        lines.append(f"{n:>3} key/value head{'s' if n > 1 else ' '}: loss {r['loss']:.3f} "
                     f"({r['loss'] - results[full]['loss']:+.3f})   {moved}")
    return "\n".join(lines)
