"""Real GPT-2 small, loaded into our own GPT: load_gpt2(), download_gpt2() (catalog.pick_model("gpt2") uses them).

Two files of openai-community/gpt2 at one pinned commit are needed: model.safetensors (548 MB)
and tokenizer.json (1.4 MB). They live in one folder, HELPERS_GPT2_DIR or ~/.cache/helpers/gpt2,
and are downloaded once with huggingface_hub. A file only gets its final name after its sha256
matched. Nothing here ever deletes a file it did not write: a file in the folder with the wrong
sha256 is left alone (and named in the error) until a checked download replaces it, and then it
is renamed aside, not removed. Nothing touches the network at import time, nor when both files
are already in the folder (or in the Hugging Face cache). Offline, catalog.pick_model("gpt2")
prints one line saying what to download and falls back to the classroom model.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import torch
from safetensors.torch import load_file

from .files import atomic_write
from .model import GPTConfig, LanguageModel
from .weights import checked_config, model_from_checkpoint, sha256

REPO_ID = "openai-community/gpt2"
REVISION = "607a30d783dfa663caf39e06633721c8d4cfcd7e"  # the hub commit whose files are pinned below
FILES = {  # name: (bytes, sha256), as published for REVISION
    "model.safetensors": (548_105_171, "248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707"),
    "tokenizer.json": (1_355_256, "8414cab924d8b9b33013f0d221c5862f365ee9be39c5c2bfae8a5a9e970478a6"),
}
GPT2_SMALL = GPTConfig(vocab_size=50257, n_ctx=1024, n_layer=12, n_head=12, n_embd=768)
EOT = "<|endoftext|>"  # GPT-2's only special token (id 50256), used as the first token
DIR_ENV = "HELPERS_GPT2_DIR"  # a folder holding (or to receive) the two files
VERIFY_ENV = "HELPERS_GPT2_VERIFY"  # "0" trusts files already in the folder (tests with stand-in files)
_verified: set[tuple[str, int, int]] = set()  # (path, size, mtime) already hashed in this process


class GPT2Unavailable(FileNotFoundError):
    """GPT-2 small cannot be had right now (offline, no file, failed download, wrong checksum)."""


def gpt2_dir() -> Path:
    """The folder for the two files: $HELPERS_GPT2_DIR, else ~/.cache/helpers/gpt2."""
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "helpers" / "gpt2"


def missing_message(folder: Path, reason: str = "") -> str:
    """One line: what to download, its size, and where to put it."""
    why = f" ({reason})" if reason else ""
    return (
        f"GPT-2 small is not available{why}: download model.safetensors (548 MB) and tokenizer.json (1.4 MB) "
        f"from https://huggingface.co/{REPO_ID}/tree/{REVISION} and put both in {folder} "
        f"(or set {DIR_ENV} to their folder)."
    )


def _matches(path: Path, name: str, trust: bool = False) -> bool:
    """True when the file has the pinned size and sha256 (hashed once per process); trust=True: when
    HELPERS_GPT2_VERIFY=0 trusts a file already in the folder."""
    if trust and os.environ.get(VERIFY_ENV, "1") == "0":
        return True
    size, digest = FILES[name]
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key in _verified:
        return True
    if stat.st_size != size or sha256(path) != digest:
        return False
    _verified.add(key)
    return True


def _offline() -> bool:
    flag = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return flag.strip().lower() in {"1", "true", "yes", "on"}


def _from_hf_cache(name: str) -> Path | None:
    """The pinned file from the Hugging Face cache, if someone already downloaded it (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(REPO_ID, name, revision=REVISION)
    return Path(found) if isinstance(found, str) and _matches(Path(found), name) else None


def _fetch(name: str, folder: Path, progress: bool, endpoint: str | None) -> Path:
    """Download one file into a scratch folder beside its target, check it, then give it its final name
    (one atomic_write): only a checked file is published, and huggingface_hub's .cache goes with the scratch."""
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
        from tqdm.auto import tqdm
    except ImportError:
        raise GPT2Unavailable(missing_message(folder, "pip install -e '.[gpt2]' for downloads")) from None

    class QuietBar(tqdm):  # used when progress=False
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "disable": True})

    def download(tmp: str) -> None:
        with tempfile.TemporaryDirectory(dir=folder, prefix=".download-") as scratch:
            try:
                url = hf_hub_url(REPO_ID, name, revision=REVISION, endpoint=endpoint)
                get_hf_file_metadata(url, timeout=10, endpoint=endpoint)  # one quick try, not a minute of retries
                staged = hf_hub_download(REPO_ID, name, revision=REVISION, local_dir=scratch, endpoint=endpoint,
                                         tqdm_class=None if progress else QuietBar)
            except Exception as err:  # network, HTTP, disk: all mean "not available now"
                reason = f"download of {name} failed: {type(err).__name__}"
                raise GPT2Unavailable(missing_message(folder, reason)) from None
            if not _matches(Path(staged), name):
                reason = f"the downloaded {name} had the wrong sha256 and was not kept"
                raise GPT2Unavailable(missing_message(folder, reason))
            os.replace(staged, tmp)
        _set_aside(folder / name)

    try:
        atomic_write(folder / name, download)
    except GPT2Unavailable:  # already its one line; being a FileNotFoundError, the OSError branch would wrap it
        raise
    except OSError as err:  # the folder or the final rename: file_error's one line says which and why
        raise GPT2Unavailable(missing_message(folder, f"cannot write there: {err.strerror or err}")) from None
    return folder / name


