"""The numbers notebook 04's sentences quote (tests/claims.py), measured on the recorded seed runs and shipped files."""

from claims import Claim
from helpers.analysis import seeds as S

NOTEBOOK = "04"
MANY = [f"heads-{h}" for h in (2, 3, 4, 6, 12)]
ALL = ["heads-1"] + MANY


def pct(x: float) -> float:
    return 100 * x


def rate(k: int, n: int) -> list[float]:
    """k, n and the exact interval in whole percent, as rate_text writes them ("all n of our n" writes n twice)."""
    low, high = S.binomial_interval(k, n)
    return ([n, n] if k == n else [k, n]) + [round(pct(low)), round(pct(high))]


def one_head() -> list[float]:
    return rate(*S.learned("heads-1"))


def many_heads() -> list[float]:
    k, n = (sum(S.learned(name)[i] for name in MANY) for i in (0, 1))
    return rate(k, n)


def runs(name: str, learned: bool) -> list[float]:
    return [v for v in S.spread(name, "list_accuracy").values.values() if (v >= S.LEARNED) == learned]


def mean_and_interval(name: str) -> list[float]:
    values = list(S.spread(name, "list_accuracy").values.values())
    low, high = S.bootstrap_interval(values)
    return [round(pct(sum(values) / len(values))), round(pct(low)), round(pct(high))]


def loss_means() -> list[float]:
    means = [S.spread(name, "held_out_loss").mean for name in MANY]
    return [min(means), max(means)]


def other_words() -> list[float]:
    n = sum(len(S.spread(name, "other_loss").values) for name in ALL)
    return [n, n, *S.family_range(ALL, "other_loss")]


def twelve_above_best() -> list[float]:
    means = {name: S.spread(name, "held_out_loss").mean for name in ALL}
    return [12, means["heads-12"] - min(means.values())]


def runs_per_count() -> list[float]:
    return sorted({len(S.spread(name, "list_accuracy").values) for name in ALL}, reverse=True)


CLAIMS = [
    Claim(r"each head count was trained again on more seeds", runs_per_count, tol=0),
    Claim(r"the list game is not reliable", one_head, tol=0),
    Claim(r"The other \d+ runs stayed at", lambda: [one_head()[1] - one_head()[0],
                                                    round(pct(min(runs("heads-1", False)))),
                                                    round(pct(max(runs("heads-1", False))))], tol=0),
    Claim(r"With two heads or more, it was learned", many_heads, tol=0),
    Claim(r"shipped 1-head file is one of the runs that failed",
          lambda: [1, round(pct(S.shipped_number("heads-1", "list_accuracy")))], tol=0),
    Claim(r"Twelve heads of 8 said a list again",
          lambda: [8, *mean_and_interval("heads-12"), 48, *mean_and_interval("heads-2")], tol=0),
    Claim(r"their means lie between", loss_means, tol=0.0005),
    Claim(r"words that do not repeat a list", other_words, tol=0.0005),
    Claim(r"runs that did learn said a list again",
          lambda: [1, round(pct(min(runs("heads-1", True)))), round(pct(max(runs("heads-1", True))))], tol=0),
    Claim(r"With one head per layer the list game was learned", lambda: one_head() + many_heads(), tol=0),
    Claim(r"above the best mean held-out loss", twelve_above_best, tol=0.0005),
]


def list_head_markers(name: str) -> list[float]:
    """The best list head of model `name` (picked as 05 picks its induction head): its score with the list's
    markers and without them (analysis/repeats.py). 04 quotes heads-2's, 05 the classroom model's."""
    from helpers.analysis import repeats
    from helpers.analysis.relations import ranked_heads, relation_scores
    from helpers.core.catalog import load_model
    lm = load_model(name)
    head, _ = ranked_heads(relation_scores(lm, relations=("induction",)), "induction", k=1)[0]
    return list(repeats.marker_table(lm, [head])[head])


CLAIMS.append(Claim(r"list's markers: the 2-head model's list head", lambda: list_head_markers("heads-2"), tol=0.005))
