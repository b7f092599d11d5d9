"""Trained variants compared across training seeds: a result is a distribution, not one run.

One trained model is one draw. Notebooks 04 and 07 compare variants (head counts, key/value heads),
so each variant's recipe is trained on SEEDS seeds (`python -m helpers.train kv-3 --seeds 5`); the
numbers of every seed are recorded under "seeds" in its data/models.json line (the weights of the
recipe's own seed are the shipped file; the other seeds keep only their numbers, so data/ stays
small). A comparison is then stated only as far as the seeds agree:
- `spread(name, key)`: every seed's value, the lowest, the highest and the mean;
- `compare(a, b, key)`: does a beat b in every pair of runs, on average only, or not at all.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

import torch

from ..core.catalog import MANIFEST, manifest, recorded, write_manifest
from ..core.model import LanguageModel
from .listloss import loss_on_list_words

SEEDS = 5  # runs per recipe: the recipe's own seed and the next four
KEYS = ("held_out_loss", "list_accuracy", "list_loss", "other_loss")
HIGHER_IS_BETTER = {"held_out_loss": False, "list_accuracy": True, "list_loss": False, "other_loss": False}


def seeds_of(first: int, n: int = SEEDS) -> list[int]:
    """The seeds a recipe is trained on: its own seed and the next n - 1."""
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 50:
        raise ValueError(f"--seeds {n!r}: give a whole number of runs from 1 to 50, e.g. --seeds 5.")
    return list(range(first, first + n))


def seed_numbers(lm: LanguageModel, info: dict) -> dict:
    """What a seed's run records: the held-out loss and list accuracy of training's own evaluation, the
    loss split into list words and the others, and the CPU kernels that computed it (another kind of
    CPU sums in another order, and ends elsewhere: data/README.md)."""
    split = loss_on_list_words(lm)
    return {"held_out_loss": info["held_out_loss"], "list_accuracy": info["accuracy_induction"],
            "list_loss": round(split["list_loss"], 4), "other_loss": round(split["other_loss"], 4),
            "cpu": torch.backends.cpu.get_cpu_capability(), "cpu_kind": cpu_kind(),
            "torch": torch.__version__.split("+")[0]}


def cpu_kind(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU, as far as it decides the order of a float sum: its maker, family and model, and its
    vector instructions. torch's kernel set ("AVX512") is not enough: MKL picks its own code by maker
    and instructions, and heads-1's seed 12 ended elsewhere on an AMD AVX-512 CPU than on the AVX-512
    machine that recorded it (data/README.md)."""
    try:
        first = cpuinfo.read_text().split("\n\n")[0]  # the first core's block; the others repeat it
    except OSError:  # not Linux
        return f"{platform.system()} {platform.machine()} {platform.processor()}".strip()
    fields = dict(line.split(":", 1) for line in first.splitlines() if ":" in line)
    field = {k.strip(): v.strip() for k, v in fields.items()}
    vector = sorted(f for f in field.get("flags", "").split() if f.startswith(("avx", "amx", "fma")))
    return (f"{field.get('vendor_id', '?')} family {field.get('cpu family', '?')} model {field.get('model', '?')}"
            f" ({field.get('model name', '?')}): {' '.join(vector)}")


def record_seed_run(name: str, seed: int, numbers: dict, path: Path = MANIFEST) -> None:
    """Store one seed's numbers under "seeds" in name's manifest line, beside the seeds already there
    (the manifest is written in one step)."""
    entries = manifest(path)
    if name not in entries:
        raise ValueError(f"{path} has no line for {name!r}: train it first (python -m helpers.train {name}).")
    runs = {int(s): n for s, n in entries[name].get("seeds", {}).items()} | {seed: numbers}
    entries[name]["seeds"] = {str(s): n for s, n in sorted(runs.items())}
    write_manifest(entries, path)


def seed_runs(name: str) -> dict[int, dict]:
    """The recorded seed runs of a shipped variant, by seed ({} when none were recorded)."""
    return {int(seed): numbers for seed, numbers in recorded(name, "seeds").items()}


@dataclass(frozen=True)
class Spread:
    """One number of one variant over its seeds."""

    name: str
    key: str
    values: dict[int, float]  # seed -> value

    @property
    def low(self) -> float:
        return min(self.values.values())

    @property
    def high(self) -> float:
        return max(self.values.values())

    @property
    def mean(self) -> float:
        return sum(self.values.values()) / len(self.values)


def spread(name: str, key: str) -> Spread:
    """key (one of KEYS) over every recorded seed of the shipped variant `name`."""
    if key not in KEYS:
        raise ValueError(f"Unknown measurement {key!r}; choose one of {', '.join(KEYS)}.")
    runs = seed_runs(name)
    if not runs:
        raise ValueError(f"{name} has no seed runs recorded in data/models.json; record them with "
                         f"`python -m helpers.train {name} --seeds {SEEDS}`.")
    return Spread(name, key, {seed: numbers[key] for seed, numbers in runs.items()})


