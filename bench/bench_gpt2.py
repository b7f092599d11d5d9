"""Our GPT forward (logits + all 144 attention maps) vs transformers' eager GPT-2 with output_attentions=True.

Both run the same randomly initialised full-size GPT-2 small (124M parameters): transformers builds it,
our loader copies its tensors across (the route the real checkpoint takes). Prints the median time per
forward for a 5-token and a 64-token input, the ratio ours/theirs (target <= 1.0) and the peak memory
each forward adds. Memory is measured in a fresh process per case that holds only the model under test,
with glibc told to hand freed blocks back at once (MALLOC_MMAP_THRESHOLD_), so resident memory follows
live memory: the rise of the peak resident memory (Linux VmHWM, reset through /proc/self/clear_refs)
over the resident memory just before the (warmed-up) forward.

    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python bench/bench_gpt2.py [--repeats 9] [--quick]

--quick: a tiny random GPT-2 (2 layers, 4 heads, width 32), one repeat, one memory case: proves the route runs.
Without transformers installed it says so (pip install -e ".[test]") instead of measuring.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from benchlib import parser, record, unavailable
from helpers.core.gpt2 import GPT2_SMALL
from helpers.core.model import GPTConfig
from helpers.core.weights import model_from_checkpoint

TINY = GPTConfig(vocab_size=100, n_ctx=64, n_layer=2, n_head=4, n_embd=32)  # --quick


def build_models(config: GPTConfig = GPT2_SMALL):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    sizes = dict(vocab_size=config.vocab_size, n_positions=config.n_ctx, n_layer=config.n_layer,
                 n_head=config.n_head, n_embd=config.n_embd, bos_token_id=config.vocab_size - 1,
                 eos_token_id=config.vocab_size - 1)  # GPT-2 small's by default (50256 = <|endoftext|>)
    theirs = GPT2LMHeadModel(GPT2Config(attn_implementation="eager", **sizes)).eval()
    ours = model_from_checkpoint(theirs.state_dict(), config, source="transformers GPT-2")
    return ours, theirs


def forward_ours(model, ids):
    out = model(ids)
    return out.logits, out.attentions  # (B, T, V), (B, 12, 12, T, T)


def forward_theirs(model, ids):
    out = model(ids, output_attentions=True)
    return out.logits, torch.stack(out.attentions, dim=1)


def median_ms(fn, model, ids, repeats: int) -> float:
    fn(model, ids)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(model, ids)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _status_kb(field: str) -> int | None:
    status = Path("/proc/self/status")
    if not status.exists():
        return None
    for line in status.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return None


def peak_mb(fn, model, ids) -> float | None:
    """Extra peak resident memory of one forward, in MB (None where /proc is missing)."""
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    except OSError:
        return None
    before = _status_kb("VmRSS")
    fn(model, ids)
    peak = _status_kb("VmHWM")
    return None if before is None or peak is None else (peak - before) / 1024


def memory_case(which: str, T: int, config: GPTConfig) -> None:
    """Child process: print the extra peak memory (MB) of one forward of one model."""
    ours, theirs = build_models(config)
    model, fn = (ours, forward_ours) if which == "ours" else (theirs, forward_theirs)
    del ours, theirs
    ids = torch.randint(0, config.vocab_size, (1, T), generator=torch.Generator().manual_seed(0))
    fn(model, ids)  # warm-up: one-time allocations are not the forward's
    print(peak_mb(fn, model, ids))


def measure_memory(which: str, T: int, quick: bool) -> str:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "16384", "MALLOC_TRIM_THRESHOLD_": "0"}
    env.pop("BENCH_FIGURES", None)  # the child's numbers come back on its stdout
    out = subprocess.run([sys.executable, __file__, "--memory", which, str(T)] + ["--quick"] * quick, env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return "n/a" if not out or out[-1] == "None" else f"{float(out[-1]):.1f} MB"


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--repeats", type=int, default=9)
    options.add_argument("--memory", nargs=2, metavar=("ours|theirs", "T"), help=argparse.SUPPRESS)
    args = options.parse_args()
    config = TINY if args.quick else GPT2_SMALL
    torch.set_grad_enabled(False)
    if args.memory:
        return memory_case(args.memory[0], int(args.memory[1]), config)
    try:
        ours, theirs = build_models(config)
    except ImportError as err:  # transformers is a test extra, not a dependency
        for T in (5, 64):
            unavailable(f"GPT-2 small forward ÷ transformers eager, T={T}", f"{err.name or 'transformers'} is not "
                        "installed: pip install -e \".[test]\"")
        return
    name = "a tiny GPT-2 (--quick)" if args.quick else "GPT-2 small"
    print(f"{name}, random weights: {ours.num_params():,} parameters; torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread(s)")
    gen = torch.Generator().manual_seed(0)
    for T in (5,) if args.quick else (5, 64):
        ids = torch.randint(0, config.vocab_size, (1, T), generator=gen)
        (lo, ao), (lt, at) = forward_ours(ours, ids), forward_theirs(theirs, ids)
        diff = max((lo - lt).abs().max().item(), (ao - at).abs().max().item())
        repeats = 1 if args.quick else args.repeats
        t_ours = median_ms(forward_ours, ours, ids, repeats)
        t_theirs = median_ms(forward_theirs, theirs, ids, repeats)
        theirs_mem = "not measured (--quick)" if args.quick else measure_memory("theirs", T, args.quick)
        mem = f"{measure_memory('ours', T, args.quick)} vs {theirs_mem}"  # --quick: one child, not two
        print(f"T={T:3d}: ours {t_ours:7.1f} ms | transformers eager {t_theirs:7.1f} ms | "
              f"ratio ours/theirs {t_ours / t_theirs:.2f} | peak extra memory {mem} | "
              f"max |difference| {diff:.1e} | maps {tuple(ao.shape)}")
        record(f"{name} forward ÷ transformers eager, T={T}", t_ours / t_theirs, "×", 1.0,
               note=f"{t_ours:.1f} vs {t_theirs:.1f} ms")


if __name__ == "__main__":
    main()