def download_gpt2(cache_dir: str | Path | None = None, progress: bool = True,
                  endpoint: str | None = None) -> dict[str, Path]:
    """Paths of model.safetensors and tokenizer.json, downloading what is missing (once).

    Looks in cache_dir (default gpt2_dir()), then the Hugging Face cache; only then, unless
    HF_HUB_OFFLINE is set, downloads from the hub (or `endpoint`) at the pinned revision.
    A file already in the folder with the wrong sha256 stays untouched unless a checked
    download replaces it; then it is renamed to NAME.rejected (never deleted).
    """
    folder = Path(cache_dir).expanduser() if cache_dir is not None else gpt2_dir()
    if folder.exists() and not folder.is_dir():  # e.g. HELPERS_GPT2_DIR set to model.safetensors itself
        named = "cache_dir" if cache_dir is not None else DIR_ENV
        raise GPT2Unavailable(f"{named} points at the file {folder}, not a folder; point it at the folder that "
                              f"holds (or will receive) model.safetensors and tokenizer.json.")
    paths = {}
    for name in FILES:
        target = folder / name
        if target.is_file() and _matches(target, name, trust=True):
            paths[name] = target
            continue
        found = _from_hf_cache(name)
        if found is not None:
            paths[name] = found
            continue
        wrong = f"; {target} is not GPT-2 small's file (wrong sha256) and was left as it is" if target.exists() else ""
        if _offline():
            raise GPT2Unavailable(missing_message(folder, f"offline: HF_HUB_OFFLINE is set{wrong}"))
        paths[name] = _fetch(name, folder, progress, endpoint)
    return paths


def _set_aside(path: Path) -> None:
    """Rename a file we are about to replace to NAME.rejected (or .rejected-2, ...), and say so."""
    if not path.exists():
        return
    aside, n = path.with_name(path.name + ".rejected"), 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.rejected-{n}")
    os.replace(path, aside)
    print(f"Renamed {path} to {aside.name}: its sha256 is not GPT-2 small's. Delete it yourself if you do not need it.")


def _config_for(folder: Path) -> GPTConfig:
    """GPT-2 small's sizes, or those of a Hugging Face config.json lying beside the weights."""
    config_file = folder / "config.json"
    if not config_file.is_file():
        return GPT2_SMALL
    c = json.loads(config_file.read_text())
    return checked_config(vocab_size=c["vocab_size"], n_ctx=c["n_positions"], n_layer=c["n_layer"],
                          n_head=c["n_head"], n_embd=c["n_embd"], ln_eps=c.get("layer_norm_epsilon", 1e-5))


def _local_files(path: Path) -> dict[str, Path]:
    """The two files from a folder, or from a model.safetensors path with tokenizer.json beside it."""
    folder = path.parent if path.is_file() else path
    paths = {"model.safetensors": path if path.is_file() else folder / "model.safetensors",
             "tokenizer.json": folder / "tokenizer.json"}
    for file in paths.values():  # first what is missing, then what is wrong
        if not file.is_file():
            raise GPT2Unavailable(missing_message(folder, f"{file} is missing"))
    for name, file in paths.items():
        if not _matches(file, name, trust=True):
            raise GPT2Unavailable(missing_message(folder, f"{file} has the wrong sha256 (damaged or another file)"))
    return paths


