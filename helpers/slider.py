"""The head-count slider (notebook 04): models trained with 1 to 12 heads at one width.

Pure functions first (shapes, parameter counts, losses, merging heads), then the
`HeadCountExplorer` widget that wires a slider to them. The six "heads-N" models
are 2 layers of width 96 trained on the classroom language; only the number of
heads differs, so moving the slider shows what the head count changes.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .attention import attention_param_count, check_heads, multi_head_from
from .catalog import LanguageModel, load_model, manifest
from .model import GPT, head_weights
from .run import run_sentence

HEAD_COUNTS = (1, 2, 3, 4, 6, 12)  # every divisor of 12 (and of the width 96) we trained
WIDTH = 96
MERGE_SOURCE = 12  # the merge thought experiment works on the trained 12-head model
SENTENCE = "list : red fox old mat . again : red fox old mat ."


# --- shapes and counts ---------------------------------------------------------------------
def head_shapes(width: int, n_heads: int, n_tokens: int) -> dict[str, tuple[int, ...]]:
    """Every shape in one multi-head attention layer for a sentence of n_tokens (T)."""
    d, T = check_heads(width, n_heads), n_tokens
    if not (isinstance(T, int) and T > 0):
        raise ValueError(f"n_tokens={n_tokens!r} must be a positive whole number.")
    return {
        "input": (T, width),
        "W_Q, W_K, W_V (per head)": (width, d),
        "Q, K, V (per head)": (T, d),
        "scores (per head)": (T, T),
        "attention weights (per head)": (T, T),
        "head output (per head)": (T, d),
        "concatenation": (T, width),  # n_heads outputs of d numbers side by side
        "recombination W_O": (width, width),
        "output": (T, width),
    }


def describe_shapes(width: int, n_heads: int, n_tokens: int) -> str:
    """head_shapes as aligned text lines, for printing."""
    rows = head_shapes(width, n_heads, n_tokens)
    return "\n".join(f"{name:<30}{' × '.join(map(str, shape))}" for name, shape in rows.items())


# --- the trained variants ------------------------------------------------------------------
@lru_cache(maxsize=None, typed=True)  # typed: True is not the head count 1
def load_variant(n_heads: int) -> LanguageModel:
    """The model "heads-N", loaded once per kernel so the slider answers at once."""
    return load_model(f"heads-{check_head_count(n_heads)}")


def available_head_counts() -> list[int]:
    """The head counts whose trained model is shipped in data/."""
    shipped = manifest()
    return [h for h in HEAD_COUNTS if f"heads-{h}" in shipped]


def check_head_count(n_heads) -> int:
    if n_heads not in HEAD_COUNTS or isinstance(n_heads, bool):
        raise ValueError(f"No model trained with {n_heads!r} heads; choose one of {', '.join(map(str, HEAD_COUNTS))}.")
    return int(n_heads)


def loss_by_heads() -> dict[int, float]:
    """Held-out loss of every shipped heads-N model, from its recorded info."""
    shipped = manifest()
    return {h: float(shipped[f"heads-{h}"]["info"]["held_out_loss"]) for h in available_head_counts()}


def plot_loss_vs_heads(losses: dict[int, float], current: int | None = None, ax=None) -> Figure:
    """Held-out loss against head count; a ring marks the `current` head count."""
    return LossPlot(losses, current, ax).fig


class LossPlot:
    """The small loss-versus-heads plot; `.update(current)` moves the marker only."""

    def __init__(self, losses: dict[int, float], current: int | None = None, ax=None):
        if not losses:
            raise ValueError("No losses to plot; train the heads-N models first (python -m helpers.train heads-12).")
        if ax is None:
            ax = Figure(figsize=(3.6, 2.6), layout="constrained").add_subplot()
        self.ax, self.fig, self.losses = ax, ax.figure, dict(sorted(losses.items()))
        hs = list(self.losses)
        ax.plot(hs, list(self.losses.values()), "o-", color="#0072B2", lw=2)
        (self.marker,) = ax.plot([], [], "o", ms=14, mfc="none", mec="#D55E00", mew=3)
        ax.set_xscale("log", base=2)
        ax.set_xticks(hs, [str(h) for h in hs])
        ax.minorticks_off()
        ax.set_xlabel("heads (width 96 for all)")
        ax.set_ylabel("held-out loss")
        ax.set_title("lower is better", fontsize=10)
        self.update(current)

    def update(self, current: int | None) -> None:
        if current is None or current not in self.losses:
            self.marker.set_data([], [])
        else:
            self.marker.set_data([current], [self.losses[current]])


# --- merging heads: a thought experiment on trained weights -----------------------------------
def merge_head_groups(weights: dict[str, torch.Tensor], group_size: int) -> dict[str, torch.Tensor]:
    """Join each run of `group_size` neighbouring heads into one wider head.

    Head j of the result owns the query, key and value slices of heads j·g … j·g+g-1 side
    by side, and the matching rows of W_O. No number changes: only where the width is cut.
    """
    H, D, d = weights["W_Q"].shape  # (H, D, d)
    if not isinstance(group_size, int) or group_size < 1 or H % group_size:
        raise ValueError(f"group_size={group_size!r} must divide the {H} heads; choose one of "
                         f"{', '.join(str(g) for g in range(1, H + 1) if H % g == 0)}.")
    G, g = H // group_size, group_size
    out = {}
    for name in ("W_Q", "W_K", "W_V"):
        out[name] = weights[name].reshape(G, g, D, d).permute(0, 2, 1, 3).reshape(G, D, g * d)  # (G, D, g·d)
        bias = "b_" + name[-1]
        out[bias] = weights[bias].reshape(G, g * d)  # (G, g·d)
    out["W_O"] = weights["W_O"].reshape(G, g * d, D)  # (G, g·d, D): the rows stay in order
    out["b_O"] = weights["b_O"]
    return out


@torch.no_grad()
def layer_inputs(lm: LanguageModel, sentence: str) -> tuple[list[str], list[torch.Tensor]]:
    """The tokens, and what each layer's attention reads (after its LayerNorm): L × (T, D)."""
    tokens = lm.tokenizer.tokens(sentence)
    run_sentence(lm, sentence)  # checks the length against the context
    x = lm.model.embed(torch.tensor([lm.tokenizer.encode(sentence)]))  # (1, T, D)
    inputs = []
    for block in lm.model.h:
        inputs.append(block.ln_1(x)[0])  # (T, D)
        x, _ = block(x)
    return tokens, inputs


