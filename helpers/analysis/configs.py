"""The sizes that decide attention and its KV cache, read from a published config.json (notebook 07 §1).

The rule most configs follow: head size = hidden_size // num_attention_heads. Two exceptions a reader
meets at once: a config may give its own `head_dim` (Gemma 7B: hidden_size 3072, 16 heads, head_dim 256,
not 3072 // 16 = 192), and GPT-2's config.json names its sizes n_layer, n_head, n_embd and has no
num_key_value_heads (every head keeps its own keys and values).
"""

from __future__ import annotations

from ..core.arguments import whole_number

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
