"""How long each widget control takes to answer in the kernel (a bound: median <= 300 ms).

    python bench/bench_widgets.py [--rounds 5] [--quick]   (--quick: two moves per control)

What a control's callback does, timed without a browser: the knock-out explorer's mode
toggle (zero <-> mean) and head choice, the 144-head explorer's layer/head/query controls,
the explorer's `select` (printed, no target of its own) and `set_sentence` (<= 100 ms), and the
head-count slider. The target a class feels is key to picture <= 100 ms in the browser, which
bench/bench_browser.py measures; the kernel's share is printed here to see where time goes. The explorer's new sentence is timed here only (bench_views.py times the grid):
"new length" cycles through sentences of 6, 8 and 15 tokens (<bos> included), so the grid and the
links change shape every call (the zoom keeps its layout once its words have had the most room);
"same length" alternates two of 6 tokens, whose layouts are all reused; "never seen" types sentences of
4-14 random classroom words not shown before.
Wall and CPU ms are printed, and run_all.py's table uses CPU: on a shared machine wall time also
counts the wait for a core.
"""

from __future__ import annotations

import random
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import helpers as H  # noqa: E402
from benchlib import parser, record  # noqa: E402

TARGET_MS = 300.0


def timed(action, rounds: int) -> tuple[list[float], list[float]]:
    """Wall and CPU ms of action(i) for i in range(rounds)."""
    wall, cpu = [], []
    for i in range(rounds):
        w0, c0 = time.perf_counter(), time.process_time()
        action(i)
        wall.append(1000 * (time.perf_counter() - w0))
        cpu.append(1000 * (time.process_time() - c0))
    return wall, cpu


def report(name: str, wall: list[float], cpu: list[float], target: float | None = TARGET_MS) -> None:
    """Print and record one control's medians; target None: a figure to read, not a bound."""
    median = statistics.median(wall)
    record(f"{name}, kernel CPU", statistics.median(cpu), "ms", target, note=f"wall {median:.1f} ms")
    flag = "-" if target is None else "ok" if median <= target else "SLOW"
    print(f"{name:<34} median {median:7.1f} ms wall  {statistics.median(cpu):7.1f} ms CPU  "
          f"max {max(wall):7.1f} ms  [{flag}]")


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--rounds", type=int, default=5)
    args = options.parse_args()
    rounds = 2 if args.quick else args.rounds
    lm = H.load_model("classroom")
    sentence = "list : red mat old fox . again : red mat old"

    t0 = time.perf_counter()
    knock = H.KnockoutExplorer(lm, sentence, heads=[(0, 1), (1, 2)])
    print(f"KnockoutExplorer built in {1000 * (time.perf_counter() - t0):.0f} ms (head means computed here)")
    report("knock-out: mode zero <-> mean (kept)", *timed(
        lambda i: setattr(knock.mode, "value", "mean" if i % 2 == 0 else "zero"), rounds))
    labels = list(knock.heads.options)

    def new_heads_then_switch(i: int) -> None:  # a picture not drawn before: the honest first switch
        knock._reverting = True  # choose the heads without drawing them
        knock.heads.value = labels[10 + 2 * i:12 + 2 * i]
        knock._reverting = False
        knock.mode.value = "mean" if knock.mode.value == "zero" else "zero"
    report("knock-out: mode, heads not seen", *timed(new_heads_then_switch, rounds))
    report("knock-out: choose heads", *timed(lambda i: setattr(knock.heads, "value", labels[i:i + 2]), rounds))

    t0 = time.perf_counter()
    explorer = H.Explorer(lm, "list : red mat old fox . again : red mat old fox .")
    print(f"Explorer built in {1000 * (time.perf_counter() - t0):.0f} ms")
    L, Hn = lm.config.n_layer, lm.config.n_head
    report("explorer: layer slider", *timed(lambda i: setattr(explorer.layer_slider, "value", (i + 1) % L), rounds))
    report("explorer: head slider", *timed(lambda i: setattr(explorer.head_slider, "value", (i + 1) % Hn), rounds))
    report("explorer: query word", *timed(lambda i: setattr(explorer.word, "value", i % 3), rounds))
    report("explorer: select(layer, head)", *timed(lambda i: explorer.select((3 * i) % L, (5 * i + 1) % Hn), rounds),
           target=None)  # the 20 ms kernel target is retired (issue 52): bench_browser.py times what a class feels
    sentences = ["the cat is tired .", "I like to draw my picture .", "list : red mat old fox . again : red mat old fox ."]
    report("explorer: new sentence, new length", *timed(lambda i: explorer.set_sentence(sentences[i % 3]), rounds),
           target=100.0)
    fresh = never_seen_sentences(rounds)  # a class typing sentences it has not typed before
    def read_fresh(i: int) -> None:
        if not explorer.set_sentence(fresh[i]):
            raise SystemExit(f"the explorer refused {fresh[i]!r}: {explorer.status.value}")
    report("explorer: new sentence, never seen", *timed(read_fresh, rounds), target=100.0)
    same = ["the cat is tired .", "the dog is tired ."]  # the same length: the layout is reused
    report("explorer: new sentence, same length", *timed(lambda i: explorer.set_sentence(same[i % 2]), rounds),
           target=100.0)

    slider_rounds(rounds)  # an error here fails the bench (tests/test_benches.py); the figures above are printed


def never_seen_sentences(n: int) -> list[str]:
    """n sentences of 4 to 14 classroom words, none typed before in this process (fixed seed)."""
    rng = random.Random(1)
    words = "the cat dog is tired red mat old fox list again I like to draw my picture near dogs a . :".split()
    return [" ".join(rng.choice(words) for _ in range(rng.choice([4, 6, 9, 14])))
            for _ in range(n)]


def slider_rounds(rounds: int) -> None:
    t0 = time.perf_counter()
    slider = H.HeadCountExplorer(heads=4)
    print(f"HeadCountExplorer built in {1000 * (time.perf_counter() - t0):.0f} ms")
    counts = slider.heads_slider.options
    report("slider: heads (first visits)", *timed(lambda i: slider.set_heads(counts[i % len(counts)]), len(counts)))
    report("slider: heads (again)", *timed(lambda i: slider.set_heads(counts[i % len(counts)]), rounds))
    merges = slider.merge_slider.options
    report("slider: merge groups", *timed(lambda i: slider.set_merge(merges[i % len(merges)]), rounds))


if __name__ == "__main__":
    main()
