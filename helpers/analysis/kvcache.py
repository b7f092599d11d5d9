"""The KV cache of published models, from the numbers in their config.json files (notebook 07 §1).

Generating text keeps every earlier token's keys and values: per token, 2 (a key and a value) ×
layers × key/value heads × head size × bytes per number. Arithmetic only: no model is loaded.

Reading the sizes from a config.json: head size = hidden_size // num_attention_heads in most configs,
with two exceptions a reader meets at once: a config may give its own `head_dim` (Gemma 7B: hidden_size
3072, 16 heads, head_dim 256, not 3072 // 16 = 192), and GPT-2's config.json names its sizes n_layer,
n_head, n_embd and has no num_key_value_heads (every head keeps its own keys and values).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.arguments import whole_number

CONTEXT = 8_000  # tokens: "what that means for an 8,000-token context"
MAX_CONTEXT = 10 ** 12  # far past any model's context, and small enough that bytes / GiB stays a float
KIB, GIB = 1024, 1024 ** 3


@dataclass(frozen=True)
class PublishedConfig:
    """The numbers of a published config.json that decide the KV cache."""

    name: str
    source: str  # the Hugging Face repository whose config.json gives these numbers
    n_layer: int  # num_hidden_layers (n_layer for GPT-2)
    n_head: int  # num_attention_heads (n_head)
    n_kv_head: int  # num_key_value_heads (absent for GPT-2 and Llama 2 7B's older files: = n_head)
    d_head: int  # head_dim when the config has one (Gemma), else hidden_size // num_attention_heads
    n_ctx: int  # the longest input it reads: max_position_embeddings (n_positions for GPT-2)
    window: int | None = None  # sliding_window: each layer attends only to the last `window` tokens


PUBLISHED = (
    PublishedConfig("GPT-2 small", "openai-community/gpt2", n_layer=12, n_head=12, n_kv_head=12, d_head=768 // 12,
                    n_ctx=1024),
    PublishedConfig("Llama 2 7B", "meta-llama/Llama-2-7b-hf", n_layer=32, n_head=32, n_kv_head=32, d_head=4096 // 32,
                    n_ctx=4096),
    PublishedConfig("Llama 2 70B", "meta-llama/Llama-2-70b-hf", n_layer=80, n_head=64, n_kv_head=8, d_head=8192 // 64,
                    n_ctx=4096),
    PublishedConfig("Llama 3 8B", "meta-llama/Meta-Llama-3-8B", n_layer=32, n_head=32, n_kv_head=8, d_head=4096 // 32,
                    n_ctx=8192),
    PublishedConfig("Mistral 7B", "mistralai/Mistral-7B-v0.1", n_layer=32, n_head=32, n_kv_head=8, d_head=4096 // 32,
                    n_ctx=32768, window=4096),
    PublishedConfig("Qwen2-7B", "Qwen/Qwen2-7B", n_layer=28, n_head=28, n_kv_head=4, d_head=3584 // 28,
                    n_ctx=131072),  # its sliding_window is switched off (use_sliding_window: false)
    PublishedConfig("Gemma 2B", "google/gemma-2b", n_layer=18, n_head=8, n_kv_head=1, d_head=256,  # head_dim: 256
                    n_ctx=8192),
)


def kv_cache_bytes_per_token(n_layer: int, n_kv_head: int, d_head: int, bytes_per_number: int = 2) -> int:
    """2 (a key and a value) × layers × key/value heads × head size × bytes per number."""
    n_layer, n_kv_head = whole_number(n_layer, "n_layer", low=1), whole_number(n_kv_head, "n_kv_head", low=1)
    d_head = whole_number(d_head, "d_head", low=1)
    size = whole_number(bytes_per_number, "bytes_per_number", low=1, valid="2 for 16-bit numbers, 4 for 32-bit")
    return 2 * n_layer * n_kv_head * d_head * size


def kv_cache_rows(context: int = CONTEXT, bytes_per_number: int = 2) -> list[dict]:
    """One row per published model: its heads, cache per token, and the cache of a `context`-token text."""
    context = check_context(context)
    rows = []
    for c in PUBLISHED:
        per_token = kv_cache_bytes_per_token(c.n_layer, c.n_kv_head, c.d_head, bytes_per_number)
        kept = min(c.n_ctx, c.window or c.n_ctx)  # a sliding window lets the cache drop older tokens
        rows.append({"model": c.name, "source": c.source, "layers": c.n_layer, "query heads": c.n_head,
                     "kv heads": c.n_kv_head, "head size": c.d_head, "group size": c.n_head // c.n_kv_head,
                     "bytes per token": per_token, "KiB per token": per_token / KIB,
                     "GiB per context": per_token * context / GIB, "context length": c.n_ctx,
                     "sliding window": c.window, "tokens kept at most": kept, "GiB at most": per_token * kept / GIB})
    return rows


def check_context(context) -> int:
    """A context length in tokens as a plain int, 1..MAX_CONTEXT, or a one-line ValueError."""
    return whole_number(context, "context", low=1, high=MAX_CONTEXT,
                        valid=f"a context length in tokens from 1 to {MAX_CONTEXT:,}, e.g. 8000")


def kv_cache_table(context: int = CONTEXT) -> str:
    """kv_cache_rows as aligned text lines, for printing; each model's own context length beside the
    `context`-token column, marked where that is more than the model reads or than its sliding window."""
    context = check_context(context)  # before the header formats it
    lines = [f"{'model':<12}{'layers':>7}{'query':>7}{'kv':>5}{'head':>6}{'KiB/token':>11}"
             f"{f'GiB for {context:,} tokens':>24} {'reads at most':>14}{'GiB at most':>13}"]
    notes = {}
    for r in kv_cache_rows(context):
        mark = "*" if context > r["context length"] else "†" if context > r["tokens kept at most"] else " "
        if mark == "*":
            notes["*"] = "* more than it reads: its cache stops at its own context length (GiB at most)"
        elif mark == "†":
            notes[r["model"]] = (f"† {r['model']}: sliding window of {r['sliding window']:,} tokens; each layer "
                                 f"reads only the last {r['sliding window']:,}, so its cache can drop older ones")
        lines.append(f"{r['model']:<12}{r['layers']:>7}{r['query heads']:>7}{r['kv heads']:>5}{r['head size']:>6}"
                     f"{r['KiB per token']:>11g}{r['GiB per context']:>24.2f}{mark}{r['context length']:>14,}"
                     f"{r['GiB at most']:>13.2f}")
    return "\n".join(lines + list(notes.values()))


# --- the sizes a config.json gives ------------------------------------------------------
FIELDS = {  # our name: (the Hugging Face name most configs use, GPT-2's name)
    "layers": ("num_hidden_layers", "n_layer"),
    "query heads": ("num_attention_heads", "n_head"),
    "width": ("hidden_size", "n_embd"),
}
EXAMPLES = {  # numbers as their config.json files give them (only the fields read here)
    "Mistral 7B": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096},
    "Gemma 7B": {"num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16, "hidden_size": 3072,
                 "head_dim": 256},  # google/gemma-7b
    "GPT-2 small": {"n_layer": 12, "n_head": 12, "n_embd": 768},  # openai-community/gpt2
}


def config_size(config: dict, field: str) -> int:
    """One of FIELDS from a config dict, under its Hugging Face name or GPT-2's."""
    for key in FIELDS[field]:
        if config.get(key) is not None:
            return whole_number(config[key], key, low=1)
    raise ValueError(f"the config has no {' or '.join(FIELDS[field])}; pass the numbers of a config.json.")


