"""All heads on one offline web page: one self-contained .html file a class can open anywhere.

    H.export_page(lm, ["I like to draw", "the cat is tired ."])   # -> figures/all_heads.html

Everything is inline (the maps, page_view.js and its styles in page_template.html), so the page asks
no host for anything and opens from a USB stick in any browser. Maps travel in 8 bits (round(255 · w),
within PRECISION of the model's); `read_page` reads them back. Input that would not draw in about a
second (bench/bench_page_sizes.py: MAX_TOKENS, MAX_MAP_BYTES) is refused before the model runs.
A classroom model also travels in the page in 16 bits (`model_data`), and page_model.js, core/model.py
in JavaScript, runs it: type a sentence, knock heads out. GPT-2 small (~500 MB) stays precomputed.
"""

from __future__ import annotations

import base64
import warnings
from pathlib import Path
from collections.abc import Iterator
from typing import Sequence

import matplotlib as mpl
import numpy as np

from ..analysis import captions
from ..analysis.seeds import seed_runs
from ..core.arguments import whole_number
from ..core.arrays import to_numpy
from ..core.catalog import load_model, shipped_models
from ..core.files import recorded_sums, text_sha256
from ..core.model import LanguageModel
from ..core.run import read_sentence, run_ids
from ..core.tokenizer import BOS, PUNCTUATION, WordTokenizer
from .common import CMAP, HIGHLIGHT
from . import webpage

TEMPLATE = Path(__file__).with_name("page_template.html")
SCRIPTS = {"__MODEL_SCRIPT__": "page_model.js", "__LIVE_SCRIPT__": "page_live.js",  # beside this module
           "__VIEWER_SCRIPT__": "page_view.js"}
FAMILIES = {  # kind -> (the slider's label, its unit, the notebook whose slider it is)
    "heads": ("Heads per layer (the same width cut into more, smaller heads)", "heads", "notebook 04"),
    "kv": ("Key/value heads shared by the 12 query heads", "key/value heads", "notebook 07")}
LEVELS = 255  # 8 bits: a weight is stored as round(LEVELS · w)
PRECISION = 0.5 / LEVELS  # the largest difference between a number on the page and the model's
MAX_TOKENS = 128  # per sentence: longer ones draw too slowly (bench/bench_page_sizes.py)
MAX_MAP_BYTES = 16_000_000  # all sentences' maps together (L · H · T² bytes each)
MAX_LIVE_BYTES = 4_000_000  # 16-bit weights of one model; the 12 × 12 classroom model is 2.7 MB
REST_WORDS = ("<bos>", "<|endoftext|>", ".")  # where heads rest: analysis/captions.py RESTING
SPLIT = "shorten or split it, or pass fewer sentences (several pages are fine)"


def quantise(maps) -> np.ndarray:
    """Attention weights in [0, 1] as bytes: round(255 · w). Any shape."""
    return np.rint(np.clip(to_numpy(maps), 0.0, 1.0) * LEVELS).astype(np.uint8)


def _colours() -> list[str]:
    """The project's colour map as 256 '#rrggbb' strings: entry i colours the byte i."""
    rgba = mpl.colormaps[CMAP](np.arange(LEVELS + 1) / LEVELS)
    return ["#%02x%02x%02x" % tuple(int(round(255 * c)) for c in colour[:3]) for colour in rgba]


def _sentences(sentences) -> list[str]:
    """The sentences as a list of distinct non-blank strings (one string is one sentence; a generator
    is read once). A set is refused: its order changes from run to run, and the page with it."""
    if isinstance(sentences, (set, frozenset)):
        raise ValueError(f"sentences is a {type(sentences).__name__}, whose order changes from run to run; "
                         f"pass a list, e.g. sorted(sentences).")
    if isinstance(sentences, str):
        sentences = [sentences]
    listed = list(sentences) if isinstance(sentences, (list, tuple, Iterator)) else []
    if not listed or not all(isinstance(s, str) and s.strip() for s in listed):
        raise ValueError(f"sentences={sentences!r:.60} is not a list of sentences; pass one or more non-empty "
                         f"strings, e.g. ['I like to draw', 'the cat is tired .'].")
    return list(dict.fromkeys(s.strip() for s in listed))


