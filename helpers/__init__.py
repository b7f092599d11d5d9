"""Companion code for the multi-head attention notebooks.

Everything a notebook needs is importable from here: `import helpers as H`.
Data flows one way: text -> tokens -> model (or one attention layer) -> attention tensors -> figures.
"""

# --- models, tokens and runs (model.py, tokenizer.py, language.py, weights.py, catalog.py, run.py)
from .catalog import LanguageModel, load_model, pick_model, shipped_models
from .language import RELATIONS, StoryWriter, vocabulary
from .model import GPT, GPTConfig, head_weights
from .run import Run, run_sentence
from .tokenizer import BOS, WordTokenizer, split_words

# --- attention math, the MultiHead module, walkthrough data (attention.py, multihead.py, walkthrough.py)
from .attention import (HeadSteps, MultiHeadSteps, attention_param_breakdown, attention_param_count, causal_mask,
                        decompress, mask_future, merge_heads, multi_head, multi_head_from, project, raw_scores,
                        recombination_matrix, scale, single_head, softmax_over_keys, split_heads, weighted_sum)
from .multihead import MultiHead
from .walkthrough import Walkthrough, seeded_layer, walkthrough_layer

# --- plots, slide export, exercise checks (plots.py, export.py, checks.py)
from .export import save_for_slides, slide_style
from .plots import plot_attention, plot_heads, plot_matmul, plot_recombination, plot_vectors, plot_word_weights
from .checks import (check_attention_weights, check_masked_weights, check_merge_heads, check_one_head,
                     check_recombine, check_split_heads, check_weighted_sum)
from .capstone import check_multihead
from .solutions import solution

# --- GPT-2 small (gpt2.py)
from .gpt2 import download_gpt2, drop_first_token, load_gpt2

# --- the 144-head views and the explorer (views.py, explorer.py, deck.py)
from .views import (AllHeadsView, HeadView, TokenLinksView, head_mosaic, mosaic_cell, plot_all_heads, plot_head,
                    plot_token_links)
from .explorer import Explorer, check_induction_prediction, check_previous_word_head, induction_prediction
from .deck import SLIDES, export_deck
from .slidecheck import check_slide
from .animations import build_animations, one_head_animation, recombination_animation, save_animation

# --- head counts and the slider (headcount.py, slider.py)
from .headcount import (HEAD_COUNTS, SENTENCE, WIDTH, available_head_counts, check_concat_shape,
                        check_head_size_and_params, describe_shapes, head_shapes, load_variant, loss_by_heads,
                        merge_head_groups, merged_loss, merged_maps, merged_model, plot_head_count_results,
                        plot_loss_vs_heads, plot_merge_example, repeat_accuracy_by_heads)
from .slider import HeadCountExplorer

# --- head scores, knock-outs and circuits (scores.py, ablation.py, circuit.py)
from .scores import (PUBLISHED_GPT2_HEADS, best_head_types, describe_links, duplicate_token_scores, first_token_scores,
                     generic_scores, held_out_stories, induction_pattern_scores, induction_scores, plot_head_types,
                     plot_ranked, plot_score_tables, previous_token_scores, published_head_ranks, ranked_heads,
                     relation_pairs, relation_scores, repeated_random_tokens, story_attentions, word_scores)
from .scores import (SCORED_RELATIONS, offset_baseline, relation_report, resting_scores,  # positional patterns first
                     scored_stories)
from .ablation import (KnockoutExplorer, check_knockout_prediction, check_previous_token_detector, forced_accuracy,
                       head_means, knock_out, knockout_summary, next_word_change, prediction_bars)
from .ablation import KNOCKOUT_SENTENCE, forced_scores, knockout_control, low_scorers  # control; where heads look
from .circuit import layer_knockouts, readers_score  # does removing a head change where others look?