def load_gpt2(path_or_dir: str | Path | None = None) -> LanguageModel:
    """GPT-2 small in our own GPT, with its BPE tokenizer. Downloads once when no path is given."""
    paths = _local_files(Path(path_or_dir).expanduser()) if path_or_dir is not None else download_gpt2()
    model_path = paths["model.safetensors"]
    config = _config_for(model_path.parent)
    model = model_from_checkpoint(load_file(str(model_path)), config, source=str(model_path))
    info = {"repo": REPO_ID, "revision": REVISION, "file": str(model_path)}
    return LanguageModel(name="gpt2", model=model, tokenizer=BPETokenizer(paths["tokenizer.json"]), info=info)


class BPETokenizer:
    """GPT-2's byte-level BPE (tokenizer.json) with the WordTokenizer interface.

    Tokens are shown as the text they stand for, leading space included: "I like to draw" reads
    ["<|endoftext|>", "I", " like", " to", " draw"], so the pieces join back into the sentence.
    A token holding part of a multi-byte character shows as "\ufffd".
    """

    def __init__(self, path: str | Path):
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise GPT2Unavailable("The GPT-2 tokenizer needs `tokenizers`: pip install -e '.[gpt2]'.") from None
        self._tok = Tokenizer.from_file(str(path))
        self.bos_id = self._tok.token_to_id(EOT)
        if self.bos_id is None:
            raise ValueError(f"{path} has no {EOT} token; use GPT-2's tokenizer.json.")
        self._vocab: list[str] | None = None

    def __len__(self) -> int:
        return self._tok.get_vocab_size()

    @property
    def vocab(self) -> list[str]:  # every token as text, by id (built on first use)
        if self._vocab is None:
            self._vocab = self.decode(range(len(self)))
        return self._vocab

    def encode(self, sentence: str, bos: bool = True) -> list[int]:  # <|endoftext|> (50256) first unless bos=False
        if not isinstance(sentence, str) or not sentence.strip():
            raise ValueError(f"The sentence is empty ({sentence!r}); type a few words, e.g. 'I like to draw'.")
        if EOT in sentence:
            raise ValueError(f"Leave {EOT} out of the sentence: it is put in front for you (bos=True).")
        ids = self._tok.encode(sentence, add_special_tokens=False).ids
        return ([self.bos_id] if bos else []) + ids

    def tokens(self, sentence: str, bos: bool = True) -> list[str]:
        return self.decode(self.encode(sentence, bos=bos))

    def decode(self, ids) -> list[str]:  # one readable string per id: join them for the text
        return [self._tok.decode([int(i)], skip_special_tokens=False) for i in ids]


def drop_first_token(attn, mode: str = "hide", fill: float = float("nan")):
    """Attention maps (..., T, T) without the first key column, for views of GPT-2.

    GPT-2 parks most of its attention on the first token of a short sentence (an "attention
    sink" that carries little meaning), which washes out every other cell. "hide" blanks
    column 0 (NaN shows as an empty cell in imshow); "renormalise" also rescales each row to
    sum to 1 over the remaining keys (row 0 has none left and is blank). Works on tensors and arrays.
    """
    if mode not in ("hide", "renormalise"):
        raise ValueError(f"mode={mode!r} is not known; use 'hide' or 'renormalise'.")
    as_numpy = not isinstance(attn, torch.Tensor)
    maps = torch.as_tensor(attn, dtype=torch.float32).clone()  # (..., T, T)
    if maps.ndim < 2 or maps.shape[-1] != maps.shape[-2]:
        raise ValueError(f"Expected square attention maps (..., T, T), got shape {tuple(maps.shape)}.")
    maps[..., 0] = 0.0
    if mode == "renormalise":
        rest = maps.sum(dim=-1, keepdim=True)  # (..., T, 1)
        maps = torch.where(rest > 0, maps / rest.clamp_min(1e-12), torch.full_like(maps, fill))
    maps[..., 0] = fill
    return maps.numpy() if as_numpy else maps
