"""The numbers notebook 07's sentences quote (tests/claims.py), measured on the shipped kv-N files and their seed runs."""

import helpers as H
from claims import Claim
from helpers.analysis import seeds as S
from helpers.analysis.kvcache import EXAMPLES, kv_cache_rows
from helpers.analysis.listloss import loss_rise_by_word, loss_split_by_kv_heads

NOTEBOOK = "07"
KV = [f"kv-{n}" for n in (1, 2, 3, 4, 6, 12)]


def row(model: str) -> dict:
    return {r["model"]: r for r in kv_cache_rows(8000)}[model]


def values(name: str, key: str = "list_accuracy") -> list[float]:
    return list(S.spread(name, key).values.values())


def percent_mean(name: str) -> list[float]:
    v = values(name)
    low, high = S.bootstrap_interval(v)
    return [round(100 * sum(v) / len(v)), round(100 * low), round(100 * high)]


def loss_mean(name: str) -> list[float]:
    v = values(name, "held_out_loss")
    return [sum(v) / len(v), *S.bootstrap_interval(v)]


def pairs(a: str, b: str, key: str = "list_accuracy") -> list[float]:
    """[k, n]: a beats b on key in k of n same-seed pairs."""
    return list(S.paired_wins(S.spread(a, key), S.spread(b, key)))


def runs() -> list[float]:
    seeds = sorted(S.seed_runs("kv-1"))
    return [len(seeds), seeds[0], seeds[-1]]


def similarity() -> list[float]:
    sims = H.similarity_by_kv_heads().values()
    within, across = [s["within"] for s in sims], [s["across"] for s in sims]
    return [min(within), max(within), min(across), max(across)]


def split(n: int) -> dict:
    return loss_split_by_kv_heads()[n]


def shipped_gap() -> list[float]:
    r = H.kv_results()
    ship = [round(100 * r[1]["list_accuracy"]), round(100 * r[12]["list_accuracy"])]
    runs_gap = 100 * (S.spread("kv-12", "list_accuracy").mean - S.spread("kv-1", "list_accuracy").mean)
    return ship + [round(100 * (r[12]["list_accuracy"] - r[1]["list_accuracy"])), round(runs_gap)]


def middle_means() -> list[float]:
    means = [100 * S.spread(f"kv-{n}", "list_accuracy").mean for n in (2, 3, 4, 6)]
    return [2, 6, round(min(means)), round(max(means))]


def other_words_all_runs() -> list[float]:
    n = sum(len(values(name)) for name in KV)
    return [n, n, *S.family_range(KV, "other_loss")]