def compare(a: Spread, b: Spread) -> dict:
    """How far "a is better than b" holds: in every pair of runs (each of a's runs beats each of b's),
    in every shared seed (same stories, same order), or on average only."""
    sign = 1 if HIGHER_IS_BETTER[a.key] else -1
    pairs = [(x, y) for x in a.values.values() for y in b.values.values()]
    shared = sorted(set(a.values) & set(b.values))
    return {"every_pair": all(sign * (x - y) > 0 for x, y in pairs),
            "seed_wins": sum(sign * (a.values[s] - b.values[s]) > 0 for s in shared), "shared_seeds": len(shared),
            "on_average": sign * (a.mean - b.mean) > 0, "difference": a.mean - b.mean}


def how_far(a: Spread, b: Spread) -> str:
    """The words a notebook may use for "a is better than b", from compare()."""
    result = compare(a, b)
    if result["every_pair"]:
        return f"in all {len(a.values)} runs of each"
    if result["shared_seeds"] and result["seed_wins"] == result["shared_seeds"]:
        return f"seed by seed in all {result['shared_seeds']} seeds, though the ranges overlap"
    if result["on_average"]:
        wins = (f" (better in {result['seed_wins']} of {result['shared_seeds']} seeds)"
                if result["shared_seeds"] else "")
        return f"on average, but not in every run{wins}"
    return "not even on average"


# --- tables of a whole family (notebooks 04 and 07 print these; the figures draw the same numbers) -------
SHIPPED_KEYS = {"held_out_loss": "held_out_loss", "list_accuracy": "accuracy_induction"}  # ours: info's


def shipped_number(name: str, key: str) -> float:
    """The shipped file's own number (one older run of the recipe's seed, the one the maps and sliders
    show): held_out_loss or list_accuracy from its "info"."""
    if key not in SHIPPED_KEYS:
        raise ValueError(f"The shipped file records only {', '.join(SHIPPED_KEYS)}, not {key!r}.")
    return float(recorded(name, "info")[SHIPPED_KEYS[key]])


def seed_values(names, key: str) -> dict[str, dict[int, float]]:
    """key for every recorded seed of each of `names` that has seed runs, {name: {seed: value}}."""
    return {name: spread(name, key).values for name in names if seed_runs(name)}


def failed_runs(name: str, below: float = 0.5) -> list[int]:
    """The seeds whose run said a list again correctly less than `below` of the time (had not learned the
    list game)."""
    return [seed for seed, value in spread(name, "list_accuracy").values.items() if value < below]


def family_range(names, key: str) -> tuple[float, float]:
    """The lowest and highest value of key over every seed of every one of `names`."""
    values = [v for name in names for v in spread(name, key).values.values()]
    return min(values), max(values)


def percent_range(s: Spread) -> str:
    """'81 % (22–99 %)': the mean over the seeds and the lowest and highest run."""
    return f"{100 * s.mean:.0f} % ({100 * s.low:.0f}–{100 * s.high:.0f} %)"


def loss_range(s: Spread) -> str:
    """'1.602 (1.582–1.676)'."""
    return f"{s.mean:.3f} ({s.low:.3f}–{s.high:.3f})"


def describe_seed_table(names) -> str:
    """Every variant's numbers over its seeds (mean and lowest–highest run), beside the shipped run's."""
    names = list(names)
    first = sorted(seed_runs(names[0]))
    lines = [f"{len(first)} training runs per model (the recipe's own seed and the next {len(first) - 1}, trained "
             f"by today's code; {names[0]}: seeds {first[0]}–{first[-1]}); mean (lowest–highest run)",
             f"{'model':<9}{'list said again':>17}{'held-out loss':>22}{'loss, list words':>22}"
             f"{'other words':>22}   the shipped file: list, loss"]
    for name in names:
        acc, loss, lst, other = (spread(name, key) for key in KEYS[1::-1] + KEYS[2:])
        lines.append(f"{name:<9}{percent_range(acc):>17}{loss_range(loss):>22}{loss_range(lst):>22}"
                     f"{loss_range(other):>22}   {100 * shipped_number(name, 'list_accuracy'):.0f} %, "
                     f"{shipped_number(name, 'held_out_loss'):.3f}")
    return "\n".join(lines)


def describe_comparisons(names, key: str, reference: str, reference_better: bool = True) -> str:
    """One line per variant: how far `reference` beats it on key (how_far's words), over the seeds; with
    reference_better=False, how far each variant beats `reference`."""
    ref = spread(reference, key)
    pairs = [(ref, spread(name, key)) if reference_better else (spread(name, key), ref)
             for name in names if name != reference]
    return "\n".join(f"{a.name} better than {b.name} ({key}): {how_far(a, b)}" for a, b in pairs)