def _unreadable(lm: LanguageModel, text: str, number: int, count: int, err: Exception) -> ValueError:
    """One line naming the sentence, then the model's own first line (its fix)."""
    said = str(err).strip()
    return ValueError(f"Sentence {number} of {count} ({text[:40]!r}) cannot be read by {lm.name}: "
                      f"{said.splitlines()[0] if said else type(err).__name__}")


def _read_all(lm: LanguageModel, texts: list[str]) -> list[tuple[list[str], list[int]]]:
    """Tokenize every sentence, refusing one the model cannot read or the page cannot draw in about
    a second (MAX_TOKENS each, MAX_MAP_BYTES in all), before any model runs."""
    reads, count = [], len(texts)
    for number, text in enumerate(texts, 1):
        try:
            tokens, ids = read_sentence(lm, text)
        except Exception as err:  # noqa: BLE001 - any error the model raises becomes one line
            raise _unreadable(lm, text, number, count, err) from None
        if len(ids) > MAX_TOKENS:
            raise ValueError(f"Sentence {number} of {count} ({text[:40]!r}) is {len(ids)} tokens long; a page draws "
                             f"at most {MAX_TOKENS} per sentence in about a second: {SPLIT}.")
        reads.append((tokens, ids))
    size = sum(lm.config.n_layer * lm.config.n_head * len(ids) ** 2 for _, ids in reads)
    if size > MAX_MAP_BYTES:
        raise ValueError(f"These {count} sentences make {size / 1e6:.1f} MB of maps for {lm.name}; a page holds at "
                         f"most {MAX_MAP_BYTES / 1e6:.0f} MB to open in about a second: {SPLIT}.")
    return reads


def _sentence_data(lm: LanguageModel, text: str, read: tuple[list[str], list[int]], number: int, count: int) -> dict:
    """Run one tokenized sentence and pack what the page shows: tokens, the 8-bit maps, one caption per head."""
    try:
        run = run_ids(lm, *read)
    except Exception as err:  # noqa: BLE001 - any error the model raises becomes one line
        raise _unreadable(lm, text, number, count, err) from None
    maps = to_numpy(run.attentions)  # (L, H, T, T)
    if not np.isfinite(maps).all():  # 8 bits would quietly turn NaN into 0: a page of made-up maps
        raise ValueError(f"{lm.name} gives NaN or infinite attention on sentence {number} ({text[:40]!r}), so its "
                         f"weights are damaged; load the model again (H.load_model) or retrain it.")
    L, H = maps.shape[:2]
    tokens = [str(t) for t in run.tokens]
    return {"text": text, "tokens": tokens,
            "maps": base64.b64encode(quantise(maps).tobytes()).decode("ascii"),  # row-major (L, H, T, T)
            "grid_caption": captions.all_heads_caption(maps, tokens),
            "head_captions": [captions.head_caption(maps[l, h], tokens, l, h) for l in range(L) for h in range(H)]}


def _about(name: str, live: bool) -> str:
    if live:
        return (f"This page runs {name} itself, in plain JavaScript from the 16-bit weights inside this file: "
                f"type a sentence of the classroom language, knock heads out, read the next word. "
                f"No Python, no internet.")
    return (f"The maps of {name} were computed in Python and stored in this page: the model does not run here "
            f"(GPT-2 small is far too big for a page), so you cannot type a new sentence or knock heads out; "
            f"a classroom model's page can.")


def _check_model(lm) -> None:
    if not isinstance(lm, LanguageModel):
        raise ValueError(f"lm={type(lm).__name__} is not a model; pass H.pick_model('classroom') or "
                         f"H.load_model('classroom').")


def page_data(lm: LanguageModel, sentences: Sequence[str], layer: int = 0, head: int = 0,
              live: bool = False) -> dict:
    """Everything the page shows, as plain JSON-ready data (the maps base64-encoded bytes)."""
    _check_model(lm)
    texts = _sentences(sentences)
    L, H = lm.config.n_layer, lm.config.n_head
    layer = whole_number(layer, "layer", 0, L - 1, valid=f"{lm.name} has layers 0..{L - 1}")
    head = whole_number(head, "head", 0, H - 1, valid=f"{lm.name} has heads 0..{H - 1}")
    reads = _read_all(lm, texts)
    runs = [_sentence_data(lm, text, read, i + 1, len(texts)) for i, (text, read) in enumerate(zip(texts, reads))]
    return {"model": lm.name, "layers": L, "heads": H, "levels": LEVELS, "precision": PRECISION,
            "start": [layer, head], "colours": _colours(), "highlight": HIGHLIGHT, "sentences": runs,
            "about": _about(lm.name, live)}


