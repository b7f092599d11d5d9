"""Train the classroom models on the generated language: `python -m helpers.train NAME`.

Each recipe is deterministic from its seed and writes data/NAME.safetensors plus its
line in data/models.json (sha256, size, held-out loss, accuracy, training time), both in one
step. `--out` is checked before the first step (check_out), and Ctrl-C stops with one line.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

try:  # torch takes seconds to load: a Ctrl-C then gets one line too, not a traceback (as python -m helpers.grade)
    import torch
    from tqdm.auto import tqdm

    from .analysis.formation import formation_record
    from .analysis.headcount import record_merged_losses
    from .analysis.kvheads import record_pooled_results
    from .analysis.listloss import record_loss_split
    from .analysis.seeds import SEEDS, record_seed_run, seed_numbers, seeds_of
    from .core.arguments import whole_number
    from .core.catalog import DATA_DIR, MANIFEST, manifest, record_model
    from .core.files import refuse_read_only
    from .core.evaluation import N_CTX, evaluate, next_token_loss, one_thread, story_batch, story_ids
    from .core.language import StoryWriter, vocabulary
    from .core.model import GPT, LanguageModel
    from .core.snapshots import SnapshotRun, record_snapshots, snapshot_state, snapshot_steps
    from .core.tokenizer import WordTokenizer
    from .core.weights import checked_config
except KeyboardInterrupt:
    if __name__ != "__main__":
        raise
    print("stopped (Ctrl-C) before training started; nothing written", file=sys.stderr)
    raise SystemExit(128 + signal.SIGINT) from None


@dataclass(frozen=True)
class Recipe:
    config: dict
    tokens: int  # training tokens in total
    batch: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.01
    seed: int = 0
    list_chance: float = 0.5  # share of stories holding a "say this list twice" game
    relay_chance: float = 0.0  # share of stories holding a relay game (needs the previous word)
    relay_steps: int = 0  # first steps train on stories that are one long relay game
    warmup: int = 100
    bos: bool = True  # start every story with <bos>; the walkthrough models read bare sentences
    list_markers: bool = True  # False: lists are said twice with no `list :` / `again :` (issue 50's sweep)
    repeat_chance: float = 0.0  # share of stories that are one random word sequence said again and again
    threads: int = 1  # CPU threads: part of the recipe, since another count sums in another order
    note: str = ""

    @property
    def words(self) -> list[str]:
        """The vocabulary it trains on: with the relay marker only when it plays the relay game."""
        return vocabulary(relay=self.relay_chance > 0)


# Width 96 = 12 heads of 8: the smallest head size the brief allows, so the 12 × 12 layout of
# GPT-2 small trains here in minutes on two CPU cores.
# The classroom model spends its first 400 steps (0.8M tokens) on relay games only, so a
# previous-word head forms before the rest of the language is learned. Trained on the mixed
# stories alone it grew none in our runs (best previous-word score about 0.2; see the closing
# notes of the classroom-models issue). Seeds 1-8 all grew a previous-word head, but how many
# heads share induction, and where idle heads rest, changed from seed to seed. Seed 3 is the one
# whose 4 best induction heads carry that job (removing them costs 62 points of accuracy on the
# second copy of a list, removing 4 idle heads costs nothing), so notebook 06's knock-outs show it.
# `python tools/sweep.py --seeds 1-8` repeats that comparison.
RECIPES = {
    "classroom": Recipe(dict(n_layer=12, n_head=12, n_embd=96), tokens=5_000_000, seed=3, relay_chance=0.5,
                        relay_steps=400, threads=2,
                        note="12 layers × 12 heads of 8: the layout of GPT-2 small at 1/8 of its width"),
    "walkthrough-1": Recipe(dict(n_layer=1, n_head=1, n_embd=768, mlp=False), tokens=1_200_000, lr=1e-3, seed=2, bos=False,
                            note="one attention-only layer with a single head of 768 (notebook 01)"),
    "walkthrough-12": Recipe(dict(n_layer=1, n_head=12, n_embd=768, mlp=False), tokens=1_200_000, lr=1e-3, seed=3, bos=False,
                             note="one attention-only layer with 12 heads of 64 (notebooks 02-03)"),
    **{f"heads-{h}": Recipe(dict(n_layer=2, n_head=h, n_embd=96), tokens=2_000_000, seed=10 + h,
                            note=f"2 layers, width 96, {h} head(s) of {96 // h} (notebook 04's slider)")
       for h in (1, 2, 3, 4, 6, 12)},
    # Notebook 07: heads-12's recipe (same seed, so the same stories in the same order) with each group of
    # 12 / N query heads sharing one key/value head. kv-12 is heads-12's recipe exactly, trained again by
    # today's code beside the others (the shipped heads-12 file predates it and does not come out again).
    **{f"kv-{n}": Recipe(dict(n_layer=2, n_head=12, n_embd=96, n_kv_head=n), tokens=2_000_000, seed=22,
                         note=f"2 layers, width 96, 12 query heads of 8 sharing {n} key/value head(s) "
                              f"(notebook 07's slider)")
       for n in (1, 2, 3, 4, 6, 12)},
    # Notebook 08: the smallest recipe we found (issue 50's sweep, data/README.md) where a previous-word head
    # forms in layer 0 and then an induction head in layer 1: attention only, and nothing to copy by but the
    # words themselves. Half the stories are random words said again and again (Olsson et al.'s repeated
    # random tokens), half the language with a list said twice and no `list :` / `again :` markers.
    "induction": Recipe(dict(n_layer=2, n_head=4, n_embd=96, mlp=False), tokens=4_000_000, seed=22, list_chance=1.0,
                        list_markers=False, repeat_chance=0.5,
                        note="2 attention-only layers, 4 heads of 24; half the stories random words said again and "
                             "again, half with a list said twice and no markers (notebook 08)"),
    "tiny": Recipe(dict(n_layer=2, n_head=2, n_embd=32), tokens=40_000, batch=16, lr=1e-2, seed=0, warmup=5,
                   note="a seconds-long run for the test suite"),
}


def learning_rate(step: int, steps: int, recipe: Recipe) -> float:
    if step < recipe.warmup:
        return recipe.lr * (step + 1) / recipe.warmup
    progress = (step - recipe.warmup) / max(1, steps - recipe.warmup)
    return recipe.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))  # cosine down to 10%


def train(name: str, progress: bool = True, recipe: Recipe | None = None, device: str = "cpu",
          snapshots: dict | None = None, on_step=None) -> tuple[GPT, dict]:
    """Train one recipe from scratch; return the model (on the CPU) and its measurements.

    snapshots: a dict to fill with {step: fp16 weights} at snapshot_steps (step 0 = before training).
    on_step(step, steps, loss, model) is called after every step (the notebook's live plot).

    recipe replaces RECIPES[name] (tools/sweep.py tries other seeds that way). The shipped files
    come from the CPU: a GPU starts from the same weights but sums in another order, so it ends
    elsewhere. Ctrl-C raises Stopped."""
    recipe = RECIPES[check_recipe(name)] if recipe is None else recipe
    with one_thread(recipe.threads):
        return _train(name, recipe, progress, torch.device(device), snapshots, on_step)


class Stopped(KeyboardInterrupt):
    """Ctrl-C during a run, saying where it stopped (still a KeyboardInterrupt for callers that catch one)."""


def _train(name: str, recipe: Recipe, progress: bool, device: torch.device, snapshots: dict | None,
           on_step) -> tuple[GPT, dict]:
    torch.manual_seed(recipe.seed)
    tokenizer = WordTokenizer(recipe.words)
    config = checked_config(vocab_size=len(tokenizer), n_ctx=N_CTX, **recipe.config)  # a recipe may be new
    model = GPT(config).to(device)  # initialised on the CPU, so every device starts from the same weights
    opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, betas=(0.9, 0.95), weight_decay=recipe.weight_decay)
    writer = StoryWriter(recipe.seed)
    step, steps = 0, recipe.tokens // (recipe.batch * N_CTX)
    keep = set(snapshot_steps(steps)) if snapshots is not None else set()
    start = time.perf_counter()
    bar = tqdm(range(steps), desc=name, disable=not progress)
    try:
        for step in bar:
            if step in keep:  # the weights before this step: step 0 is the untrained model
                snapshots[step] = snapshot_state(model)
            for group in opt.param_groups:
                group["lr"] = learning_rate(step, steps, recipe)
            ids = recipe_batch(writer, tokenizer, recipe, step)
            loss = next_token_loss(model, ids.to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if step % 10 == 0:
                rate = (step + 1) * recipe.batch * N_CTX / (time.perf_counter() - start)
                bar.set_postfix(loss=f"{loss.item():.3f}", tok_s=f"{rate:,.0f}")
            if on_step is not None:
                on_step(step, steps, loss.item(), model)
        seconds = time.perf_counter() - start
        model.cpu().eval()
        if snapshots is not None:
            snapshots[steps] = snapshot_state(model)
        info = {"recipe": name, "note": recipe.note, "seed": recipe.seed, "train_tokens": steps * recipe.batch * N_CTX,
                "train_seconds": round(seconds, 1), "tokens_per_second": round(steps * recipe.batch * N_CTX / seconds),
                "params": model.num_params(), "bos": recipe.bos, "threads": recipe.threads,
                **({} if recipe.list_markers else {"list_markers": False}),  # how its held-out lists are written
                **evaluate(model, tokenizer, bos=recipe.bos, relay=recipe.relay_chance > 0)}
    except KeyboardInterrupt:
        bar.close()
        raise Stopped(f"stopped at step {step} of {steps}; nothing written") from None
    return model, info


def recipe_batch(writer: StoryWriter, tokenizer: WordTokenizer, recipe: Recipe, step: int) -> torch.Tensor:
    """One training batch (batch, N_CTX) of ids. Recipes with lists' markers and no repeated random
    sequences read exactly the stories they always did (story_batch); the others choose story by story."""
    if recipe.list_markers and not recipe.repeat_chance or step < recipe.relay_steps:
        return story_batch(writer, tokenizer, recipe.batch, recipe.list_chance, recipe.bos, recipe.relay_chance,
                           relay_only=step < recipe.relay_steps)[0]
    stories = [writer.repeat_story(N_CTX, recipe.bos) if recipe.repeat_chance and writer.rng.random() < recipe.repeat_chance
               else writer.story(N_CTX, recipe.list_chance, recipe.bos, relay_chance=recipe.relay_chance,
                                 markers=recipe.list_markers) for _ in range(recipe.batch)]
    return story_ids(tokenizer, stories)


def check_out(path: str | os.PathLike, name: str, writes: str = "model") -> Path:
    """The file to write for recipe `name` (`writes`: "model" or "snapshots"), checked before any training:
    one line naming --out when training would only fail at the end, or would overwrite the model list or any
    other file it lists (another model's, or this model's when writing its snapshots). Call it for every file
    a run will write (one per seed), before the first step."""
    text = os.fspath(path)
    flag, example = f"--out {text}", f"{name}.safetensors"
    if "\0" in text:
        raise ValueError(f"{flag!r} holds a NUL byte, which no file name can; type the path again.")
    path = Path(text)
    package = Path(__file__).resolve().parent  # first: "a folder; name a file inside it" would point in there
    if path.resolve() == package or package in path.resolve().parents:
        raise ValueError(f"{flag} is {'the' if path.resolve() == package else 'inside the'} helpers package (its "
                         f"code); write models into data/ or a folder of your own, e.g. data/{example}.")
    if path.is_dir():
        raise ValueError(f"{flag} is a folder; name a model file inside it, e.g. {path / example}.")
    if path.is_symlink() or path.exists() and not path.is_file():  # a link would be replaced, a pipe wait
        raise ValueError(f"{flag} is a {'symbolic link' if path.is_symlink() else 'pipe, socket or device'}, not a "
                         f"model file; name a new file, e.g. {path.with_name(example)}.")
    if path.name == MANIFEST.name:
        raise ValueError(f"{flag} is the model list itself; name a model file beside it, e.g. "
                         f"{path.with_name(example)}.")
    if path.suffix != ".safetensors":
        raise ValueError(f"{flag} does not end in .safetensors; name the model file, e.g. {path.with_name(example)}.")
    folder = next(p for p in path.parents if p.exists() or p.is_symlink() or p == p.parent)
    if not folder.is_dir():
        raise ValueError(f"{flag}: {folder} is a file, not a folder; choose a folder for the model file.")
    if not _can_create_in(folder):
        raise ValueError(f"{flag}: cannot write in {folder} (read-only or permission denied); choose a folder "
                         f"you can write to.")
    listing = path.parent / MANIFEST.name
    try:
        entries = manifest(listing, required=False)
        for target in (path, listing):
            refuse_read_only(target)
    except (ValueError, OSError) as err:
        raise ValueError(f"{flag}: {err}") from None
    for other, kind, listed in _listed_files(entries):
        if (other, kind) != (name, writes) and (listed == path.name or _same_file(path.parent / listed, path)):
            raise ValueError(f"{flag} is the {other} {kind} file (listed in {listing}); choose another name, "
                             f"e.g. {path.with_name(example)}.")
    return path


def _listed_files(entries: dict):
    """(recipe, "model" or "snapshots", file name) for every file a manifest lists."""
    for name, entry in entries.items():
        if isinstance(entry, dict):
            for kind, holder in (("model", entry), ("snapshots", entry.get("snapshots"))):
                if isinstance(holder, dict) and holder.get("file"):
                    yield name, kind, str(holder["file"])


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be made in `folder`: tried, since os.access says yes to root on a read-only mount,
    /proc or /sys."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)  # a case-insensitive disk or a link: another spelling of one file
    except OSError:
        return False


def train_and_record(name: str, path: Path, progress: bool = True) -> dict:
    """Train recipe `name`, write its model and manifest line at `path` (both or neither), then the
    measurements that belong to that file (heads-12, kv-12, every kv-N); return its info. Ctrl-C raises Stopped."""
    model, info = train(name, progress)
    try:
        record_model(name, model, RECIPES[name].words, info, path)
    except KeyboardInterrupt:
        raise Stopped(f"stopped while writing {path}; nothing written") from None
    try:
        if name == "heads-12":  # notebook 04's merge thought experiment: its numbers belong to this file
            print("merged held-out losses:", record_merged_losses(path))
        if name == "kv-12":  # notebook 07's pooling thought experiment: its numbers belong to this file
            print("mean-pooled to fewer key/value heads:", record_pooled_results(path))
        if name.startswith("kv-"):  # notebook 07 §4's loss split by word
            print("loss split into list words and the others:", record_loss_split(name, path))
    except KeyboardInterrupt:
        raise Stopped(f"stopped while measuring; {path} and its line were written, its measurements not: "
                      f"run the command again") from None
    return info


def train_seed(name: str, seed: int, progress: bool = False) -> dict:
    """Train recipe `name` on `seed` and return what a seed's run records (seeds.seed_numbers); no weights."""
    recipe = RECIPES[name]
    model, info = train(name, progress, recipe=replace(recipe, seed=seed))
    shipped_precision = model.half().float()  # the split is measured as a shipped (fp16) file would be
    lm = LanguageModel(name, shipped_precision, WordTokenizer(recipe.words), info, bos=recipe.bos)
    return seed_numbers(lm, info)


def train_seeds(name: str, count: int, listing: Path, progress: bool = True) -> dict[int, dict]:
    """Train recipe `name` on `count` seeds (its own and the next ones), skipping seeds already recorded, and
    record each seed's numbers in its line of the manifest `listing` as soon as it finishes (an interrupted
    run keeps what it had). No weights are written: the shipped file stays the one for the maps.
    tools/run_seeds.py does the same for many recipes on several processes."""
    if name not in manifest(listing, required=False):  # before the first step, not after an hour of training
        raise ValueError(f"--seeds: {listing} has no line for {name}; train it first (python -m helpers.train {name}).")
    runs = {}
    for seed in missing_seeds(name, count, listing):
        runs[seed] = train_seed(name, seed, progress)
        record_seed_run(name, seed, runs[seed], listing)
        print(f"{name} seed {seed}: {runs[seed]}")
    return runs


def missing_seeds(name: str, count: int, listing: Path) -> list[int]:
    """The seeds of recipe `name`'s first `count` that `listing` has not recorded yet."""
    done = manifest(listing, required=False).get(name, {}).get("seeds", {})
    return [seed for seed in seeds_of(RECIPES[name].seed, count) if str(seed) not in done]


def train_snapshots(name: str, path: Path, progress: bool = True, recipe: Recipe | None = None) -> dict:
    """Train recipe `name` keeping ~30 snapshots (core/snapshots.py), measure them (analysis/formation.py),
    write both at `path` with their place in the manifest beside it (not the model file); return that entry."""
    recipe = RECIPES[name] if recipe is None else recipe
    states: dict = {}
    model, info = train(name, progress, recipe=recipe, snapshots=states)
    info["tokens_per_step"] = recipe.batch * N_CTX
    run = SnapshotRun(name, sorted(states), model.config, recipe.words, info, states)
    run.measured = formation_record(run)  # measured on the fp16 weights the file keeps, before writing it
    try:
        return record_snapshots(name, run, path)
    except KeyboardInterrupt:
        raise Stopped(f"stopped while writing {path}; nothing written") from None


def train_live(name: str, seed: int, on_step) -> tuple[GPT, dict]:
    """Train recipe `name` on `seed`, calling on_step(step, steps, loss, model) after every step (notebook 08)."""
    seed = whole_number(seed, "seed", 0, example="22")
    return train(name, progress=False, recipe=replace(RECIPES[check_recipe(name)], seed=seed), on_step=on_step)


train_live.recipes = tuple(RECIPES)  # what it trains: LiveTraining checks a recipe against it at once


def check_recipe(name) -> str:
    """`name` when it is a recipe of RECIPES, else one line naming them."""
    if not isinstance(name, str) or name not in RECIPES:
        raise ValueError(f"Unknown recipe {name!r}; choose one of {', '.join(RECIPES)}.")
    return name


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m helpers.train", description=__doc__)
    parser.add_argument("name", choices=list(RECIPES), help="which model to train")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default data/NAME.safetensors)")
    parser.add_argument("--seeds", type=int, default=None, metavar="N",
                        help=f"train N seeds (e.g. {SEEDS}) and record their numbers beside NAME's line; no weights")
    parser.add_argument("--snapshots", action="store_true",
                        help="keep ~30 snapshots along the run in data/NAME-snapshots.safetensors (notebook 08)")
    args = parser.parse_args(argv)
    # `kill` or a closed terminal ends a run as Ctrl-C does, with one line (not under nohup: SIGHUP stays ignored)
    stops = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None))  # only the main thread may set them
             if s is not None and signal.getsignal(s) is not signal.SIG_IGN and threading.current_thread()
             is threading.main_thread()]
    before = {s: signal.signal(s, _interrupt) for s in stops}
    try:
        _run(parser, args)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _replacing(path: Path) -> Path:
    """Say so when the run will replace a file already there (a model of one's own under --out, too)."""
    if path.exists():
        print(f"{path} exists: it is replaced when training ends (Ctrl-C before then keeps it).", flush=True)
    return path


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    path = args.out or DATA_DIR / f"{args.name}{'-snapshots' if args.snapshots else ''}.safetensors"
    try:
        if args.snapshots:
            info = train_snapshots(args.name, _replacing(check_out(path, args.name, "snapshots")))
            print({k: v for k, v in info.items() if k != "info"})
            return
        if args.seeds is not None:
            seeds_of(0, args.seeds)  # a bad count is refused before anything runs
            train_seeds(args.name, args.seeds, check_out(path, args.name).parent / MANIFEST.name)
            return
        info = train_and_record(args.name, _replacing(check_out(path, args.name)))
    except ValueError as err:  # a bad --out, refused before the first step
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    except OSError as err:  # e.g. the disk filled: the pair was staged, so nothing was written
        reason = os.strerror(err.errno) if err.errno else "the write failed"
        parser.exit(1, f"{parser.prog}: error: could not write {path} ({reason}); free some disk space or choose "
                       f"another --out. Nothing was written.\n")
    except KeyboardInterrupt as stop:  # Ctrl-C: one line saying where it stopped, no traceback
        parser.exit(130, f"{str(stop) or 'stopped (Ctrl-C) before training started; nothing written'}\n")
    print({k: v for k, v in info.items() if k != "note"})


if __name__ == "__main__":
    main()
