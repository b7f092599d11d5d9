"""The KV cache of published models, from the numbers in their config.json files (notebook 07 §1).

Generating text keeps every earlier token's keys and values: per token, 2 (a key and a value) ×
layers × key/value heads × head size × bytes per number. Arithmetic only: no model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.arguments import whole_number

CONTEXT = 8_000  # tokens: "what that means for an 8,000-token context"
KIB, GIB = 1024, 1024 ** 3


@dataclass(frozen=True)
class PublishedConfig:
    """The numbers of a published config.json that decide the KV cache."""

    name: str
    source: str  # the Hugging Face repository whose config.json gives these numbers
    n_layer: int  # num_hidden_layers (n_layer for GPT-2)
    n_head: int  # num_attention_heads (n_head)
    n_kv_head: int  # num_key_value_heads (absent for GPT-2 and Llama 2 7B's older files: = n_head)
    d_head: int  # head_dim, or hidden_size / num_attention_heads


PUBLISHED = (
    PublishedConfig("GPT-2 small", "openai-community/gpt2", n_layer=12, n_head=12, n_kv_head=12, d_head=768 // 12),
    PublishedConfig("Llama 2 7B", "meta-llama/Llama-2-7b-hf", n_layer=32, n_head=32, n_kv_head=32, d_head=4096 // 32),
    PublishedConfig("Llama 2 70B", "meta-llama/Llama-2-70b-hf", n_layer=80, n_head=64, n_kv_head=8, d_head=8192 // 64),
    PublishedConfig("Llama 3 8B", "meta-llama/Meta-Llama-3-8B", n_layer=32, n_head=32, n_kv_head=8, d_head=4096 // 32),
    PublishedConfig("Mistral 7B", "mistralai/Mistral-7B-v0.1", n_layer=32, n_head=32, n_kv_head=8, d_head=4096 // 32),
    PublishedConfig("Qwen2-7B", "Qwen/Qwen2-7B", n_layer=28, n_head=28, n_kv_head=4, d_head=3584 // 28),
    PublishedConfig("Gemma 2B", "google/gemma-2b", n_layer=18, n_head=8, n_kv_head=1, d_head=256),  # head_dim: 256
)


def kv_cache_bytes_per_token(n_layer: int, n_kv_head: int, d_head: int, bytes_per_number: int = 2) -> int:
    """2 (a key and a value) × layers × key/value heads × head size × bytes per number."""
    n_layer, n_kv_head = whole_number(n_layer, "n_layer", low=1), whole_number(n_kv_head, "n_kv_head", low=1)
    d_head = whole_number(d_head, "d_head", low=1)
    size = whole_number(bytes_per_number, "bytes_per_number", low=1, valid="2 for 16-bit numbers, 4 for 32-bit")
    return 2 * n_layer * n_kv_head * d_head * size


def kv_cache_table(context: int = CONTEXT, bytes_per_number: int = 2) -> list[dict]:
    """One row per published model: its heads, cache per token, and the cache of a `context`-token text."""
    context = whole_number(context, "context", low=1, valid="a context length in tokens, e.g. 8000")
    rows = []
    for c in PUBLISHED:
        per_token = kv_cache_bytes_per_token(c.n_layer, c.n_kv_head, c.d_head, bytes_per_number)
        rows.append({"model": c.name, "source": c.source, "layers": c.n_layer, "query heads": c.n_head,
                     "kv heads": c.n_kv_head, "head size": c.d_head, "group size": c.n_head // c.n_kv_head,
                     "bytes per token": per_token, "KiB per token": per_token / KIB,
                     "GiB per context": per_token * context / GIB})
    return rows


def describe_kv_cache_table(context: int = CONTEXT) -> str:
    """kv_cache_table as aligned text lines, for printing."""
    lines = [f"{'model':<12}{'layers':>7}{'query':>7}{'kv':>5}{'head':>6}{'KiB/token':>11}"
             f"{f'GiB for {context:,} tokens':>24}"]
    for r in kv_cache_table(context):
        lines.append(f"{r['model']:<12}{r['layers']:>7}{r['query heads']:>7}{r['kv heads']:>5}{r['head size']:>6}"
                     f"{r['KiB per token']:>11g}{r['GiB per context']:>24.2f}")
    return "\n".join(lines)
