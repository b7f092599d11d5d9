"""The numbers notebook 08's sentences quote (tests/claims.py), measured on the shipped snapshots and the seed runs."""

from claims import Claim
from helpers.analysis import formation as F
from helpers.analysis import seeds as S
from helpers.analysis.formation_seeds import formation_seeds, seed_findings

NOTEBOOK = "08"


def shipped():
    record = F.shipped_record()
    return record["curves"], F.formation(record["curves"]), record["knockouts"]


def at(step: int) -> int:
    return [int(s) for s in shipped()[0]["steps"]].index(step)


def formed() -> list[float]:
    curves, found, _ = shipped()
    return [0.5, found["step"]]  # "L1 H2" is a name, not a number


def head_score() -> list[float]:
    curves, found, _ = shipped()
    step = found["step"]
    before = int(curves["steps"][at(step) - 1])
    return [curves["induction"][at(before)][found["head"]], before, curves["induction"][at(step)][found["head"]], step]


def slow_rise() -> list[float]:
    curves, found, _ = shipped()
    steps, acc = [int(s) for s in curves["steps"]], curves["list_accuracy"]
    before, half = steps[at(found["step"]) - 1], next(s for s, a in zip(steps, acc) if a >= 0.5)
    return [round(100 * acc[at(before)]), before, round(100 * acc[at(found["step"])]), found["step"],
            round(100 * acc[at(half)]), half, round(100 * acc[-1]), steps[-1]]


def later_bumps() -> list[float]:
    curves, found, _ = shipped()
    later = [(int(s), F.bump_ratio(curves, int(s))) for s in curves["steps"][at(found["step"]) + 1:-1]]
    top = max(later, key=lambda x: x[1])
    return [F.BUMP_FACTOR, sum(r >= F.BUMP_FACTOR for _, r in later), top[1], top[0]]


def knocked(which: str) -> dict:
    return shipped()[2][which]


def seeds_rate(key: str) -> list[float]:
    f = seed_findings(formation_seeds())
    low, high = S.binomial_interval(f[key], f["runs"])
    return [f[key], f["runs"], round(100 * low), round(100 * high)]


CLAIMS = [
    Claim(r"The first head to reach 0\.5 is", formed, tol=0),
    Claim(r"Its score is [\d.]+ at step", head_score, tol=0.005),
    Claim(r"Lists said again rise from", slow_rise, tol=0),
    Claim(r"best previous-word score of a layer-0 head", lambda: [
        shipped()[0]["previous"][:, shipped()[1]["previous_head"][0], shipped()[1]["previous_head"][1]].max()],
          tol=0.005),
    Claim(r"Our bump measure is", lambda: [F.bump_ratio(shipped()[0], shipped()[1]["step"]), shipped()[1]["step"]],
          tol=0.05),
    Claim(r"later snapshots too", later_bumps, tol=0.05),
    Claim(r"at step \d+ and [−-][\d.]+ at the end", lambda: [shipped()[0]["in_context"][at(shipped()[1]["step"])],
                                                            shipped()[1]["step"], shipped()[0]["in_context"][-1]],
          tol=0.0005),
    Claim(r"the model still says", lambda: [round(100 * knocked("previous")["accuracy_without"][-1]),
                                           round(100 * knocked("previous")["accuracy"][-1])], tol=0),
    Claim(r"lists said again at the end drop from", lambda: [round(100 * knocked("needed")["accuracy"][-1]),
                                                             round(100 * knocked("needed")["accuracy_without"][-1])],
          tol=0),
    Claim(r"induction score drops from", lambda: [knocked("needed")["score"][-1], knocked("needed")["score_without"][-1]],
          tol=0.005),
    Claim(r"Before formation there is nothing to lose", lambda: [
        int(shipped()[0]["steps"][at(shipped()[1]["step"]) - 1]),
        round(100 * knocked("needed")["accuracy"][at(shipped()[1]["step"]) - 1]),
        round(100 * knocked("needed")["accuracy_without"][at(shipped()[1]["step"]) - 1])], tol=0),
    Claim(r"a list head formed at steps", lambda: [*seed_findings(formation_seeds())["steps"],
                                                    seed_findings(formation_seeds())["heads"]], tol=0),
    Claim(r"at the end lies between", lambda: [round(100 * v) for v in
                                               seed_findings(formation_seeds())["final_list_accuracy"]], tol=0),
    Claim(r"A list head formed in layer 1 in", lambda: seeds_rate("formed"), tol=0),
    Claim(r"A previous-word head\s+formed in", lambda: seeds_rate("previous_formed"), tol=0),
    Claim(r"reached 2 at the formation step", lambda: [2, *seeds_rate("bumps")], tol=0),
]
