"""The numbers notebook 08's sentences quote (tests/claims.py), measured on the shipped snapshots and the seed runs."""

import functools

import numpy as np

from claims import Claim
from helpers.analysis import formation as F
from helpers.analysis import seeds as S
from helpers.analysis.formation import formation_seeds, seed_findings
from helpers.core.run import run_sentence
from helpers.core.snapshots import DENSE_FROM, DENSE_TO, load_snapshots

NOTEBOOK = "08"


@functools.lru_cache(maxsize=1)
def shipped():
    record = F.shipped_record()
    return record["curves"], F.formation(record["curves"]), record["knockouts"]


def steps() -> list[int]:
    return [int(s) for s in shipped()[0]["steps"]]


def at(step: int) -> int:
    return steps().index(step)


def config() -> list[float]:
    c = load_snapshots().config
    return [c.n_layer, c.n_head, c.n_embd // c.n_head, c.n_embd] if not c.mlp else []


def training() -> list[float]:
    run = load_snapshots()
    return [run.steps[-1], 32, 64, run.tokens_per_step, round(run.steps[-1] * run.tokens_per_step / 1e6, 1)] \
        if run.tokens_per_step == 32 * 64 else []


def snapshots() -> list[float]:
    """37 steps: step 0, log-spaced, every 24 steps from 408 to 960 (the dense stretch), step 1039, the end."""
    run = load_snapshots()
    n = run.steps[-1]
    dense = [s for s in run.steps if DENSE_FROM * n <= s <= DENSE_TO * n]
    every = set(np.diff(dense).tolist())
    return [0, *every, dense[0], dense[-1], run.steps[-2]] if len(every) == 1 else []


def previous_first() -> list[float]:
    curves, found, _ = shipped()
    layer, head = found["previous_head"]
    return [curves["previous_list"][at(found["previous_step"])][layer, head], found["previous_step"]]


def induction_head() -> list[float]:
    curves, found, _ = shipped()
    step = found["step"]
    before = steps()[at(step) - 1]
    return [0.5, step, curves["induction"][at(before)][found["head"]], before,
            curves["induction"][at(step)][found["head"]], step]


def stretch() -> list[float]:
    """Lists said again at the last snapshot under 5 % and the first at 90 % or more (formation.list_stretch)."""
    acc = shipped()[0]["list_accuracy"]
    low, high = F.list_stretch(shipped()[0])
    return [round(100 * acc[at(low)]), low, round(100 * acc[at(high)]), high, high - low]


def in_context() -> list[float]:
    curves, found, _ = shipped()
    low = stretch()[1]
    return [curves["in_context"][at(low)], low, curves["in_context"][at(found["step"])], found["step"]]


def stall() -> list[float]:
    """The lowest held-out loss before formation, and the loss at formation."""
    curves, found, _ = shipped()
    low = int(np.argmin(curves["loss"][:at(found["step"])]))
    return [curves["loss"][low], steps()[low], curves["loss"][at(found["step"])], found["step"]]


def later_bumps() -> list[float]:
    curves, found, _ = shipped()
    later = [F.bump_ratio(curves, s) for s in steps()[at(found["step"]) + 1:-1]]
    return [F.bump_ratio(curves, found["step"]), found["step"], F.BUMP_FACTOR, sum(r >= F.BUMP_FACTOR for r in later)]


def knocked(which: str = "previous") -> dict:
    return shipped()[2][which]


def knockout_moment() -> int:
    return steps()[at(shipped()[1]["previous_step"]) - 1]


def prediction() -> list[float]:
    k, before = knocked(), at(knockout_moment())
    return [round(100 * k["accuracy"][before]), knockout_moment(), round(100 * k["accuracy"][-1]), steps()[-1]]


def slider_maps() -> list[float]:
    """At the end: L1 H0 looks from how many of the second copy's 4 words to the word after their earlier copy
    (that L0 H0 looks one word back: test_notebook08.py)."""
    _, found, _ = shipped()
    run = run_sentence(load_snapshots().model_at(steps()[-1]), F.SENTENCE)
    layer, head = found["head"]
    n = F.SENTENCE.split().index(".")  # first copy: positions 1..n (after <bos>), second copy: n + 2 ..
    hits = sum(int(run.attentions[layer, head, n + 2 + i].argmax()) == 2 + i for i in range(n))
    return [0, knockout_moment(), found["step"], hits, n]


def seeds_rate(key: str) -> list[float]:
    f = seed_findings(formation_seeds())
    low, high = S.binomial_interval(f[key], f["runs"])
    return [f[key], f["runs"], round(100 * low), round(100 * high)]


CLAIMS = [
    Claim(r"2 layers\s+of attention only", config, tol=0),
    Claim(r"It trains for \d+ steps", training, tol=0),
    Claim(r"kept the weights at", lambda: [len(load_snapshots().steps)], tol=0),
    Claim(r"They are step 0", snapshots, tol=0),
    Claim(r"would score at best", lambda: [shipped()[0]["induction_baseline"]], tol=0.005),
    Claim(r"previous-word score reaches [\d.]+ at step", previous_first, tol=0.005),
    Claim(r"The first head to reach 0\.5 is", lambda: induction_head()[:2], tol=0),
    Claim(r"Its score is [\d.]+ at\s+step", lambda: induction_head()[2:], tol=0.005),
    Claim(r"They are at \d+ % at step", stretch, tol=0),
    Claim(r"in-context score falls in the same stretch", in_context, tol=0.005),
    Claim(r"their loss \(the repeat loss\)", lambda: [shipped()[0]["list_loss"][at(stretch()[1])],
                                                      shipped()[0]["list_loss"][at(stretch()[3])]], tol=0.005),
    Claim(r"held-out loss is [\d.]+ at step", stall, tol=0.005),
    Claim(r"Our bump measure \(how many times", lambda: later_bumps()[:2], tol=0.05),
    Claim(r"more at \d+ later snapshots too", lambda: later_bumps()[2:], tol=0),
    Claim(r"Look at step 0", lambda: slider_maps()[:3], tol=0),
    Claim(r"looks from \d of the \d words", lambda: slider_maps()[3:], tol=0),
    Claim(r"Predict the share of lists said again", lambda: [knockout_moment(), steps()[-1]], tol=0),
    Claim(r"Return two numbers between 0 and 1", lambda: [0, 1, knockout_moment(), steps()[-1]], tol=0),
    Claim(r"With L0 H0 in\s+place", prediction, tol=0),
    Claim(r"Without L0 H0 the model says", lambda: [round(100 * knocked()["accuracy_without"][-1]),
                                                    round(100 * knocked()["accuracy"][-1]),
                                                    knocked()["score"][-1], knocked()["score_without"][-1]], tol=0.005),
    Claim(r"Before the circuit forms there is little", lambda: [
        knockout_moment(), round(100 * knocked()["accuracy"][at(knockout_moment())]),
        round(100 * knocked()["accuracy_without"][at(knockout_moment())])], tol=0),
    Claim(r"every 48 steps on 32 held-out stories", lambda: [steps()[-1] // 40, 32], tol=0),
    Claim(r"trained with snapshots on \d+ seeds", lambda: [len(formation_seeds()), min(formation_seeds()),
                                                          min(formation_seeds()) + 1, max(formation_seeds())], tol=0),
    Claim(r"the previous-word head formed at steps", lambda: [*seed_findings(formation_seeds())["previous_steps"],
                                                              *seed_findings(formation_seeds())["steps"],
                                                              seed_findings(formation_seeds())["heads"]], tol=0),
    Claim(r"Lists said again went from under", lambda: [5, 90, *seed_findings(formation_seeds())["stretch"]], tol=0),
    Claim(r"Without the previous-word head, lists said again at the end fell to", lambda: [
        round(100 * v) for v in seed_findings(formation_seeds())["knocked_out"]], tol=0),
    Claim(r"An induction head formed in layer 1 in", lambda: seeds_rate("formed"), tol=0),
    Claim(r"A previous-word head formed before it in", lambda: seeds_rate("previous_first"), tol=0),
    Claim(r"reached 2 at the formation step", lambda: [2, *seeds_rate("bumps")], tol=0),
    Claim(r"keeps \d+ snapshots of one run", lambda: [len(steps())], tol=0),
    Claim(r"L0 H0 forms at step \d+, then", lambda: [shipped()[1]["previous_step"], shipped()[1]["step"]], tol=0),
    Claim(r"Meanwhile lists said again rise", lambda: [stretch()[0], stretch()[2], stretch()[4]], tol=0),
    Claim(r"Without L0 H0 the finished model", lambda: [round(100 * knocked()["accuracy_without"][-1])], tol=0),
    Claim(r"Ours is one recipe", lambda: [len(formation_seeds())], tol=0),
]
