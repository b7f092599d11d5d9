"""Figures of notebook 08: the curves along training with the formation step marked, and the knock-out.

`FormationCurves` keeps its artists, so the training-step slider moves only its marker lines.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure

from ..analysis.formation import (BUMP_FACTOR, SENTENCE, THRESHOLD, best_head, bump_ratio, check_curves, check_found,
                                  formation, maps_along, shipped_curves)
from ..core.arguments import is_whole_number
from ..core.snapshots import SnapshotRun, load_snapshots
from .animations import Animation, grab_frame
from .common import describe, new_axes, new_figure
from .mosaic import AllHeadsView

FORMS = "#D55E00"  # Okabe-Ito vermillion: the formation step
PREVIOUS_TEXT = "#8A5A00"  # the orange of the previous-word curve, darkened: words need 3:1 contrast on a slide
COLOURS = {"loss": "#0072B2", "list": "#009E73", "induction": "#CC79A7", "previous": "#E69F00", "icl": "#56B4E9"}


def head_name(head) -> str:
    return f"L{head[0]} H{head[1]}"


class FormationCurves:
    """Three panels against training step: held-out loss; list accuracy and the best heads' scores;
    the in-context score. A dashed line marks the formation step, a grey one the step shown."""

    def __init__(self, curves: dict, found: dict, step: int | None = None, size=(10, 7.2)):
        check_curves(curves)
        check_found(found)
        if step is not None and (not is_whole_number(step) or step not in list(curves["steps"])):
            raise ValueError(f"step={step!r} is not a step of these curves; choose one of "
                             f"{[int(s) for s in curves['steps']]}.")
        self.fig = new_figure(figsize=size, layout="constrained")
        self.axes = self.fig.subplots(3, 1, sharex=True)
        steps = curves["steps"]
        induction, previous = found["head"] or best_head(curves, "induction"), found["previous_head"]
        loss_ax, score_ax, icl_ax = self.axes
        loss_ax.plot(steps, curves["loss"], "o-", ms=3, color=COLOURS["loss"])
        late = np.asarray(curves["loss"])[np.asarray(steps) >= 0.3 * steps[-1]]  # the axis shows where heads form
        loss_ax.set(ylabel="held-out loss", ylim=(late.min() - 0.02, late.max() + 0.06))
        loss_ax.text(0.01, 0.95, f"from {curves['loss'][0]:.2f} at step 0 (above this axis)", transform=loss_ax.transAxes,
                     va="top", fontsize="small")
        score_ax.plot(steps, curves["list_accuracy"], "o-", ms=3, color=COLOURS["list"], label="lists said again")
        score_ax.plot(steps, curves["induction"][:, induction[0], induction[1]], "-", color=COLOURS["induction"],
                      label=f"{head_name(induction)} induction score")
        score_ax.plot(steps, curves["previous_list"][:, previous[0], previous[1]], "-", color=COLOURS["previous"],
                      label=f"{head_name(previous)} previous-word score (list words)")
        score_ax.axhline(curves["induction_baseline"], color="grey", ls=":", lw=1.5,
                         label="induction: best fixed offset")
        score_ax.set(ylim=(0, 1.05), ylabel="share")
        icl_ax.plot(steps, curves["in_context"], "o-", ms=3, color=COLOURS["icl"])
        icl_ax.axhline(0, color="grey", lw=0.8)
        icl_ax.set(xlabel="training step", ylabel="in-context score\n(late − early loss)")
        score_ax.axhline(THRESHOLD, color=FORMS, ls=":", lw=1.5, label=f"formed: score ≥ {THRESHOLD}")
        score_ax.legend(loc="center right", fontsize="small", framealpha=0.9)
        if found["step"] is not None:
            before = steps[list(steps).index(found["step"]) - 1]  # the score crosses the bar between these two
            for ax in self.axes:
                ax.axvspan(before, found["step"], color=FORMS, alpha=0.15, lw=0)
                ax.axvline(found["step"], color=FORMS, ls="--", lw=2)
            score_ax.text(found["step"], 0.35, f" {head_name(found['head'])} forms at step {found['step']}",
                          color=FORMS, va="center", fontsize="small")
        if found["previous_step"] is not None:  # the layer-0 head the circuit needs: its own crossing
            score_ax.axvline(found["previous_step"], color=COLOURS["previous"], ls="--", lw=1.5)
            score_ax.text(found["previous_step"], 0.62, f"{head_name(previous)} forms at step {found['previous_step']} ",
                          color=PREVIOUS_TEXT, ha="right", va="center", fontsize="small")
        self.markers = [ax.axvline(steps[0] if step is None else step, color="0.3", lw=3, alpha=0.5, zorder=10,
                                   visible=step is not None) for ax in self.axes]  # the slider's step
        describe(self.fig, curves_words(curves, found))

    def move(self, step: int) -> None:
        """Put the marker lines on `step` (the slider's step)."""
        for line in self.markers:
            line.set_xdata([step, step])
            line.set_visible(True)


def curves_words(curves: dict, found: dict) -> str:
    """The figure's sentence, from the curves' numbers."""
    s = curves["steps"]
    head = f"the induction head {head_name(found['head'])} reaches {THRESHOLD} at step {found['step']}" \
        if found["step"] is not None else f"no induction head reaches {THRESHOLD}"
    others = 0 if found["step"] is None else sum(
        bump_ratio(curves, int(step)) >= BUMP_FACTOR for step in s[list(s).index(found["step"]) + 1:-1])
    bump = "" if found["step"] is None else (
        f"; there the loss falls {bump_ratio(curves, found['step']):.1f} times as fast as around it, and "
        f"{BUMP_FACTOR:g} times or more at {others} later snapshots too")
    previous = "" if found["previous_step"] is None else (
        f"the previous-word head {head_name(found['previous_head'])} reaches {THRESHOLD} at step "
        f"{found['previous_step']}, ")
    return (f"Along {s[-1]} training steps the held-out loss falls from {curves['loss'][0]:.2f} to "
            f"{curves['loss'][-1]:.2f}, lists said again rise from {curves['list_accuracy'][0]:.0%} to "
            f"{curves['list_accuracy'][-1]:.0%}, {previous}and {head}{bump}.")


def plot_formation_curves(curves: dict, found: dict, step: int | None = None) -> Figure:
    """The three curves against training step, the formation step marked (and `step` when given)."""
    return FormationCurves(curves, found, step).fig


def plot_knockout_along(knocked: dict, removed, watched, formed: int | None, ax=None) -> Figure:
    """List accuracy and the induction head's score along training, with and without the layer-0 head."""
    fig, ax = new_axes(ax, (10, 4.2))
    steps = knocked["steps"]
    ax.plot(steps, knocked["accuracy"], "o-", ms=3, color=COLOURS["list"], label="lists said again")
    ax.plot(steps, knocked["accuracy_without"], "o--", ms=3, color=COLOURS["list"], alpha=0.6,
            label=f"… without {head_name(removed)}")
    ax.plot(steps, knocked["score"], "-", color=COLOURS["induction"], label=f"{head_name(watched)} induction score")
    ax.plot(steps, knocked["score_without"], "--", color=COLOURS["induction"], alpha=0.7,
            label=f"… without {head_name(removed)}")
    if formed is not None:
        ax.axvline(formed, color=FORMS, ls="--", lw=2)
    ax.set(ylim=(0, 1.05), xlabel="training step", ylabel="share")
    ax.legend(loc="upper left", fontsize="small", framealpha=0.9)
    last = -1
    describe(ax, f"Removing {head_name(removed)} at the last step moves the list accuracy from "
                 f"{knocked['accuracy'][last]:.0%} to {knocked['accuracy_without'][last]:.0%} and "
                 f"{head_name(watched)}'s induction score from {knocked['score'][last]:.2f} to "
                 f"{knocked['score_without'][last]:.2f}.")
    return fig


def step_grid_title(step: int, tokens_per_step: int) -> str:
    return f"step {step} ({step * tokens_per_step:,} tokens)"


class LivePlot:
    """The live cell's figure: the training loss per step, and every layer-1 head's induction score with the
    list accuracy at each evaluation. update() changes the lines' data; nothing is rebuilt."""

    def __init__(self, steps: int, n_head: int, size=(10, 4.2)):
        self.fig = new_figure(figsize=size, layout="constrained")
        self.loss_ax, self.score_ax = self.fig.subplots(1, 2)
        (self.loss_line,) = self.loss_ax.plot([], [], color=COLOURS["loss"], lw=1)
        self.loss_ax.set(xlim=(0, steps), ylim=(1.4, 5.4), xlabel="training step", ylabel="training loss")
        colours = mpl.colormaps["viridis"](np.arange(n_head) / max(1, n_head - 1))  # colour-blind safe, H0 dark
        self.head_lines = [self.score_ax.plot([], [], lw=1.2, color=colours[h])[0] for h in range(n_head)]
        (self.list_line,) = self.score_ax.plot([], [], "k--", lw=2, label="lists said again")
        self.score_ax.axhline(THRESHOLD, color=FORMS, ls=":", lw=1.5, label=f"formed: score ≥ {THRESHOLD}")
        self.score_ax.set(xlim=(0, steps), ylim=(0, 1.02), xlabel="training step",
                          ylabel="layer-1 heads' induction score")
        self.score_ax.legend(loc="upper left", fontsize="small", framealpha=0.9)
        self.artists = [self.loss_line, self.list_line, *self.head_lines]

    def update(self, steps, losses, eval_steps, induction, accuracy) -> None:
        """steps/losses: every step so far; eval_steps: the evaluated steps, induction (E, H), accuracy (E,)."""
        self.loss_line.set_data(steps, losses)
        induction = np.asarray(induction).reshape(len(eval_steps), -1)
        for h, line in enumerate(self.head_lines):
            line.set_data(eval_steps, induction[:, h] if len(eval_steps) else [])
        self.list_line.set_data(eval_steps, accuracy)
        describe(self.fig, f"Training loss after {len(steps)} steps: {losses[-1]:.2f}." if len(losses) else
                 "Training has not started.")


def formation_animation(run: SnapshotRun | None = None, sentence: str = SENTENCE, curves: dict | None = None) -> Animation:
    """Every head's map at each snapshot (default: notebook 08's shipped run), one frame per step, the formation
    step held longer: `H.save_animation(H.formation_animation())` writes the GIF and its frames, like 01's."""
    run = load_snapshots() if run is None else run
    found = formation(shipped_curves() if curves is None else curves)
    tokens, maps = maps_along(run, sentence)
    tokens_per_step = run.tokens_per_step
    steps = sorted(maps)
    head = found["head"]
    view = AllHeadsView(maps[steps[0]], tokens, title=" ", highlight=head)
    view.fig.set_size_inches(12.8, 6.0)
    view.fit_height(6.0)  # only as tall as two layers of maps need
    canvas = view.fig.canvas
    view.fig.set_dpi(100)
    where = f"{head_name(head)} forms at step {found['step']}" if head else "no induction head forms"
    anim = Animation("heads_forming", "Watch the heads learn",
                     f"Every head's map at {len(steps)} steps of training, from step 0 to {steps[-1]}; {where}.")
    for step in steps:
        note = "  ← the induction head forms" if step == found["step"] else ""
        view.update(maps[step], highlight=head, title=step_grid_title(step, tokens_per_step) + note)
        grab_frame(anim, canvas, 2.0 if step in (found["step"], steps[-1]) else 0.35)
    anim.figure = view.fig
    return anim
