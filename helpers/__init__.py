"""Companion code for the multi-head attention notebooks: `import helpers as H`, then `H.name`.

The package is built in layers; each imports only from the layers above it in this list
(see helpers/README.md):

    core/       torch only: attention maths, the model, tokens, weights, one run of a sentence
    analysis/   numbers about heads, no matplotlib: scores, knock-outs, head counts, captions
    figures/    matplotlib, no ipywidgets: slide geometry and export, plots, views, the deck
    widgets/    ipywidgets: the slider, the explorer, the knock-out explorer
    exercises/  the checks of every notebook and their solutions (uses core, analysis, figures)

This file gathers only the names the notebooks, the README and the teacher's guide call (and the
verdict the grader's exported test cells call). Tests and scripts import from the modules.

The names load on first use (PEP 562), so `import helpers.core` or `python -m helpers.train` never
pays for matplotlib or ipywidgets, and a notebook pays for each layer only when it first uses it.
"""

from __future__ import annotations

import importlib

# Where each public name lives, grouped in notebook order: {module: [names]}.
_MODULES: dict[str, list[str]] = {
    # --- every notebook: models, the classroom language, one run of a sentence ----------------------
    ".core.catalog": ["load_model", "pick_model"],
    ".core.model": ["head_weights"],
    ".core.language": ["RELATIONS"],
    ".core.run": ["run_sentence"],
    ".core.gpt2": ["drop_first_token"],
    # --- 01-03: one head, heads of 64, decompression and recombination ------------------------------
    ".core.walkthrough": ["walkthrough_layer"],
    ".analysis.walkthrough_heads": ["subject_scores", "subject_weights"],
    ".analysis.recombination": ["head_scaling"],
    ".core.attention": ["split_heads", "attention_param_breakdown", "attention_param_count",
                        "recombination_matrix"],  # students reach for it in 03's recombine (tests/data/blind_round4.py)
    ".core.multihead": ["MultiHead"],
    ".figures.plots": ["plot_attention", "plot_word_weights", "plot_heads", "plot_matmul", "plot_recombination"],
    ".figures.animations": ["one_head_animation", "recombination_animation", "save_animation"],
    ".exercises.attention_checks": ["check_attention_weights", "check_masked_weights", "check_weighted_sum"],
    ".exercises.multihead_checks": ["check_one_head", "check_split_heads", "check_merge_heads", "check_recombine"],
    ".exercises.capstone": ["check_multihead"],
    ".exercises.solutions": ["solution"],
    ".exercises.verdict": ["assert_passed"],  # the nbgrader / otter-grader test cells (python -m helpers.grade)
    # --- 04: how many heads? -------------------------------------------------------------------------
    ".analysis.headcount": ["HEAD_COUNTS", "SENTENCE", "WIDTH", "shapes_table", "load_variant", "loss_by_heads",
                            "merge_head_groups", "merged_maps", "merged_loss"],
    ".figures.headcount_plots": ["plot_head_count_results", "plot_merge_example"],
    ".widgets.slider": ["HeadCountExplorer"],
    ".exercises.headcount_checks": ["check_head_size_and_params", "check_concat_shape"],
    # --- 05: all 144 heads ---------------------------------------------------------------------------
    ".figures.mosaic": ["head_mosaic", "mosaic_cell", "plot_all_heads"],
    ".figures.views": ["plot_head", "plot_token_links"],
    ".figures.map_table": ["map_table"],
    ".widgets.explorer": ["Explorer"],
    ".figures.page": ["export_page", "export_slider_page"],
    ".analysis.detectors": ["previous_token_scores", "first_token_scores", "word_scores", "generic_scores",
                            "published_head_ranks", "induction_match"],
    ".exercises.head_checks": ["check_previous_word_head", "induction_prediction", "check_induction_prediction",
                               "check_knockout_prediction",
                               "knockout_verdict"],  # the grader's exported test cells (grade/lessons.py)
    # --- 06: what each head learns (position first, then grammar), then knock-outs --------------------
    ".analysis.relations": ["SCORED_RELATIONS", "relation_pairs", "links_table", "scored_stories",
                            "relation_scores", "ranked_heads", "relation_report",
                            "head_types", "type_counts", "grammar_margins", "back_scores"],
    ".figures.score_plots": ["plot_score_tables", "plot_ranked", "plot_head_types"],
    ".analysis.knockout": ["KNOCKOUT_SENTENCE", "forced_accuracy", "knockout_summary", "layer_knockouts",
                           "readers_score"],
    ".figures.knockout_plots": ["prediction_bars"],
    ".widgets.knockout": ["KnockoutExplorer"],
    # --- 07: heads that share keys and values (multi-query and grouped-query attention) --------------
    ".analysis.kvcache": ["kv_cache_table", "head_size", "head_sizes_table"],
    ".analysis.listloss": ["loss_split_table"],
    ".analysis.seeds": ["seed_table"],
    ".analysis.kvheads": ["KV_COUNTS", "variant_name", "kv_results", "kv_results_table", "similarity_by_kv_heads",
                          "pooled_model", "pooled_results", "pool_source", "pooling_on_text", "pooling_table"],
    ".figures.kv_plots": ["plot_kv_cache", "plot_kv_results", "plot_group_similarity", "plot_pooled",
                          "plot_pooling_on_text"],
    ".widgets.kv_slider": ["KVHeadExplorer"],
    ".exercises.kv_checks": ["check_kv_cache", "check_grouped_attention"],
    # --- 08: watch the heads learn (snapshots along training, the formation step, train it yourself) ---
    ".core.snapshots": ["load_snapshots"],
    ".analysis.formation": ["shipped_record", "formation", "formation_table", "formation_seeds_table"],
    ".figures.formation_plots": ["plot_formation_curves", "plot_knockout_along", "formation_animation"],
    ".widgets.training_slider": ["TrainingStepExplorer"],
    ".widgets.live_training": ["LiveTraining"],
    ".train": ["train_live"],
    ".exercises.formation_checks": ["check_formation_step", "check_knockout_along"],
    # --- slides: one-call export, the layout check, the lecture deck ---------------------------------
    ".figures.slide": ["slide_style", "check_slide"],
    ".figures.export": ["save_for_slides"],
    # --- every notebook: a figure shown with its words as alt text (a screen reader reads them) ---------
    ".figures.common": ["show_figure"],
    ".figures.deck": ["export_deck"],
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}
__all__ = list(_WHERE)


def __getattr__(name: str):
    """Import the module that defines `name` the first time a notebook asks for it."""
    if name not in _WHERE:
        raise AttributeError(f"module 'helpers' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    if name.startswith("check_") and name != "check_slide":  # one line for a wrong call, one torch thread
        value = importlib.import_module(".exercises.grading", __name__).notebook_check(value)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