def page_html(data: dict, models: Sequence[dict] = (), title: str | None = None) -> str:
    """The page: the template with the data, the models (model_data, when the page runs them) and the
    scripts inlined, through the one page writer (figures/webpage.py: escaped so no text can close a
    script, a Content-Security-Policy that allows only its own scripts)."""
    title = webpage.text(title or f"All {data['layers'] * data['heads']} heads of {data['model']}")
    scripts = {}
    for marker, file in SCRIPTS.items():  # a loop, not a comprehension: the warning's stacklevel counts frames
        scripts[marker] = _page_file(file)
    return webpage.fill(_page_file(TEMPLATE.name),
                        {"__TITLE__": title, "__PAGE_DATA__": webpage.script_json(data),
                         "__MODEL_DATA__": webpage.script_json(list(models)), **scripts})


class PageFileWarning(UserWarning):
    """A script or template of the page is not the copy the project shipped: the page may not run."""


def _page_file(name: str) -> str:
    """A script or template the page is built from, or one line naming the fix (python -m helpers.doctor
    checks them all). One that differs from its recorded checksum is said once: a damaged script gives a dead
    page, and an edit made on purpose is recorded with `python -m helpers.doctor --record-page-files`."""
    path = TEMPLATE.with_name(name)
    try:
        if name not in _SAID and path.is_file() and text_sha256(path) != recorded_sums(path.with_name(SUMS)).get(name):
            _SAID.add(name)
            warnings.warn(PageFileWarning(
                f"helpers/figures/{name} is not the copy this project shipped, so the page may not run: restore it "
                f"with `git checkout -- helpers/figures/{name}`, or, if you changed it on purpose, run "
                f"`python -m helpers.doctor --record-page-files`."), stacklevel=4)  # the line that called export_page
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        why = "is missing" if isinstance(err, FileNotFoundError) else f"cannot be read ({type(err).__name__})"
        raise FileNotFoundError(f"helpers/figures/{name} {why}, and the page is built from it: restore it with "
                                f"`git checkout -- helpers/figures/{name}` (or a fresh copy of the project).") from None


SUMS = "page_files.sha256"  # beside the page's files (python -m helpers.doctor checks them too)
_SAID: set = set()  # the page files already said to differ, in this session


def export_page(lm: LanguageModel, sentences: Sequence[str] | str, name: str = "all_heads",
                folder: str | Path = "figures", layer: int = 0, head: int = 0, live: bool | None = None) -> Path:
    """Write folder/name.html: every head of `lm` reading each sentence, on one offline page.

    Opens at head (layer, head) of the first sentence. live=None carries the model inside the page
    when it fits (classroom models: type, knock out, next word), never for GPT-2. Returns the path
    written. The file appears whole or not at all (helpers.core.files.atomic_write); every argument
    is checked before the model runs, and bad input is refused with one line that names the fix.
    """
    target = webpage.page_path(name, folder, example="all_heads")  # before the model runs
    _check_model(lm)
    if live is not None and (isinstance(live, str) or live not in (True, False)):
        raise ValueError(f"live={live!r}: pass True (the page runs the model), False (only the maps) or None "
                         f"(True where the model fits).")
    live = can_run_in_page(lm) if live is None else bool(live)
    models = [model_data(lm)] if live else []  # refuses a model too big for a page before the model runs
    return webpage.write_page(page_html(page_data(lm, sentences, layer, head, live), models), target)


def family(kind: str) -> list[str]:
    """The shipped models of one slider, fewest heads first: "heads" (04) or "kv" (07)."""
    if kind not in FAMILIES:
        raise ValueError(f"kind={kind!r} names no slider; choose 'heads' (notebook 04) or 'kv' (notebook 07).")
    names = [n for n in shipped_models() if n.startswith(kind + "-") and n.split("-")[1].isdigit()]
    return sorted(names, key=lambda n: int(n.split("-")[1]))


