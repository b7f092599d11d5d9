"""The numbers the teacher's guide quotes about seed runs (tests/claims.py), measured on the recorded runs."""

import claims_04 as C4
import claims_07 as C7
import helpers as H
from claims import Claim
from helpers.analysis import seeds as S

NOTEBOOK = "guide"


def runs_07() -> list[float]:
    k, n = S.paired_wins(S.spread("kv-12", "list_accuracy"), S.spread("kv-1", "list_accuracy"))
    rise = S.spread("kv-1", "held_out_loss").mean - S.spread("kv-12", "held_out_loss").mean
    return [C7.runs()[0], rise, *C7.percent_mean("kv-1"), *C7.percent_mean("kv-12"), k, n]


CLAIMS = [
    Claim(r"12-head model, with heads of 8, ends on average", C4.twelve_above_best, tol=0.0005),
    Claim(r"How many different places a layer can look at once", lambda: C4.one_head() + C4.many_heads(), tol=0),
    Claim(r"At 04's slider, say what the training runs show", lambda: C4.one_head() + C4.many_heads(), tol=0),
    Claim(r"training runs each, the loss rises by about", runs_07, tol=0.005),
    Claim(r"with 2 to 6\s+key/value heads the means are", lambda: C7.middle_means(), tol=0),
    Claim(r"The shipped files, one run each, show", lambda: [round(100 * H.kv_results()[n]["list_accuracy"])
                                                             for n in (1, 12)], tol=0),
]
