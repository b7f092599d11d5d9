"""Checks of notebook 07: (a) the KV cache of a model from its config, (b) grouped-query attention.

Both run the one verdict engine (grading.py): each catalogued slip is a small wrong variant of the
reference, run on the same inputs, and an answer that matches one is named with its fix. Each
check tries two or more inputs of different sizes, so a number tuned to one input fails.
"""

from __future__ import annotations

import itertools
import math
import numbers

import numpy as np
import torch

from ..analysis.kvcache import kv_cache_bytes_per_token
from ..core.arguments import is_whole_number
from .attention_checks import future_mask
from .grading import check
from .verdict import Exercise, Mistake as M, Verdict

# Config numbers as their config.json files give them (see analysis/kvcache.PUBLISHED for the sources).
MISTRAL_7B = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}
QWEN2_7B = {"num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_size": 3584}
KV_3 = {"num_hidden_layers": 2, "num_attention_heads": 12, "num_key_value_heads": 3, "hidden_size": 96}  # kv-3


# --- (a) the KV cache of a model at a context length ----------------------------------------------------
def _parts(c: dict) -> tuple[int, int, int, int, int]:
    """layers, query heads, key/value heads, head size, width."""
    L, H, Hkv, D = (c[k] for k in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size"))
    return L, H, Hkv, D // H, D


def kv_cache_reference(config: dict, n_tokens: int) -> int:
    """Bytes of keys and values kept for n_tokens tokens, 16-bit numbers."""
    L, _, Hkv, d, _ = _parts(config)
    return kv_cache_bytes_per_token(L, Hkv, d, 2) * n_tokens


def _cache(L, Hkv, d, n, size=2, kv=2) -> float:
    return kv * L * Hkv * d * size * n


def _read_number(got, args):
    """The answer as an int (a whole number of any integer type, a 0-d tensor) or a float, kept apart: bytes
    are a whole number, and a float that is right is refused with its own line (as in notebook 04)."""
    if isinstance(got, (torch.Tensor, np.ndarray)) and got.ndim == 0:
        got = got.item()
    if is_whole_number(got):
        return int(got), None
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        return None, f"expected one number of bytes, e.g. 1073741824, got {type(got).__name__} {got!r:.40}."
    try:
        value = float(got)
    except OverflowError:  # an int past 1.8e308: no cache is that big
        return None, "that number is too big to be bytes of any cache (past 10^308); multiply the sizes in config."
    return (None, f"the cache is {value}: write a number of bytes, e.g. 1073741824.") if not math.isfinite(value) \
        else (value, None)


def _same_number(a, b, args) -> bool:
    try:
        return abs(a - b) <= 1e-9 * max(abs(b), 1.0)  # relative: GiB and GB answers are both about 1
    except OverflowError:  # an answer past a float's range is no byte count (the tests hand in 10**400)
        return False


def _cache_explain(value, expected, args) -> tuple:
    if isinstance(value, float) and _same_number(value, expected, args):
        return (f"the number is right, only its type is not: {value!r} is a float (a size computed with /, e.g. "
                f"hidden_size / num_attention_heads gives 128.0); use whole-number division, hidden_size // "
                f"num_attention_heads, so the bytes are a whole number."), True, "float_size"
    return _ratio_line(value, expected, args)


def _ratio_line(value, expected, args) -> tuple[str, bool]:
    """What the answer is as a multiple of the right one, with the formula (named by the catalogue if anything)."""
    formula = ("bytes = 2 (key and value) × num_hidden_layers × num_key_value_heads × head size (hidden_size // "
               "num_attention_heads) × 2 bytes × n_tokens")
    try:
        r = value / expected if expected else 0.0
    except OverflowError:  # an int past a float's range: say its size, not a ratio
        return f"your answer is far too big ({len(str(abs(value)))} digits) where {expected:,} is right: {formula}.", False
    if not 1e-3 < abs(r) < 1e3:
        return f"your answer is {value:,g} bytes where {expected:,} is right: {formula}.", False
    if f"{r:.4g}" == "1":  # 8001 / 8000 read "1 × the right one", as if right (sweep 31): the difference, in tokens
        n = args[1] if len(args) > 1 and isinstance(args[1], int) and args[1] > 0 else 0
        per_token = expected // n if n else 0
        tokens = (value - expected) / per_token if per_token else 0
        said = (f" (the bytes of {abs(tokens):g} token{'s' * (abs(tokens) != 1)} {'too many' if tokens > 0 else 'too few'}"
                f": count n_tokens exactly)" if tokens and float(tokens).is_integer() else "")
        shown = f"{value:,}" if isinstance(value, int) else f"{value:,.6g}"
        return f"your answer is {shown} bytes where {expected:,} is right{said}: {formula}.", False
    return f"your answer is {r:.4g} × the right one on this model: {formula}.", False


def _cache_mistakes():
    f = _parts
    return [
        M("that is the cache of full multi-head attention: keys and values are kept per key/value head, so use "
          "num_key_value_heads × head size (head size = hidden_size // num_attention_heads).",
          lambda c, n: _cache(f(c)[0], f(c)[1], f(c)[3], n), code="full_multi_head"),
        M("that is half the answer: the cache keeps a key AND a value per head (× 2), and each 16-bit number "
          "takes 2 bytes (× 2 again); one of the two factors is missing.",
          lambda c, n: _cache(f(c)[0], f(c)[2], f(c)[3], n, kv=1), code="missing_factor_2"),
        M("that is one layer's cache: every layer keeps its own keys and values, so multiply by num_hidden_layers.",
          lambda c, n: _cache(1, f(c)[2], f(c)[3], n), code="one_layer"),
        M("you used hidden_size as the head size: each head holds hidden_size // num_attention_heads numbers.",
          lambda c, n: _cache(f(c)[0], f(c)[2], f(c)[4], n), code="width_as_head_size"),
        M("you left out the head size: each key/value head keeps head size numbers per token "
          "(hidden_size // num_attention_heads).", lambda c, n: _cache(f(c)[0], f(c)[2], 1, n), code="no_head_size"),
        M("that is 32-bit numbers (4 bytes): the exercise asks for 16-bit numbers, 2 bytes each.",
          lambda c, n: _cache(f(c)[0], f(c)[2], f(c)[3], n, size=4), code="float32"),
        M("that counts bits: a 16-bit number is 2 bytes, so multiply by 2, not 16.",
          lambda c, n: _cache(f(c)[0], f(c)[2], f(c)[3], n, size=16), code="bits"),
        M("that is the cache of one token: multiply by n_tokens, every earlier token keeps its keys and values.",
          lambda c, n: _cache(f(c)[0], f(c)[2], f(c)[3], 1), code="one_token"),
        M("that is in KiB: return bytes (do not divide by 1024).", lambda c, n: kv_cache_reference(c, n) / 1024,
          code="kib"),
        M("that is in MiB: return bytes (do not divide by 1024²).", lambda c, n: kv_cache_reference(c, n) / 1024 ** 2,
          code="mib"),
        M("that is in GiB: return bytes (do not divide by 1024³).", lambda c, n: kv_cache_reference(c, n) / 1024 ** 3,
          code="gib"),
        M("that is in kB (÷ 1000): return bytes.", lambda c, n: kv_cache_reference(c, n) / 1000, code="kb"),
        M("that is in GB (÷ 1000³): return bytes.", lambda c, n: kv_cache_reference(c, n) / 1000 ** 3, code="gb"),
        M("that also counts queries: only keys and values are kept (a new token's query is used once).",
          lambda c, n: _cache(f(c)[0], f(c)[2], f(c)[3], n, kv=3), code="with_queries"),
        M("you used the query heads and the key/value heads together: the cache holds key/value heads only.",
          lambda c, n: _cache(f(c)[0], f(c)[1] + f(c)[2], f(c)[3], n), code="query_and_kv_heads"),
        M("that is n_tokens − 1 tokens: every token, the newest too, keeps its key and value in the cache.",
          lambda c, n: _cache(f(c)[0], f(c)[2], f(c)[3], n - 1), code="one_token_short"),
        M("two slips at once: no layers (every layer keeps its own cache: × num_hidden_layers) and no bytes per "
          "number (each 16-bit number takes 2 bytes).", lambda c, n: _cache(1, f(c)[2], f(c)[3], n, size=1),
          code="two_slips.one_layer+no_bytes"),
        M("those are GPT-2 small's numbers (12 layers, 12 heads of 64): read every size from config.",
          lambda c, n: _cache(12, 12, 64, n), code="gpt2_numbers"),
        M("two slips at once: the attention heads instead of the key/value heads (use num_key_value_heads), and "
          "one of the two factors 2 missing (a key AND a value, 2 bytes each).",
          lambda c, n: _cache(f(c)[0], f(c)[1], f(c)[3], n, kv=1), code="two_slips.full_multi_head+missing_factor_2"),
    ]


_SIZES = (("layers", "num_hidden_layers", 0), ("heads", "num_attention_heads", 1), ("kv_heads", "num_key_value_heads", 2),
          ("head_size", "the head size", 3), ("hidden", "hidden_size", 4), ("tokens", "n_tokens", None))
_CATALOGUED = {("heads", "kv_heads"), ("1", "layers"), ("hidden", "head_size"), ("1", "head_size"), ("1", "tokens")}


def _size(c: dict, n: int, i) -> int:
    return n if i is None else _parts(c)[i]


def _factor_slips() -> list[M]:
    """One size where another belongs, or a size extra or missing: the answer is the right one × a / b. Like every
    catalogued slip, one is named only when it explains the answer on every model (a ratio that fits one model
    by chance, 4096 / 8000 as hidden_size / n_tokens, fits no other)."""
    sizes = (("1", "1", "one"), *_SIZES)
    out = []
    for (a, a_name, i), (b, b_name, j) in itertools.permutations(sizes, 2):
        if (a, b) in _CATALOGUED or a == b:
            continue
        says = (f"a factor {b_name} is missing" if a == "1" else f"an extra factor {a_name}" if b == "1"
                else f"you used {a_name} where {b_name} belongs")
        ratio = (lambda c, n, i=i: 1) if a == "1" else (lambda c, n, i=i: _size(c, n, i))
        under = (lambda c, n, j=j: 1) if b == "1" else (lambda c, n, j=j: _size(c, n, j))
        code = f"missing_{b}" if a == "1" else f"extra_{a}" if b == "1" else f"{a}_for_{b}"
        out.append(M(f"{says}: bytes = 2 (key and value) × num_hidden_layers × num_key_value_heads × head size "
                     f"(hidden_size // num_attention_heads) × 2 bytes × n_tokens.",
                     lambda c, n, r=ratio, u=under: kv_cache_reference(c, n) * r(c, n) / u(c, n), code=code))
    return out


KV_CACHE = Exercise(
    "kv_cache_bytes", [("Mistral 7B, 8,000 tokens", (MISTRAL_7B, 8000)), ("Qwen2-7B, 32,768 tokens", (QWEN2_7B, 32768)),
                       ("kv-3, 64 tokens", (KV_3, 64))],
    kv_cache_reference, _cache_mistakes() + _factor_slips(), read=_read_number, same=_same_number,
    right=lambda a, b, args: not isinstance(a, float) and _same_number(a, b, args),  # bytes: whole, never a float
    explain=_cache_explain,
    tensor=False, exact_inputs=True, sizes="L = config['num_hidden_layers'] …",
    fixed="a number is fixed to the first model: read every size from config and multiply by n_tokens.")


def check_kv_cache(fn) -> Verdict:
    """Exercise (a): fn(config, n_tokens) -> bytes of keys and values kept, 16-bit numbers."""
    return check(KV_CACHE, fn)


# --- (b) grouped-query attention ----------------------------------------------------------------------------
def _attend(Q, K, V, scale=None, mask=1, dim=-1, after=False, where=None, fill=float("-inf")):
    """Q, K, V (H, T, d) -> (H, T, d): masked softmax(Q·Kᵀ·scale)·V (after: the mask zeroes the weights)."""
    T, d = Q.shape[-2:]
    scores = Q @ K.transpose(-2, -1) * (1 / math.sqrt(d) if scale is None else scale)
    hide = (future_mask(T, mask) if where is None else where(T)) if mask is not None else None
    if hide is not None and not after:
        scores = scores.masked_fill(hide, fill)
    weights = scores.softmax(dim)
    return (weights.masked_fill(hide, 0.0) if after else weights) @ V


def grouped_reference(Q, K, V):
    """Q (n_heads, T, d), K and V (n_kv_heads, T, d) -> (n_heads, T, d): query head h reads key/value head h // (n_heads // n_kv_heads)."""
    g = Q.shape[0] // K.shape[0]
    return _attend(Q, K.repeat_interleave(g, 0), V.repeat_interleave(g, 0))


def _g(Q, K) -> int:
    return Q.shape[0] // K.shape[0]


def _interleaved(t, Q):
    return t.repeat_interleave(_g(Q, t), 0)


def _grouped_mistakes():
    ri = _interleaved
    return [
        M("groups repeated instead of interleaved: with .repeat, query head h reads key/value head h % n_kv_heads; "
          "neighbouring query heads share one, so use K.repeat_interleave(n_heads // n_kv_heads, dim=0) (and the same for V).",
          lambda Q, K, V: _attend(Q, K.repeat(_g(Q, K), 1, 1), V.repeat(_g(Q, K), 1, 1)), code="repeat_not_interleave"),
        M("query head h read key/value head h // n_kv_heads: the group size is n_heads // n_kv_heads, so head h reads h // (n_heads // n_kv_heads).",
          lambda Q, K, V: _attend(Q, K[torch.arange(Q.shape[0]) // K.shape[0]], V[torch.arange(Q.shape[0]) // K.shape[0]]),
          code="wrong_group_index"),
        M("the queries were shared instead of the keys: every query head keeps its own query; only keys and "
          "values are shared within a group.",
          lambda Q, K, V: _attend(Q[::_g(Q, K)].repeat_interleave(_g(Q, K), 0), ri(K, Q), ri(V, Q)),
          code="queries_shared"),
        M("the queries of each group were averaged into one: keep all n_heads query heads (the output has n_heads heads); "
          "only keys and values are shared.",
          lambda Q, K, V: _attend(Q.reshape(K.shape[0], _g(Q, K), *Q.shape[1:]).mean(1), K, V),
          code="queries_averaged"),
        M("no causal mask: a word may not look at later words; fill the scores above the diagonal with -inf "
          "before the softmax.", lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), mask=None), code="no_mask"),
        M("the mask also hid the diagonal: use .triu(1), so each word may look at itself and earlier words.",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), mask=0), code="masked_diagonal"),
        M("forgot the 1/√d scaling: divide the scores by √d (d = Q.shape[-1]) before the softmax.",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), scale=1.0), code="no_scale"),
        M("mask applied after the softmax: the rows no longer sum to 1; put -inf in the scores, then take the softmax.",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), after=True), code="masked_after_softmax"),
        M("masked the wrong triangle: hide the later words (above the diagonal, .triu(1)), not the earlier ones.",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), where=lambda T: future_mask(T).T), code="wrong_triangle"),
        M("masked the wrong triangle and the diagonal (.tril()): hide only the later words, .triu(1).",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), where=lambda T: future_mask(T, 0).T), code="tril_mask"),
        M("mask filled with 0 instead of -inf: e⁰ = 1, so later words still get weight; use float('-inf').",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), fill=0.0), code="fill_zero"),
        M("divided by d instead of √d: scale the scores by 1/√d.",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), scale=1 / Q.shape[-1]), code="divided_by_d"),
        M("scaled by the whole width √(n_heads·d): each head scales by its own size, 1/√d with d = Q.shape[-1].",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), scale=1 / math.sqrt(Q.shape[0] * Q.shape[-1])),
          code="scaled_by_width"),
        M("scaled by the head count √n_heads: each head scales by its own size, 1/√d with d = Q.shape[-1].",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), scale=1 / math.sqrt(Q.shape[0])), code="sqrt_of_heads"),
        M("softmax over the wrong axis: use dim=-1, so each query's row (over the keys) sums to 1.",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), dim=-2), code="softmax_axis"),
        M("the weights were applied to the keys: the output is weights @ V.",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(K, Q)), code="weights_on_keys"),
        M("that is the attention weights (n_heads, T, T): multiply them by the values, weights @ V.",
          lambda Q, K, V: _attend(Q, ri(K, Q), torch.eye(Q.shape[1], dtype=Q.dtype).expand(Q.shape[0], -1, -1)),
          code="returned_weights"),
        M("keys interleaved but values repeated: give V the same repeat_interleave as K.",
          lambda Q, K, V: _attend(Q, ri(K, Q), V.repeat(_g(Q, K), 1, 1)), code="values_repeated"),
        M("keys and values have fewer heads than the queries: give each query head its group's key/value head "
          "first, K.repeat_interleave(n_heads // n_kv_heads, dim=0) (and V).", lambda Q, K, V: _attend(Q, K, V),
          code="not_expanded"),
        M("repeat_interleave by the number of key/value heads (K.shape[0]): repeat each by the group size, "
          "n_heads // n_kv_heads = Q.shape[0] // K.shape[0].",
          lambda Q, K, V: _attend(Q, K.repeat_interleave(K.shape[0], 0), V.repeat_interleave(K.shape[0], 0)),
          code="repeat_by_kv_heads"),
        M("every query head read key/value head 0: query head h reads head h // (n_heads // n_kv_heads), its group's.",
          lambda Q, K, V: _attend(Q, K[:1].expand_as(Q), V[:1].expand_as(Q)), code="all_read_head_0"),
        M("the key/value heads were averaged into one: each group keeps its own key/value head; give query head h "
          "head h // (n_heads // n_kv_heads) with repeat_interleave.",
          lambda Q, K, V: _attend(Q, K.mean(0, keepdim=True).expand_as(Q), V.mean(0, keepdim=True).expand_as(Q)),
          code="kv_heads_averaged"),
        M("divided by √T (the number of words): the scale is 1/√d, d = Q.shape[-1].",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), scale=1 / math.sqrt(Q.shape[1])), code="sqrt_of_T"),
        M("averaged the outputs of each group: every query head keeps its own output, [n_heads × T × d].",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q)).reshape(K.shape[0], _g(Q, K), *Q.shape[1:]).mean(1),
          code="group_outputs_averaged"),
        M("two slips at once: no 1/√d scaling (divide the scores by √d), and .repeat instead of repeat_interleave "
          "(neighbouring query heads share a key/value head).",
          lambda Q, K, V: _attend(Q, K.repeat(_g(Q, K), 1, 1), V.repeat(_g(Q, K), 1, 1), scale=1.0),
          code="two_slips.no_scale+repeat_not_interleave"),
        M("two slips at once: .repeat (or torch.tile) instead of repeat_interleave (neighbouring query heads share a "
          "key/value head), and no causal mask (fill the scores above the diagonal with -inf).",
          lambda Q, K, V: _attend(Q, K.repeat(_g(Q, K), 1, 1), V.repeat(_g(Q, K), 1, 1), mask=None),
          code="two_slips.repeat_not_interleave+no_mask"),
        M("two slips at once: no causal mask (fill the scores above the diagonal with -inf), and no 1/√d scaling "
          "(divide the scores by √d).", lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), mask=None, scale=1.0),
          code="two_slips.no_mask+no_scale"),
        M("divided by a fixed 8: take the head size from the input, d = Q.shape[-1], and divide by √d.", lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q), scale=1 / 8),
          code="fixed_scale_8"),
        M("the heads come out in reverse order: keep head h at position h (no flip or [::-1] on the heads).",
          lambda Q, K, V: _attend(Q, ri(K, Q), ri(V, Q)).flip(0), code="heads_reversed"),
        M("two slips at once: every query head read key/value head 0 (head h reads h // (n_heads // n_kv_heads)), and no causal "
          "mask (fill the scores above the diagonal with -inf).",
          lambda Q, K, V: _attend(Q, K[:1].expand_as(Q), V[:1].expand_as(Q), mask=None),
          code="two_slips.all_read_head_0+no_mask"),
    ]


def _grouped_case(H: int, Hkv: int, T: int, d: int, seed: int) -> tuple[str, tuple]:
    g = torch.Generator().manual_seed(seed)
    Q, K, V = (torch.randn(h, T, d, generator=g) * 1.5 for h in (H, Hkv, Hkv))
    return f"Q [{H} × {T} × {d}], K, V [{Hkv} × {T} × {d}]", (Q, K, V)


GROUPED_ATTENTION = Exercise(
    "grouped_attention", [_grouped_case(12, 3, 5, 4, 71), _grouped_case(8, 4, 7, 6, 72)],
    grouped_reference, _grouped_mistakes(),
    shape_hint="One output per query head: [n_heads × T × d], like Q.", sizes="n_heads, T, d = Q.shape; n_kv_heads = K.shape[0]")


def check_grouped_attention(fn) -> Verdict:
    """Exercise (b): fn(Q (H, T, d), K (H_kv, T, d), V (H_kv, T, d)) -> (H, T, d), causal, scaled by 1/√d."""
    return check(GROUPED_ATTENTION, fn)

