"""Speed of the classroom models on this machine: load time, forward pass, training throughput.

    python bench/bench_model.py [--quick]   (--quick: one model, few repeats, one training step)

Prints medians; targets: load < 1 s per model, 12 x 12 forward with all 144 maps <= 10 ms.
"""

import statistics
import time

import torch

import helpers as H
from helpers.core.language import vocabulary
from helpers.core.model import GPT, GPTConfig
from helpers.core.tokenizer import WordTokenizer
from benchlib import parser, record
from helpers import train
from helpers.core import evaluation
from helpers.core.catalog import shipped_models
from helpers.core.language import StoryWriter


def median_ms(fn, repeat=30, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_loading(quick: bool):
    slowest = 0.0
    for name in ["classroom"] if quick else shipped_models():
        ms = median_ms(lambda: H.load_model(name), repeat=1 if quick else 5, warmup=0 if quick else 1)
        slowest = max(slowest, ms)
        print(f"load {name:16s} {ms:8.1f} ms")
    record("slowest model load", slowest, "ms", 1000)


def bench_forward(quick: bool):
    lm = H.load_model("classroom")
    ids = torch.tensor([lm.tokenizer.encode("I like to draw")])
    repeat = 3 if quick else 100
    with torch.no_grad():
        out = lm.model(ids)
        ms = median_ms(lambda: lm.model(ids), repeat=repeat)
    print(f"classroom forward on 'I like to draw': {ms:.2f} ms median, maps {list(out.attentions[0].shape)}")
    record("classroom 12 × 12 forward with all 144 maps", ms, "ms", 10)
    ms = median_ms(lambda: H.run_sentence(lm, "I like to draw"), repeat=repeat)
    print(f"run_sentence (tokenize + forward): {ms:.2f} ms median")


def bench_training(name="classroom", steps=8, quick: bool = False):
    recipe = train.RECIPES[name]
    tok = WordTokenizer(vocabulary())
    model = GPT(GPTConfig(vocab_size=len(tok), n_ctx=evaluation.N_CTX, **recipe.config))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    writer = StoryWriter(0)

    def step():
        ids, _ = evaluation.story_batch(writer, tok, recipe.batch, recipe.list_chance)
        loss = evaluation.next_token_loss(model, ids)
        opt.zero_grad()
        loss.backward()
        opt.step()

    ms = median_ms(step, repeat=1 if quick else steps, warmup=0 if quick else 2)
    print(f"training {name}: {recipe.batch * evaluation.N_CTX / ms * 1000:,.0f} tokens/s "
          f"({ms:.0f} ms per step of {recipe.batch} x {evaluation.N_CTX}, {torch.get_num_threads()} threads)")


if __name__ == "__main__":
    quick = parser(__doc__).parse_args().quick
    bench_loading(quick)
    bench_forward(quick)
    bench_training(quick=quick)