def export_slider_page(kind: str, sentences: Sequence[str] | str, name: str | None = None,
                       folder: str | Path = "figures") -> Path:
    """Write folder/name.html: the models of 04's head-count slider (kind="heads") or 07's key/value
    slider (kind="kv") on one offline page that runs them, with their losses from models.json."""
    names = family(kind)
    target = webpage.page_path(name or f"{kind}_slider", folder, example=f"{kind}_slider")
    models = [load_model(n) for n in names]
    data = page_data(models[-1], sentences, live=True)  # the tokens and captions of the last model
    label, unit, notebook = FAMILIES[kind]
    values = [int(n.split("-")[1]) for n in names]
    data.update(slider={"label": f"{label} ({notebook})", "unit": unit, "values": values},
                start_model=len(names) - 1, model=f"the {kind} slider",
                about=f"This page runs the {len(names)} models of {notebook}'s slider ({', '.join(names)}) itself, "
                      f"in plain JavaScript from the 16-bit weights inside this file: move the slider to switch "
                      f"model, type a sentence, knock heads out, read the next word. No Python, no internet.")
    title = f"{label.split(' (')[0]}: {', '.join(map(str, values))}"
    return webpage.write_page(page_html(data, [model_data(lm) for lm in models], title), target)


def read_page(path: str | Path) -> dict:
    """The data embedded in a page export_page wrote, with each sentence's maps decoded to
    floats in [0, 1] of shape (layers, heads, T, T) under "weights"."""
    try:
        data = webpage.read_script_json(Path(path).read_text(encoding="utf-8"), "page-data")
    except ValueError:
        raise ValueError(f"{path} holds no page data; pass a file written by export_page.") from None
    for sentence in data["sentences"]:
        T = len(sentence["tokens"])
        raw = np.frombuffer(base64.b64decode(sentence["maps"]), dtype=np.uint8)
        sentence["weights"] = raw.reshape(data["layers"], data["heads"], T, T) / data["levels"]
    return data


# --- the model inside the page: every tensor of the state dict, in its PyTorch layout, as little-endian
# float16 (the shipped files are 16-bit already, so the page decodes exactly the numbers Python loads) ---
def can_run_in_page(lm: LanguageModel) -> bool:
    """True for a model the page can run itself: a word tokenizer and at most MAX_LIVE_BYTES of weights."""
    return isinstance(lm.tokenizer, WordTokenizer) and 2 * lm.model.num_params() <= MAX_LIVE_BYTES


def _numbers(lm: LanguageModel) -> dict:
    """What models.json says about the model: held-out loss and list accuracy, and their range over seeds."""
    info, runs = lm.info or {}, seed_runs(lm.name)  # {} for a model models.json does not list
    numbers = {key: info[key] for key in ("held_out_loss", "accuracy_induction") if key in info}
    for key in ("held_out_loss", "list_accuracy"):
        values = [run[key] for run in runs.values() if key in run]
        if values:
            numbers[f"{key}_seeds"] = [min(values), max(values), len(values)]
    return numbers


def model_data(lm: LanguageModel) -> dict:
    """The model as JSON-ready data for page_model.js: sizes, words, tensor index and 16-bit weights."""
    if not can_run_in_page(lm):
        raise ValueError(f"{lm.name} cannot run in a page (it needs the classroom word tokenizer and at most "
                         f"{MAX_LIVE_BYTES / 1e6:.0f} MB of 16-bit weights); pass live=False for a page of "
                         f"precomputed maps.")
    cfg, tensors, parts, offset = lm.config, {}, [], 0
    for name, tensor in lm.model.state_dict().items():
        values = tensor.detach().float().numpy().astype("<f2")  # the shipped files are float16 already
        tensors[name] = [offset, list(values.shape)]
        parts.append(values.reshape(-1))
        offset += values.size
    blob = np.concatenate(parts).tobytes()
    return {"name": lm.name, "bos": bool(lm.bos), "start": BOS, "punctuation": PUNCTUATION,
            "rest": list(REST_WORDS), "vocab": list(lm.tokenizer.vocab),
            "config": {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_kv_head": cfg.n_kv_head,
                       "n_embd": cfg.n_embd, "n_ctx": cfg.n_ctx, "vocab_size": cfg.vocab_size,
                       "mlp": cfg.mlp, "ln_eps": cfg.ln_eps},
            "tensors": tensors, "weights": base64.b64encode(blob).decode("ascii"), "numbers": _numbers(lm)}
