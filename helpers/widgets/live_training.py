"""Train it yourself (notebook 08): a recipe trains in a background thread while a plot updates.

Thin: the training loop is helpers.train's (passed in as `train`, since widgets sit below the command),
the scores come from analysis/formation.py's Probe, the figure from figures/formation_plots.py. The
training runs in a thread, so the kernel stays free to hear the Stop button; Stop ends the run at the
next step (the trainer's own Ctrl-C path) and the plot keeps what was drawn.
"""

from __future__ import annotations

import html
import threading
import time

from ..analysis.formation import THRESHOLD, Probe, first_formed
from ..core.arguments import whole_number
from ..core.language import vocabulary
from ..figures.formation_plots import LivePlot
from .frame import Frame, show_png

EVALUATIONS = 40  # probes along a run: one every steps / 40 (~49 steps of notebook 08's recipe)


class LiveTraining:
    """Press Train: `train(recipe, seed, on_step)` runs in a thread; every steps / EVALUATIONS steps the
    model is probed on held-out stories and the plot redrawn. Stop stops it cleanly. In code and tests:
    start(), stop(), wait(); `result` holds what was measured, `error` a failure's one line."""

    DPI = 80

    def __init__(self, train, recipe: str = "induction", seed: int = 22, n_stories: int = 32, markers: bool = False):
        """markers: whether `recipe` writes its lists with `list :` / `again :` (only notebook 08's does not)."""
        import ipywidgets as W

        if not callable(train):  # found at the first press of Train otherwise, in a thread
            raise TypeError(f"LiveTraining's first argument is the function that trains, not {type(train).__name__}; "
                            f"pass H.train_live, as in notebook 08.")
        known = getattr(train, "recipes", None)  # H.train_live's recipes (a function of one's own may have none)
        if known is not None and recipe not in known:
            raise ValueError(f"Unknown recipe {recipe!r}; choose one of {', '.join(known)}.")
        seed = whole_number(seed, "seed", 0, 10_000, example="22")
        n_stories = whole_number(n_stories, "n_stories", 1, 1000, example="32")  # held-out stories probed
        self.train, self.recipe, self.probe = train, recipe, Probe(vocabulary(), n_stories, markers)
        self.thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.result: dict = {}
        self.error = ""
        self.redraws = 0
        self.seed_box = W.BoundedIntText(value=seed, min=0, max=10_000, description="seed",
                                         layout=W.Layout(width="160px"))
        self.train_button = W.Button(description="Train", icon="play", button_style="success")
        self.stop_button = W.Button(description="Stop", icon="stop", disabled=True)
        self.progress = W.IntProgress(value=0, min=0, max=1, description="step", layout=W.Layout(width="420px"))
        self.status, self.image = W.HTML("Press <b>Train</b>: a few minutes on a 2-core laptop."), W.Image(format="png")
        for widget, name in ((self.train_button, "live-train"), (self.stop_button, "live-stop"),
                             (self.image, "live-plot"), (self.status, "live-status"), (self.progress, "live-progress")):
            widget.add_class(name)
        self.train_button.on_click(lambda _: self.start())
        self.stop_button.on_click(lambda _: self.stop())
        self.widget = W.VBox([W.HBox([self.seed_box, self.train_button, self.stop_button, self.progress]),
                              self.status])  # the plot joins at its first picture: no empty image before

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def start(self) -> bool:
        """Start a run with the seed in the box; False while one is running."""
        if self.thread is not None and self.thread.is_alive():
            return False
        self._stop.clear()
        self.result, self.error, self.seed = {"steps": [], "losses": [], "eval_steps": [], "induction": [],
                                             "accuracy": []}, "", int(self.seed_box.value)
        self.plot = self.frame = None
        self.train_button.disabled, self.stop_button.disabled = True, False
        self.started = time.perf_counter()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return True

    def stop(self) -> None:
        """Ask the run to stop at its next step (what was drawn stays)."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> dict:
        """Block until the run ends (tests, and a notebook run headless); return what was measured."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.result

    def _run(self) -> None:
        try:
            self.train(self.recipe, self.seed, self._on_step)
            self._finish("finished")
        except KeyboardInterrupt as stop:  # the trainer's Stopped: "stopped at step N of M; nothing written"
            self._finish(str(stop).split(";")[0] or "stopped")
        except Exception as err:  # a widget shows one line, never a traceback
            self.error = f"⚠ training failed: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
            self.status.value = html.escape(self.error)
        finally:
            self.train_button.disabled, self.stop_button.disabled = False, True

    def _on_step(self, step: int, steps: int, loss: float, model) -> None:
        if self._stop.is_set():
            raise KeyboardInterrupt  # train() turns it into Stopped, naming the step
        r = self.result
        r["steps"].append(step)
        r["losses"].append(loss)
        if self.plot is None:
            self.progress.max = steps
            self.plot = LivePlot(steps, self.probe(model)["induction"].shape[1])
            self.frame = Frame(self.plot.fig, dpi=self.DPI)
        every = max(1, steps // EVALUATIONS)
        if step % every == 0 or step == steps - 1:
            scores = self.probe(model)
            r["eval_steps"].append(step)
            r["induction"].append(scores["induction"][-1])  # the last layer's heads: (H,)
            r["accuracy"].append(scores["list_accuracy"])
            self._draw()
        self.progress.value = step + 1

    def _draw(self) -> None:
        r = self.result
        self.plot.update(r["steps"], r["losses"], r["eval_steps"], r["induction"], r["accuracy"])
        self.frame.invalidate(layout=False)
        show_png(self.image, self.frame)
        if self.image not in self.widget.children:
            self.widget.children = (*self.widget.children, self.image)
        self.redraws += 1

    def formed(self) -> tuple[int | None, int | None]:
        """(step, head) where a last-layer head's induction score first reached THRESHOLD in this run."""
        r = self.result
        return first_formed(r["eval_steps"], r["induction"]) if r.get("eval_steps") else (None, None)

    def _finish(self, how: str) -> None:
        step, head = self.formed()
        r, seconds = self.result, time.perf_counter() - self.started
        found = (f"a layer-1 head, H{head}, first reached an induction score of {THRESHOLD} at step {step}"
                 if step is not None else f"no layer-1 head reached an induction score of {THRESHOLD}")
        last = f"; lists said again at the last probe: {r['accuracy'][-1]:.0%}" if r["accuracy"] else ""
        self.status.value = html.escape(f"{how} after {len(r['steps'])} steps in {seconds:.0f} s (seed {self.seed}): "
                                        f"{found}{last}.")
