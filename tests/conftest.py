import ipaddress
import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")  # tests never open windows
# One thread per process, in the tests and in the kernels, servers and commands they start (they inherit
# this environment). The README runs two test workers on two cores, and each starts kernels beside it:
# with torch's default of one OpenMP thread per core, small tensor operations wait on threads that
# another process holds. The capstone's blind answers (tests/test_blind_answers_judged.py -k multihead)
# took 54.8 s with the default and 18.3 s with one thread, on the 2-core machine at a load of about 3.
# Code that sets its own thread count (training, the benches) still does.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# huggingface_hub asks the hub host for telemetry / version data unless told not to; tests use loopback fakes only.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")


import numpy as np  # noqa: E402
import pytest  # noqa: E402

OUTSIDE_LOOKUPS: list[str] = []  # every non-loopback host a test tried to reach


def _is_loopback(host) -> bool:
    if host is None:
        return True
    host = host.decode() if isinstance(host, bytes) else str(host)
    if host in ("localhost", "") or host.startswith("/"):  # unix sockets are local
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _no_network(event: str, args) -> None:
    """Audit hook: refuse (and record) any DNS lookup or connection to a host that is not this machine."""
    if event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "socket.gethostbyname_ex"):
        host = args[0]
    elif event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else None
    else:
        return
    if not _is_loopback(host):
        OUTSIDE_LOOKUPS.append(f"{event} {host}")
        raise OSError(f"tests may not reach {host}: the network is off in tests")


sys.addaudithook(_no_network)


# The slowest test files, slowest first (seconds of one sequential run, `pytest --durations=0`,
# 2026-12-02). The README's `pytest -n 2 --dist loadfile --no-loadscope-reorder` hands whole files
# to two workers in this order, so the long files start first and the short ones fill in at the end:
# both workers finish at about the same time.
SLOWEST_FILES = ["test_notebooks.py",  # 259 s: three runs of each notebook (alt text read from the first)
                 "test_accessibility_browser.py",  # 227 s: each notebook in JupyterLab, axe, keyboard
                 "test_isolation.py", "test_grade_class.py",  # 155, 144 s
                 "test_diagnosis.py", "test_grade_nbgrader.py", "test_gpt2_notebooks.py",  # 130, 123, 119 s
                 "test_blind_answers_judged.py", "test_benches.py", "test_grade_otter.py",  # 99, 83, 66 s
                 "test_mistakes_01_03.py"]  # 68 s


def pytest_collection_modifyitems(items):
    first = {name: rank for rank, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))  # stable: the rest keep their order


@pytest.fixture(autouse=True)
def no_outside_lookup():
    """Fail any test that tried to reach another host, even if the library swallowed the refusal."""
    before = len(OUTSIDE_LOOKUPS)
    yield
    assert OUTSIDE_LOOKUPS[before:] == [], f"this test tried to reach the network: {OUTSIDE_LOOKUPS[before:]}"


@pytest.fixture
def disk_full_at(monkeypatch):
    """disk_full_at(n) -> the sizes written so far: the n-th temporary that core.files.write_set writes fails
    as a full disk does (ENOSPC), the ones before it are written."""
    import errno

    from helpers.core import files
    real_write, calls = files._write_temporary, []

    def fill(n: int) -> list[int]:
        def fills_up(fd, data):
            calls.append(len(data))
            if len(calls) == n:
                os.close(fd)
                raise OSError(errno.ENOSPC, "No space left on device")
            real_write(fd, data)
        monkeypatch.setattr(files, "_write_temporary", fills_up)
        return calls
    return fill


@pytest.fixture
def full_draw_of():
    """full_draw_of(frame) -> (blitted, full): a widget Frame's last picture, and the same
    figure drawn whole from scratch. Blitting must not change a single pixel."""
    def draw(frame):
        blitted = np.asarray(frame.canvas.buffer_rgba()).copy()
        for artist in frame.moving:
            artist.set_animated(False)
        try:
            frame.canvas.draw()
            return blitted, np.asarray(frame.canvas.buffer_rgba()).copy()
        finally:
            for artist in frame.moving:
                artist.set_animated(True)
            frame.invalidate()
    return draw


@pytest.fixture(scope="session")
def walk_one():
    """Notebook 01's layer: walkthrough-1's single head of 768 reading "I like to draw" (as trained)."""
    from helpers.core.walkthrough import walkthrough_layer

    return walkthrough_layer("classroom", n_heads=1)


@pytest.fixture(scope="session")
def walk_twelve():
    """Notebooks 02-03's layer: walkthrough-12's twelve heads of 64 reading "I like to draw" (as trained)."""
    from helpers.core.walkthrough import walkthrough_layer

    return walkthrough_layer("classroom", n_heads=12)


KERNEL_START_RACE = "Kernel died before replying to kernel_info"


def execute_once_started(make_client, **kwargs):
    """make_client().execute(**kwargs), with one fresh client when the kernel died while it started: kernels that
    test processes start at once can be handed the same TCP port (jupyter_client picks a free one, then lets it
    go). Seen once in 18 full runs. A failure in a cell is never run again."""
    try:
        return make_client().execute(**kwargs)
    except RuntimeError as err:
        if KERNEL_START_RACE not in str(err):
            raise
    return make_client().execute(**kwargs)