def head_size(config: dict) -> int:
    """Numbers per head: the config's own head_dim when it has one, else width // query heads."""
    if config.get("head_dim") is not None:
        return whole_number(config["head_dim"], "head_dim", low=1)
    return config_size(config, "width") // config_size(config, "query heads")


def kv_heads(config: dict) -> int:
    """num_key_value_heads, or the query heads when the config has none (GPT-2: every head its own)."""
    if config.get("num_key_value_heads") is not None:
        return whole_number(config["num_key_value_heads"], "num_key_value_heads", low=1)
    return config_size(config, "query heads")


def field_name(config: dict, field: str) -> str:
    """The name a config gives one of FIELDS: the Hugging Face name, or GPT-2's."""
    return next((key for key in FIELDS[field] if key in config), FIELDS[field][0])


def head_sizes_table(examples: dict[str, dict] = EXAMPLES) -> str:
    """One line per config: the rule width // heads, the head size the config really has, its key/value heads."""
    lines = []
    for name, config in examples.items():
        width, heads = field_name(config, "width"), field_name(config, "query heads")
        rule, size = config[width] // config[heads], head_size(config)
        but = f", but its config sets head_dim {size}" if size != rule else ""
        kv = f"key/value heads {kv_heads(config)}" if "num_key_value_heads" in config else \
            f"no num_key_value_heads, so key/value heads {kv_heads(config)}"
        lines.append(f"{name:<12} {width} {config[width]} // {heads} {config[heads]} = {rule}{but}: "
                     f"head size {size}; {kv}")
    return "\n".join(lines)