CLAIMS = [
    Claim(r"Llama 2 7B keeps", lambda: [row("Llama 2 7B")["KiB per token"]], tol=0),
    Claim(r"its cache holds at most", lambda: [row("Llama 2 7B")["context length"], row("Llama 2 7B")["GiB at most"]],
          tol=0.005),
    Claim(r"Llama 3 8B has the same", lambda: [row("Llama 3 8B")["kv heads"], row("Llama 3 8B")["KiB per token"]], tol=0),
    Claim(r"GPT-2 small keeps", lambda: [row("GPT-2 small")["KiB per token"]], tol=0),
    Claim(r"Gemma 2B, whose", lambda: [row("Gemma 2B")["query heads"], row("Gemma 2B")["KiB per token"]], tol=0),
    Claim(r"For Llama 2 7B it says", lambda: [row("Llama 2 7B")["GiB per context"]], tol=0.005),
    Claim(r"Mistral 7B \(v0\.1\) accepts", lambda: [row("Mistral 7B")["context length"]], tol=0),
    Claim(r"attends only to the last", lambda: [row("Mistral 7B")["sliding window"]], tol=0),
    Claim(r"never holds more than", lambda: [row("Mistral 7B")["GiB at most"]], tol=0.005),
    Claim(r"Gemma 7B has", lambda: [3072, 16, H.head_size(EXAMPLES["Gemma 7B"]), 3072 // 16], tol=0),
    Claim(r"layout was trained on more seeds", lambda: [22, *sorted({len(values(n)) for n in KV}, reverse=True)], tol=0),
    Claim(r"two heads of one group overlap more", similarity, tol=0.005),
    Claim(r"cuts the cache twelvefold", lambda: [H.kv_results()[12]["cache_bytes_per_token"],
                                                 H.kv_results()[1]["cache_bytes_per_token"]], tol=0),
    Claim(r"attention parameters per layer fall", lambda: [H.kv_results()[12]["params_per_layer"],
                                                           H.kv_results()[1]["params_per_layer"]], tol=0),
    Claim(r"With one key/value head, a list is said again", lambda: percent_mean("kv-1"), tol=0),
    Claim(r"With 12 it is", lambda: [12, *percent_mean("kv-12")], tol=0),
    Claim(r"Seed by seed, one key/value head is below twelve",
          lambda: pairs("kv-12", "kv-1") + pairs("kv-2", "kv-1"), tol=0),
    Claim(r"The held-out loss barely moves", lambda: loss_mean("kv-1") + loss_mean("kv-12"), tol=0.0005),
    Claim(r"It is higher with one in", lambda: pairs("kv-12", "kv-1", "held_out_loss"), tol=0),
    Claim(r"With 2 to 6 key/value heads the list means", middle_means, tol=0),
    Claim(r"the shipped files are one run each", shipped_gap, tol=0),
    Claim(r"about \d+ % of the words", lambda: [round(100 * split(1)["list_share"])], tol=0),
    Claim(r"On the other words, the six shipped", lambda: [min(s["other_loss"] for s in loss_split_by_kv_heads().values()),
                                                           max(s["other_loss"] for s in loss_split_by_kv_heads().values())],
          tol=0.0005),
    Claim(r"On the list words\s+they lie between", lambda: [min(s["list_loss"] for s in loss_split_by_kv_heads().values()),
                                                            max(s["list_loss"] for s in loss_split_by_kv_heads().values())],
          tol=0.005),
    Claim(r"Of the shipped `kv-1`'s", lambda: [1, split(1)["loss"] - split(12)["loss"], 12,
                                               loss_rise_by_word(split(1), split(12))["from_list_words"],
                                               loss_rise_by_word(split(1), split(12))["from_other_words"]], tol=0.0005),
    Claim(r"Over the runs, all \d+ of our", other_words_all_runs, tol=0.0005),
    Claim(r"Pooled to 6\s+key/value heads", lambda: [6, H.pooled_results()[6]["held_out_loss"], 6,
                                                     S.spread("kv-6", "held_out_loss").mean], tol=0.005),
    Claim(r"Pooled to 1, it rises", lambda: [1, H.pooled_results()[1]["held_out_loss"], 1,
                                              S.spread("kv-1", "held_out_loss").mean], tol=0.005),
    Claim(r"No pooled model says a list again", lambda: [
        round(100 * max(H.pooled_results()[n]["list_accuracy"] for n in (1, 2, 3, 4, 6)))], tol=0),
    Claim(r"Generating text keeps", lambda: [row("Llama 2 7B")["KiB per token"], row("Llama 3 8B")["KiB per token"]],
          tol=0),
    Claim(r"runs of each layout, one key/value head says", lambda: [runs()[0], *pairs("kv-12", "kv-1")], tol=0),
]

SIX = [(1, 0), (1, 1), (1, 4), (1, 5), (1, 6), (1, 7)]  # the heads 07 §2 says draw the stripe (test_list_heads.py)


def six_list_heads() -> list[float]:
    from helpers.analysis import repeats
    from helpers.core.catalog import load_model
    marks = repeats.marker_table(load_model("kv-3"), SIX).values()
    return [min(w for w, _ in marks), max(w for w, _ in marks), min(o for _, o in marks), max(o for _, o in marks)]


CLAIMS.append(Claim(r"Those six put [\d.]+ to", six_list_heads, tol=0.005))
