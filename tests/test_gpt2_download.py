"""download_gpt2 against a stand-in hub on 127.0.0.1: cache hits, checksums, interruptions, offline."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from helpers.core import gpt2

pytest.importorskip("huggingface_hub")

MODEL = bytes(range(256)) * 400  # 100 kB stand-in for model.safetensors
TOKENIZER = b'{"stand-in": "tokenizer.json"}'
MAX_REQUESTS = 40  # a runaway retry loop fails the test instead of hanging it


class FakeHub(BaseHTTPRequestHandler):
    """Answers GET/HEAD on /{repo}/resolve/{revision}/{file} the way the hub does."""

    files: dict[str, bytes] = {}
    log: list[tuple[str, str]] = []
    cut_first_get = False  # send half of the body, then drop the connection
    fail_after_cut = False  # ... and answer 500 to the retry (no resume possible)

    def _lookup(self) -> bytes | None:
        prefix = f"/{gpt2.REPO_ID}/resolve/{gpt2.REVISION}/"
        if len(FakeHub.log) > MAX_REQUESTS or not self.path.startswith(prefix):
            return None
        return FakeHub.files.get(self.path[len(prefix):])

    def _headers(self, body: bytes, status: int = 200, start: int = 0) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) - start))
        self.send_header("ETag", f'"{hashlib.sha256(body).hexdigest()}"')
        self.send_header("X-Repo-Commit", gpt2.REVISION)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.end_headers()

    def do_HEAD(self):
        FakeHub.log.append(("HEAD", self.path))
        body = self._lookup()
        if body is None:
            self.send_error(404)
        else:
            self._headers(body)

    def do_GET(self):
        FakeHub.log.append(("GET", self.path))
        body = self._lookup()
        gets = sum(method == "GET" for method, _ in FakeHub.log)
        if body is None or (FakeHub.fail_after_cut and gets > 1):
            self.send_error(404 if body is None else 500)
            return
        start = int(self.headers.get("Range", "bytes=0-")[6:].split("-")[0] or 0)
        self._headers(body, 206 if start else 200, start)
        if FakeHub.cut_first_get and gets == 1:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body[start:])

    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """A fake hub on a free loopback port; FILES pinned to the stand-in files' sizes and sha256."""
    FakeHub.files = {"model.safetensors": MODEL, "tokenizer.json": TOKENIZER}
    FakeHub.log, FakeHub.cut_first_get, FakeHub.fail_after_cut = [], False, False
    monkeypatch.setattr(gpt2, "FILES", {name: (len(body), hashlib.sha256(body).hexdigest())
                                        for name, body in FakeHub.files.items()})
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", gpt2.DIR_ENV, gpt2.VERIFY_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def leftovers(folder):
    """Every file under folder, temporary ones included."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_download_then_cache_hit_makes_no_request(hub, tmp_path):
    folder = tmp_path / "gpt2"
    paths = gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert paths["model.safetensors"].read_bytes() == MODEL
    assert paths["tokenizer.json"].read_bytes() == TOKENIZER
    assert leftovers(folder) == ["model.safetensors", "tokenizer.json"], "no temporary files stay behind"
    assert 2 <= len(FakeHub.log) <= 6
    FakeHub.log.clear()
    again = gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert again == paths and FakeHub.log == []


def test_cache_hit_works_offline(hub, tmp_path, monkeypatch):
    folder = tmp_path / "gpt2"
    gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    FakeHub.log.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert gpt2.download_gpt2(folder, progress=False, endpoint=hub)["tokenizer.json"].is_file()
    assert FakeHub.log == []


def test_the_folder_comes_from_the_environment(hub, tmp_path, monkeypatch):
    monkeypatch.setenv(gpt2.DIR_ENV, str(tmp_path / "drive"))
    assert gpt2.gpt2_dir() == tmp_path / "drive"
    paths = gpt2.download_gpt2(progress=False, endpoint=hub)
    assert paths["model.safetensors"] == tmp_path / "drive" / "model.safetensors"


def test_checksum_mismatch_is_refused_and_not_kept(hub, tmp_path):
    FakeHub.files["model.safetensors"] = bytes(reversed(MODEL))  # same size, other bytes
    folder = tmp_path / "gpt2"
    with pytest.raises(gpt2.GPT2Unavailable, match="wrong sha256 and was not kept") as err:
        gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert "\n" not in str(err.value)
    assert not any("safetensors" in f for f in leftovers(folder))


def test_a_damaged_file_in_the_folder_is_renamed_aside_not_deleted(hub, tmp_path, capsys):
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(MODEL[:1000])  # e.g. a copy that stopped half-way
    paths = gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert paths["model.safetensors"].read_bytes() == MODEL
    assert (folder / "model.safetensors.rejected").read_bytes() == MODEL[:1000]
    out = capsys.readouterr().out
    assert "Renamed" in out and "model.safetensors.rejected" in out


def test_a_users_files_in_the_folder_are_never_deleted(hub, tmp_path, monkeypatch, capsys):
    """The reported data loss: another model.safetensors and the user's own .download/notes.txt."""
    folder = tmp_path / "gpt2"
    (folder / ".download").mkdir(parents=True)
    (folder / ".download" / "notes.txt").write_text("my notes")
    (folder / "model.safetensors").write_bytes(b"someone else's model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(gpt2.GPT2Unavailable, match="left as it is"):
        gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert (folder / "model.safetensors").read_bytes() == b"someone else's model"
    monkeypatch.delenv("HF_HUB_OFFLINE")
    gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert (folder / ".download" / "notes.txt").read_text() == "my notes"
    assert (folder / "model.safetensors.rejected").read_bytes() == b"someone else's model"
    assert leftovers(folder) == [".download/notes.txt", "model.safetensors", "model.safetensors.rejected",
                                 "tokenizer.json"]


def test_interrupted_download_leaves_no_file(hub, tmp_path):
    FakeHub.cut_first_get, FakeHub.fail_after_cut = True, True
    folder = tmp_path / "gpt2"
    with pytest.raises(gpt2.GPT2Unavailable, match="download of model.safetensors failed") as err:
        gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert "548 MB" in str(err.value) and "\n" not in str(err.value)
    assert leftovers(folder) == [] if folder.exists() else True
    assert len(FakeHub.log) <= MAX_REQUESTS


def test_interrupted_download_resumes(hub, tmp_path):
    FakeHub.cut_first_get = True
    folder = tmp_path / "gpt2"
    paths = gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    assert paths["model.safetensors"].read_bytes() == MODEL
    gets = [path for method, path in FakeHub.log if method == "GET" and path.endswith("model.safetensors")]
    assert len(gets) == 2, "the second request asks only for the missing half"


def test_offline_gives_one_line_saying_what_and_where(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "gpt2"
    with pytest.raises(gpt2.GPT2Unavailable) as err:
        gpt2.download_gpt2(folder, progress=False, endpoint=hub)
    message = str(err.value)
    assert "\n" not in message and "offline" in message
    assert "model.safetensors (548 MB)" in message and "tokenizer.json (1.4 MB)" in message
    assert str(folder) in message and gpt2.REVISION in message
    assert FakeHub.log == []


def test_unreachable_hub_gives_the_same_line(hub, tmp_path):
    closed = "http://127.0.0.1:9"  # discard port: nothing listens there
    with pytest.raises(gpt2.GPT2Unavailable, match="548 MB"):
        gpt2.download_gpt2(tmp_path / "gpt2", progress=False, endpoint=closed)
    assert not (tmp_path / "gpt2" / "model.safetensors").exists()


def test_files_in_the_hugging_face_cache_are_used_without_network(hub, tmp_path):
    from huggingface_hub import hf_hub_download

    for name in FakeHub.files:  # as if transformers had downloaded GPT-2 before
        hf_hub_download(gpt2.REPO_ID, name, revision=gpt2.REVISION, endpoint=hub)
    FakeHub.log.clear()
    paths = gpt2.download_gpt2(tmp_path / "empty", progress=False, endpoint=hub)
    assert paths["model.safetensors"].read_bytes() == MODEL and FakeHub.log == []
    assert "hf-cache" in str(paths["model.safetensors"])


def test_import_and_pinned_constants_need_no_network():
    assert len(gpt2.REVISION) == 40 and int(gpt2.REVISION, 16) >= 0
    assert gpt2.FILES["model.safetensors"][0] == 548_105_171
    assert all(len(digest) == 64 for _, digest in gpt2.FILES.values())


def test_no_network_library_is_imported_with_the_module():
    """huggingface_hub and tokenizers are imported inside the functions that need them, never at import."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(gpt2))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in top if isinstance(n, ast.ImportFrom) and n.module}
    assert not names & {"huggingface_hub", "tokenizers", "transformers", "requests", "httpx"}