@torch.no_grad()
def merged_maps(lm: LanguageModel, sentence: str, group_size: int) -> tuple[list[str], torch.Tensor]:
    """Every layer's maps with heads merged in groups, each layer reading the trained model's input.

    Returns the tokens and (L, H / group_size, T, T) maps.
    """
    tokens, inputs = layer_inputs(lm, sentence)
    maps = [multi_head_from(x, merge_head_groups(head_weights(lm.model, i), group_size), causal=True).weights
            for i, x in enumerate(inputs)]  # L × (H / group_size, T, T)
    return tokens, torch.stack(maps)


def merged_model(lm: LanguageModel, group_size: int) -> GPT:
    """The same weights read as fewer, wider heads: merging is only moving the cuts."""
    cfg = lm.config
    if cfg.n_head % group_size:
        raise ValueError(f"group_size={group_size} must divide the {cfg.n_head} heads of {lm.name}.")
    config = type(cfg)(**{**cfg.to_dict(), "n_head": cfg.n_head // group_size})
    model = GPT(config)
    model.load_state_dict(lm.model.state_dict())
    return model.eval()


@lru_cache(maxsize=None, typed=True)
def merged_loss(group_size: int) -> float:
    """Held-out loss of heads-12 with every layer's heads merged in groups (no retraining)."""
    from .train import evaluate  # the same held-out stories the trained models were scored on

    lm = load_variant(MERGE_SOURCE)
    return float(evaluate(merged_model(lm, group_size), lm.tokenizer)["held_out_loss"])


def plot_merge_example(sentence: str = SENTENCE, layer: int = 1, first: int = 0, group_size: int = 3) -> Figure:
    """Thought experiment, one group: heads first … first+g-1 of heads-12 and the single head they merge into."""
    from .views import HeadView

    lm = load_variant(MERGE_SOURCE)
    if first % group_size or not 0 <= first < lm.config.n_head:
        raise ValueError(f"first={first} must be a head that starts a group of {group_size} (0, {group_size}, …).")
    tokens, merged = merged_maps(lm, sentence, group_size)  # (L, 12 / g, T, T)
    members = run_sentence(lm, sentence).attentions[layer, first:first + group_size]  # (g, T, T)
    fig = Figure(figsize=(3.4 * (group_size + 1), 3.8), layout="constrained")
    axes = fig.subplots(1, group_size + 1)
    for i, ax in enumerate(axes[:-1]):
        HeadView(members[i], tokens, ax=ax, title=f"trained head {layer}.{first + i} ({WIDTH // 12} numbers)")
    HeadView(merged[layer, first // group_size], tokens, ax=axes[-1],
             title=f"merged: one head of {group_size * WIDTH // 12}")
    fig.suptitle(f"Thought experiment on trained weights (not a trained model): {group_size} heads of layer "
                 f"{layer} joined into one", fontsize=12)
    return fig


# --- exercise checks -------------------------------------------------------------------------
def _verdict(name: str, fn, cases, want, hints) -> bool:
    """Run fn on every case; print one line: pass, not attempted, raised, or the likely mistake."""
    for case in cases:
        try:
            got = fn(*case)
        except Exception as err:  # the student's bug, reported instead of stopping the notebook
            print(f"✗ {name}: your function raised {type(err).__name__}: {err}")
            return False
        if got is None:
            print(f"… {name}: not attempted yet (the function returned None). The notebook goes on with the reference.")
            return False
        expected = want(*case)
        if tuple(got) != expected:
            print(f"✗ {name}{case}: expected {expected}, got {tuple(got)}; {hints(case, tuple(got), expected)}.")
            return False
    print(f"✓ {name}: right for all {len(cases)} cases.")
    return True


def check_head_size_and_params(fn) -> bool:
    """Exercise: fn(width, n_heads) -> (head size, attention parameters of the layer, biases included)."""
    def hints(case, got, want):
        (width, n), (size, params) = case, (list(got) + [None, None])[:2]
        d = width // n
        one_head = 3 * (width * d + d) + d * width
        if size != d:
            return "the head size is width / heads"
        if params in (one_head, one_head + width) and n > 1:
            return "that is one head's share: multiply by the number of heads (and add the output bias)"
        if params == 4 * width ** 2:
            return "you left out the biases: 3·width for Q, K, V together and width for the output"
        return "per head 3·(width·d + d) for Q, K, V and d·width for its rows of W_O; then add width"
    return _verdict("head_size_and_params", fn, [(96, 1), (96, 4), (96, 12), (768, 12), (64, 8)],
                    lambda w, n: (w // n, attention_param_count(w, n)), hints)


def check_concat_shape(fn) -> bool:
    """Exercise: fn(n_tokens, width, n_heads) -> shape of the concatenated head outputs."""
    def hints(case, got, want):
        T, width, n = case
        if got == (T, width // n):
            return "that is one head's output; concatenation puts all heads side by side"
        if len(got) == 3:
            return "that keeps a heads axis (stacking); concatenating joins the heads' columns"
        return "rows are tokens, columns are heads × head size"
    return _verdict("concat_shape", fn, [(5, 96, 12), (9, 96, 1), (4, 768, 12), (7, 96, 3)],
                    lambda T, w, n: head_shapes(w, n, T)["concatenation"], hints)


# --- the widget --------------------------------------------------------------------------------
def figure_png(fig: Figure, dpi: int = 80) -> bytes:
    """The figure as PNG bytes, for an ipywidgets Image (renders in JupyterLab, Voilà and nbclient).

    One Agg draw and a light PNG compression: savefig would draw twice and compress harder,
    which is most of a slider move's time."""
    from .views import canvas_png

    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas_png(canvas)


def fit_top_left(ax, rows: int, cols: int) -> None:
    """Show a rows × cols image at equal aspect in the top-left of a fixed axes box.

    The box never moves, so no layout pass is needed when the head count changes the
    mosaic's shape; the labels on the top and left edges stay next to the image.
    """
    pos, (fig_w, fig_h) = ax.get_position(), ax.figure.get_size_inches()
    box = (pos.width * fig_w) / (pos.height * fig_h)  # width / height of the axes box
    x_span, y_span = (cols, cols / box) if cols / rows > box else (rows * box, rows)
    ax.set_xlim(-0.5, x_span - 0.5)
    ax.set_ylim(y_span - 0.5, -0.5)  # rows grow downwards, as in the maps


def mosaic_size(view) -> tuple[int, int]:
    """Rows and columns of an AllHeadsView's mosaic image."""
    L, H, T, _ = view.shape
    return L * (T + 1) - 1, H * (T + 1) - 1


def freeze_layout(fig: Figure) -> None:
    """Lay the figure out once, then keep the axes where they are: redraws skip the layout pass."""
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    fig.draw_without_rendering()
    fig.set_layout_engine("none")


class HeadCountExplorer:
    """A slider over the trained head counts, and a second one that merges heads-12's heads.

    Drive it from code or tests with set_heads(n), set_sentence(s), set_merge(k), export();
    the widgets call the same methods. A bad value shows one line and keeps the last good view.
    """

    DPI = 80

    def __init__(self, sentence: str = SENTENCE, heads: int = 4, merge: int = 1, folder: str = "figures"):
        import ipywidgets as W

        self.counts = available_head_counts()
        if not self.counts:
            raise FileNotFoundError("No heads-N model in data/; train them with `python -m helpers.train heads-12` …")
        self.heads, self.merge, self.sentence, self.folder = check_head_count(heads), merge, sentence, folder
        self.run = run_sentence(load_variant(self.heads), sentence)
        self.merge_tokens, self.merge_maps = merged_maps(load_variant(MERGE_SOURCE), sentence, merge)
        self.maps_view = self._map_view(self.run.attentions, self.run.tokens)
        self.merge_view = self._map_view(self.merge_maps, self.merge_tokens)
        self.maps_fig, self.merge_fig = self.maps_view.fig, self.merge_view.fig
        self.loss_plot = LossPlot(loss_by_heads(), self.heads)
        for fig in (self.maps_fig, self.merge_fig, self.loss_plot.fig):
            freeze_layout(fig)
        self._loss_png: dict[int, bytes] = {}  # the loss plot only moves its marker: one PNG per head count
        self._build_widgets(W)
        self._draw_heads()
        self._draw_merge()

    @staticmethod
    def _map_view(maps, tokens):
        """An all-heads grid in a fixed box (see fit_top_left), the sentence written underneath."""
        from .views import AllHeadsView

        fig = Figure(figsize=(10, 3.6), layout="constrained")
        view = AllHeadsView(maps, tokens, ax=fig.add_subplot())
        view.ax.set_aspect("auto")
        view.ax.spines[:].set_visible(False)
        view.reading = view.ax.set_xlabel(" ", fontsize=10, loc="left")  # "reading: …", set on each draw
        view.ax.xaxis.set_label_position("bottom")
        return view

    def _show(self, view, maps, tokens, title: str) -> bytes:
        """New maps into the existing image, refit the box, one PNG."""
        view.update(maps, tokens=tokens, title=title)
        view.reading.set_text("reading: " + " ".join(tokens))
        fit_top_left(view.ax, *mosaic_size(view))
        return figure_png(view.fig, self.DPI)

    def _build_widgets(self, W) -> None:
        self._syncing = False
        self.sentence_box = W.Text(value=self.sentence, description="sentence", continuous_update=False,
                                   layout=W.Layout(width="95%"))
        self.heads_slider = W.SelectionSlider(options=self.counts, value=self.heads, description="heads",
                                              continuous_update=False)
        self.merge_slider = W.SelectionSlider(options=[g for g in HEAD_COUNTS if MERGE_SOURCE % g == 0],
                                              value=self.merge, description="merge groups of",
                                              continuous_update=False, style={"description_width": "initial"})
        self.export_button = W.Button(description="Export for slides", icon="download")
        self.status = W.HTML()
        self.info = W.HTML()
        self.merge_info = W.HTML()
        px = lambda fig: W.Layout(width=f"{round(fig.get_figwidth() * self.DPI)}px", max_width="100%",
                                  height="auto", flex="none")  # natural size: sharp, never stretched
        self.maps_image = W.Image(format="png", layout=px(self.maps_fig))
        self.loss_image = W.Image(format="png", layout=px(self.loss_plot.fig))
        self.merge_image = W.Image(format="png", layout=px(self.merge_fig))
        for widget, name in ((self.heads_slider, "heads-slider"), (self.merge_slider, "merge-slider"),
                             (self.info, "heads-info"), (self.maps_image, "heads-maps"),
                             (self.merge_image, "merge-maps"), (self.status, "slider-status")):
            widget.add_class(name)  # names for the browser tests (and for styling)
        self.sentence_box.observe(lambda c: self._from_widget(self.set_sentence, c), "value")
        self.heads_slider.observe(lambda c: self._from_widget(self.set_heads, c), "value")
        self.merge_slider.observe(lambda c: self._from_widget(self.set_merge, c), "value")
        self.export_button.on_click(lambda _: self.export())
        caption = W.HTML("<b>Thought experiment on trained weights, not a trained model:</b> the trained "
                         "12-head model with neighbouring heads merged into wider ones (their query, key and "
                         "value slices side by side). Each merged head must do its group's jobs with one map.")
        self.widget = W.VBox([
            self.sentence_box, W.HBox([self.heads_slider, self.export_button]), self.status,
            self.maps_image, W.HBox([self.info, self.loss_image], layout=W.Layout(align_items="flex-start")),
            caption, self.merge_slider, self.merge_info, self.merge_image])

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _from_widget(self, setter, change) -> None:
        if not self._syncing:
            setter(change["new"])

    def _sync(self, control, value) -> None:
        self._syncing = True
        try:
            control.value = value
        finally:
            self._syncing = False

    def _fail(self, err: Exception) -> bool:
        self.status.value = f"<span style='color:#D55E00'>⚠ {err}</span>"
        return False

    # --- the logic the controls call ---------------------------------------------------
    def set_heads(self, n_heads) -> bool:
        """Show the model trained with n_heads heads; False (and one line) for a bad value."""
        try:
            n = check_head_count(n_heads)
            if n not in self.counts:
                raise ValueError(f"heads-{n} is not shipped in data/; choose one of {self.counts}.")
            run = run_sentence(load_variant(n), self.sentence)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.heads, self.run = n, run
        self._sync(self.heads_slider, n)
        self._draw_heads()
        return True

    def set_sentence(self, sentence) -> bool:
        """Read a new sentence with both the chosen model and the merged one."""
        try:
            run = run_sentence(load_variant(self.heads), sentence)
            tokens, maps = merged_maps(load_variant(MERGE_SOURCE), sentence, self.merge)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.sentence, self.run, self.merge_tokens, self.merge_maps = sentence, run, tokens, maps
        self._sync(self.sentence_box, sentence)
        self._draw_heads()
        self._draw_merge()
        return True

    def set_merge(self, group_size) -> bool:
        """Merge heads-12's neighbouring heads in groups of group_size (1 = as trained)."""
        try:
            if group_size not in self.merge_slider.options or isinstance(group_size, bool):
                raise ValueError(f"Cannot merge 12 heads in groups of {group_size!r}; choose one of "
                                 f"{', '.join(map(str, self.merge_slider.options))}.")
            tokens, maps = merged_maps(load_variant(MERGE_SOURCE), self.sentence, group_size)
        except (ValueError, FileNotFoundError) as err:
            return self._fail(err)
        self.merge, self.merge_tokens, self.merge_maps = group_size, tokens, maps
        self._sync(self.merge_slider, group_size)
        self._draw_merge()
        return True

    def export(self, folder=None) -> list:
        """Write the three figures as PNG, SVG and PDF for slides; return the paths."""
        from .export import save_for_slides

        folder = self.folder if folder is None else folder
        views = (self.maps_view, self.merge_view)
        for view in views:  # on a slide the box changes shape: let matplotlib keep the maps square
            rows, cols = mosaic_size(view)
            view.ax.set_aspect("equal", adjustable="box")
            view.ax.set_xlim(-0.5, cols - 0.5)
            view.ax.set_ylim(rows - 0.5, -0.5)
        try:
            paths = save_for_slides(self.maps_fig, f"heads_{self.heads}_maps", folder)
            paths += save_for_slides(self.loss_plot.fig, "loss_vs_heads", folder, size=(6.0, 4.5))
            paths += save_for_slides(self.merge_fig, f"heads_12_merged_by_{self.merge}", folder)
        except (ValueError, OSError) as err:
            self._fail(err)
            return []
        finally:
            for view in views:
                view.ax.set_aspect("auto")
            for fig in (self.maps_fig, self.merge_fig, self.loss_plot.fig):
                freeze_layout(fig)  # saving for slides laid them out at slide size
            for view in views:
                fit_top_left(view.ax, *mosaic_size(view))
        self.status.value = f"Saved {len(paths)} files in {paths[0].parent}/"
        return paths

    # --- drawing: existing artists get new data, then one PNG each ----------------------
    def _draw_heads(self) -> None:
        n, d = self.heads, WIDTH // self.heads
        self.maps_image.value = self._show(self.maps_view, self.run.attentions, self.run.tokens,
                                           f"heads-{n}: {n} head{'s' * (n > 1)} of {d} numbers, both layers")
        self.loss_plot.update(n)
        if n not in self._loss_png:
            self._loss_png[n] = figure_png(self.loss_plot.fig, self.DPI)
        self.loss_image.value = self._loss_png[n]
        self.info.value = self._info_html()
        self.status.value = ""

    def _info_html(self) -> str:
        n, d, T = self.heads, WIDTH // self.heads, len(self.run.tokens)
        rows = "".join(f"<tr><td>{k}</td><td>{' × '.join(map(str, v))}</td></tr>"
                       for k, v in head_shapes(WIDTH, n, T).items())
        loss = self.loss_plot.losses.get(n)
        return (f"<b class='heads-readout'>{n} head{'s' * (n > 1)}</b> · head size = {WIDTH} / {n} = <b>{d}</b><br>"
                f"<table>{rows}</table>"
                f"attention parameters per layer: <b>{attention_param_count(WIDTH, n):,}</b> "
                f"(4·{WIDTH}² + 4·{WIDTH}, the same for every head count)<br>"
                + (f"held-out loss of heads-{n}: <b>{loss:.3f}</b>" if loss is not None else ""))

    def _draw_merge(self) -> None:
        g = self.merge
        G, d = MERGE_SOURCE // g, g * WIDTH // MERGE_SOURCE
        self.merge_image.value = self._show(
            self.merge_view, self.merge_maps, self.merge_tokens,
            f"THOUGHT EXPERIMENT: heads-12 merged in groups of {g} → {G} head{'s' * (G > 1)} of {d} "
            f"(trained weights, not retrained)")
        trained = self.loss_plot.losses.get(G)
        self.merge_info.value = (
            f"12 heads of 8 → <b>{G} head{'s' * (G > 1)} of {d}</b>. Held-out loss with merged heads "
            f"(no retraining): <b>{merged_loss(g):.3f}</b>"
            + (f"; a model trained with {G} heads: {trained:.3f}" if trained is not None else ""))
        self.status.value = ""
