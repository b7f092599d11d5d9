"""Every sentence that speaks in universal words is registered, and true on every input it speaks of.

The scanner reads the markdown of notebooks 01-08 (whichever exist) and the teacher's guide and finds
every sentence with "never", "always", "every…", "only", "none" or "all". Each must match a quote in
CLAIMS below, which names what covers it:
- a test, "file.py::test_name", that checks the sentence on the whole distribution it names (every
  story, head, seed, word of the sentence on screen), not on a mean or on one example;
- or a reason why the word makes no claim about data (a learning goal, an instruction, a definition,
  what the code shown does, a heading, a quote of a misconception);
- or PENDING: a sentence whose test is still to come (none today).
A number a sentence quotes is checked by value in tests/claims_NN.py; a sentence whose universal word rests on
those numbers ("all 39 of our 39 runs") names "test_claims.py::test_claim".
A quote must still be in its source, so a reworded sentence drops out of CLAIMS and must be registered
again. `python tests/test_universal_claims.py` prints the unregistered sentences and every pending one.
The tests at the bottom are the universal checks that no other test file holds.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import warnings
from pathlib import Path

import pytest
import torch

import helpers as H
from helpers.analysis.relations import relation_pairs
from helpers.core import language as L
from helpers.core.catalog import manifest
from helpers.core.evaluation import HELD_OUT_SEED, held_out_stories, story_ids
from helpers.core.language import NAMES, POSSESSIVE, PRONOUN_SUBJECTS, StoryWriter
from helpers.train import RECIPES

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
UNIVERSAL = re.compile(r"\b(never|always|every\w*|only|none|all)\b", re.IGNORECASE)
SPLIT = re.compile(r"(?:(?<=[.!?])|(?<=[.!?]\*\*)|(?<=[.!?]\)))\s+(?=[A-Z0-9*(\"`_§\[])")

# --- what may cover a sentence instead of a test ---------------------------------------------------------
GOAL = "no claim: a learning goal, taught where it is shown"
INSTRUCTION = "no claim: tells the reader what to do or look for"
DEFINITION = "no claim: defines a term, a rule, a step or a piece of arithmetic"
CODE = "no claim about data: says what the code or the figure shown does"
TITLE = "no claim: a heading or a table label"
QUOTE = "not our claim: a misconception or a question quoted"
ANALOGY = "no claim about the models: the article's team-of-readers analogy"
CITED = "reports the training notes in helpers/train.py, not a measurement made here"
CITED_PAPER = "not our claim: reports what a cited paper found, on its data"
NO_NETWORK = "enforced for every test by tests/conftest.py (the autouse no_outside_lookup fixture)"
PENDING = "pending: 04 and 07 are another engineer's; the test comes with their issue-29 work"
SEEDS = "pending: a comparison of trained variants, stated as far as the seed runs of issue 29 allow"
REASONS = (GOAL, INSTRUCTION, DEFINITION, CODE, TITLE, QUOTE, ANALOGY, CITED, CITED_PAPER, NO_NETWORK)
PENDING_KINDS = (PENDING, SEEDS)

U = "test_universal_claims.py::"
P13 = "test_prose_01_03.py::"
P6 = "test_prose_06.py::"
P45 = "test_prose_04_05.py::"
LN = "test_lesson_numbers.py::"
HA = "test_head_analysis.py::"
TG = "test_teaching.py::"
P7 = "test_prose_07.py::"
PS = "test_prose_seeds.py::"
SL = "test_slider.py::"
MASK = U + "test_every_map_hides_later_words_and_each_row_adds_up_to_one"
READS_ALL = U + "test_every_head_reads_all_768_numbers_of_every_word"
SUBJECT_ONLY = U + "test_the_possessive_after_an_activity_is_fixed_by_the_subject_alone"
ONE_HEAD = U + "test_the_walkthrough_layers_are_all_the_attention_their_models_have"
FIXED = U + "test_determiner_object_and_subject_keys_sit_at_one_distance_in_every_story"

CLAIMS: list[tuple[str, str, str]] = [
    ("04", "Every head count divides 96:", SL + "test_head_shapes_match_what_the_trained_layer_computes"),
    ("04", "**What carries over to GPT-2's heads of 64:** every step and every", "test_gpt2_loader.py::test_model_from_checkpoint_matches_transformers"),
    ("04", "Each head projects all of a word's numbers to its own query, key and", "test_gpt2_loader.py::test_model_from_checkpoint_matches_transformers"),
    ("04", "Every shape, for any head count", TITLE),
    ("04", "Every head makes its own queries, keys and values of $d$ numbers per", SL + "test_head_shapes_match_what_the_trained_layer_computes"),
    ("04", "The concatenation is exactly as wide as the input again ($T \\times", SL + "test_head_shapes_match_what_the_trained_layer_computes"),
    ("04", "For GPT-2 small reading 1024 tokens, that is 12 maps of a million", DEFINITION),
    ("04", "Type another sentence and press Enter to read it instead (classroom", INSTRUCTION),
    ("04", "What to look for: with 1 head, each layer has a single map that must", P45 + "test_04_what_to_look_for_in_the_slider"),
    ("04", "Not one number changes; only the cuts between heads move.", SL + "test_merging_only_moves_the_cuts_between_heads"),
    ("07", "Llama 2 7B keeps **512 KiB** for every token.", P7 + "test_07_1_cache_numbers"),
    ("07", "None of the configs the check uses sets `head_dim`, so the head size", P7 + "test_07_1_the_head_size_rule_and_its_exceptions"),
    ("07", "Return the output of every query head, [`n_heads` × T × d], with the", INSTRUCTION),
    ("07", "Every model's numbers:", CODE),
    ("07", "Type another sentence and press Enter to read it instead (classroom", INSTRUCTION),
    ("07", "With 3 key/value heads, all four heads of the middle group (H4–H7)", P7 + "test_07_2_what_to_look_for_in_the_slider"),
    ("07", "Slide to 1: one set of keys and values for all twelve heads, and", P7 + "test_07_2_one_key_value_head_still_gives_twelve_different_maps"),
    ("07", "Inside a group every query head meets the same keys.", DEFINITION),
    ("07", "Its map can still differ from its neighbours', but only through its", DEFINITION),
    ("07", "- Generating text keeps every earlier token's keys and values: 2 ×", P7 + "test_07_1_cache_numbers"),
    ("07", "- Multi-query attention gives all query heads one key head and one", DEFINITION),
    ("07", "Only $W_K$, $W_V$ and the cache shrink; every query head keeps its", "test_kv_analysis.py::test_attention_parameters_per_layer_match_a_counted_layer"),
    ("guide", "with one head per layer the list game was learned", "test_claims.py::test_claim"),
    ("guide", "Names are NFC-normalised, so a Mac's zip and a Windows download agree", "test_grade_workers.py::test_invisible_characters_never_merge_or_hide_a_student"),
    ("guide", "or any other folder of the machine (last lesson's class, wherever it is kept)",
     "test_grade_workers.py::test_last_lessons_class_beside_this_lessons_folder_is_out_of_reach"),
    ("guide", "runs every worker inside bubblewrap", "test_grade_options.py::test_bwrap_asked_for_where_it_is_missing_is_one_line"),
    ("guide", "as soon as it is graded: after Ctrl-C", "test_grade_workers.py::test_ctrl_c_keeps_what_was_graded_and_a_rerun_grades_only_the_rest"),
    ("guide", "The grading process reads each file's bytes and never parses them", "test_grade_workers.py::test_a_worker_holds_no_descriptor_but_its_own_pipe"),
    ("guide", "Anything else marks every exercise of that notebook `raised`", "test_grade_workers.py::test_bytes_that_are_not_a_message_mark_only_that_submission"),
    ("guide", "An exercise that ends its worker costs only itself", "test_grade_class.py::test_each_hostile_submission_gets_its_own_row_right"),
    ("guide", "| reaches another student's row, pipe or notebook |", "test_grade_workers.py::test_no_submission_changes_another_row_through_the_pipes"),
    ("guide", "| forges its own row |", "test_grade_workers.py::test_forged_records_are_never_right"),
    ("guide", "It then runs none of the student's code itself: a runner process", "test_grade_forgery.py::test_a_runner_holds_no_pipe_to_the_grader"),
    ("guide", "A ✓ counts only when the worker's own run of the same check agrees", "test_grade_forgery.py::test_a_patched_check_gives_no_right"),
    ("guide", "| changes a file of the machine: the project, its virtualenv, the interpreter's standard library, `/etc` |",
     "test_grade_workers.py::test_the_machines_files_are_read_only_to_a_worker"),
    ("guide", "| leaves processes running |", "test_grade_workers.py::test_no_process_a_submission_started_outlives_its_worker"),
    ("guide", "bubblewrap runs the forkserver, and so every worker", "test_grade_workers.py::test_nothing_is_written_into_the_machines_scratch_folders"),
    ("guide", "One bad file costs one row, never the class.", "test_grade_workers.py::test_one_bad_file_costs_one_row_and_one_line"),
    ("07", "Those six put", "test_list_heads.py::test_07_the_shared_key_groups_list_heads"),
    # --- 04, 07, 08 (lesson first, rates over seeds: numbers in claims_NN.py) ---
    ("04", "Six models differ only in how many heads share the same 96", SL + "test_every_slider_model_is_shipped_and_has_a_held_out_loss"),
    ("04", "- the shape of every step of the layer, for any number of heads", GOAL),
    ("04", "They all read the same pages, then pool their notes.", ANALOGY),
    ("04", "One reader juggling all three questions would miss things.", ANALOGY),
    ("04", "The six slider models all have width 96 and 2 layers.", SL + "test_every_slider_model_is_shipped_and_has_a_held_out_loss"),
    ("04", "They were trained the same way on the same classroom language; only the head count differs.", SL + "test_every_slider_model_is_shipped_and_has_a_held_out_loss"),
    ("04", "The second copy is predictable, but only for a model that looks back.", DEFINITION),
    ("04", "Every sentence also starts with **`<bos>`** (beginning of sequence)", U + "test_the_models_of_04_to_07_were_trained_with_a_start_token"),
    ("04", "It gives every word something to look at, even the first one.", MASK),
    ("04", "Then the outputs of all heads are laid side by side.", DEFINITION),
    ("04", "You see every head's map in both layers, the head size, the shapes", CODE),
    ("04", "Every model was scored on the same held-out stories, never seen in training.", U + "test_held_out_stories_come_from_a_seed_no_model_trained_on"),
    ("04", "The figure draws a dot for every run and a diamond for the shipped file.", CODE),
    ("04", "So it can put nearly all its attention on one word without taking any from the other heads.", DEFINITION),
    ("04", "With **one head per layer**, one map must do that and everything else.", DEFINITION),
    ("04", "With two heads or more, it was learned in all", "test_claims.py::test_claim"),
    ("04", "The shipped 1-head file is one of the runs that failed", "test_claims.py::test_claim"),
    ("04", "With 12 heads each head matches words with only 8 numbers, and carries only 8 numbers back.", DEFINITION),
    ("04", "On the words that do not repeat a list, all", "test_claims.py::test_claim"),
    ("04", "Every run is a dot in the figure above.", CODE),
    ("04", "Merging never helps.", SL + "test_merging_raises_the_loss_more_as_groups_grow_and_training_beats_it"),
    ("04", "The merged model was never trained to share maps", SL + "test_merging_raises_the_loss_more_as_groups_grow_and_training_beats_it"),
    ("04", "With one head per layer the list game was learned in", "test_claims.py::test_claim"),
    ("07", "- why a model that writes text keeps the keys and values of every earlier token", GOAL),
    ("07", "For each new token, every head compares the token's **query** with the **keys** of all earlier tokens", DEFINITION),
    ("07", "It grows by the same amount with every token:", "test_kv_analysis.py::test_cache_formula_and_its_one_line_errors"),
    ("07", "Llama 3 8B has the same layers, query heads and head size, but only", P7 + "test_07_1_cache_numbers"),
    ("07", "Gemma 2B, whose 8 query heads all share one key/value head", P7 + "test_07_1_cache_numbers"),
    ("07", "Reading the whole cache for every new token is much of what makes generation slow.", DEFINITION),
    ("07", "But each of its layers attends only to the last", P7 + "test_07_1_each_model_reads_its_own_context_length"),
    ("07", "So its cache can drop older tokens, and never holds more than", P7 + "test_07_1_each_model_reads_its_own_context_length"),
    ("07", "They differ only in how many **key/value heads** those 12 query heads read", P7 + "test_07_2_the_six_variants_differ_only_in_their_key_value_heads"),
    ("07", "All six were trained on the same stories in the same order, with the same steps and schedule.", P7 + "test_07_2_the_six_variants_differ_only_in_their_key_value_heads"),
    ("07", "In all four shipped models with groups, two heads of one group overlap more", P7 + "test_07_3_maps_in_one_group_are_more_alike"),
    ("07", "**Shazeer (2019)** proposed **multi-query attention**: all query heads share one key head", CITED_PAPER),
    ("07", "On translation and language modelling, quality dropped only slightly", CITED_PAPER),
    ("07", "Generating text became much faster, because far less memory is read for every new token.", CITED_PAPER),
    ("07", "Every run is a dot in the figure above.", CODE),
    ("07", "The held-out loss averages every predicted word of 256 held-out stories.", P7 + "test_07_4_the_loss_split_by_word_adds_up_to_the_held_out_loss"),
    ("07", "comes from the list words and", "test_claims.py::test_claim"),
    ("07", "Over the runs, all", "test_claims.py::test_claim"),
    ("07", "Leave every query head and $W_O$ as they are.", DEFINITION),
    ("08", "If the score never reaches 0.5, return `None`.", INSTRUCTION),
    ("08", "The check tries curves of different lengths, and one that never forms.", CODE),
    ("08", "It has 2 layers of attention only, no MLP", "test_notebook08.py::test_08_1_the_snapshots"),
    ("08", "They are step 0 (the untrained model), steps spread out on a log scale", "test_notebook08.py::test_08_1_the_snapshots"),
    ("08", "At the end, L0 H0 looks one word back from every word.", "test_notebook08.py::test_08_2_at_the_end_l0_h0_looks_one_word_back"),
    ("08", "The right one, measured every 48 steps on 32 held-out stories", CODE),
    ("08", "trained small attention-only models and larger ones on natural text", CITED_PAPER),
    ("08", "half our stories are random words said again and again, planted so that only the circuit predicts them",
     "test_notebook08.py::test_08_1_the_recipe_is_what_the_prose_says"),
    ("guide", "on a recipe of its own: 2 attention-only layers of 4 heads", "test_notebook08.py::test_08_1_the_recipe_is_what_the_prose_says"),
    ("08", "every number here was measured on them, on held-out stories.", "test_notebook08.py::test_08_1_the_snapshots"),
    # --- 01 ----------------------------------------------------------------------------------------------
    ("01", "it never saw a start token", P13 + "test_01_the_sentence_is_read_as_the_model_was_trained"),
    ("01", "were trained with a start token, `<bos>`, in front of every story", U + "test_the_models_of_04_to_07_were_trained_with_a_start_token"),
    ("01", "to see what a token it never saw does", P13 + "test_01_more_to_try_with_bos"),
    ("01", "put almost all its weight on one word", U + "test_unscaled_scores_put_almost_all_the_weight_on_one_word"),
    ("01", "The softmax only cares about the differences between scores", DEFINITION),
    ("01", '"I like to draw" is always followed by *my*', SUBJECT_ONLY),
    ("01", "and only the subject tells it which", SUBJECT_ONLY),
    ("01", "It is the only head of the model, so it has to serve every prediction", ONE_HEAD),
    ("01", "every score of a **later** word is replaced by −∞", MASK),
    ("01", "so it can see all of them", MASK),
    ("01", "hide every later word with −∞", INSTRUCTION),
    ("01", "But the head never reads it raw", LN + "test_01_update_is_long_because_it_is_made_from_the_normalised_input"),
    ("01", "LayerNorm first rescales every row to a length of about √768", LN + "test_01_update_is_long_because_it_is_made_from_the_normalised_input"),
    ("01", "a LayerNorm divides every row by its own length", P13 + "test_01_what_the_length_means_and_what_the_next_layernorm_does"),
    ("01", "that holds for all but 3 of the 45,056 updates", P13 + "test_01_in_the_12_layer_model_later_attention_updates_are_shorter_than_the_stream_on_which_input"),
    ("01", "Only float rounding differs", LN + "test_01_one_head_folds_W_V_and_W_O_without_changing_the_layer"),
    ("01", "### Exercise 3: every word's update at once", TITLE),
    ("01", "Everything above the diagonal is 0", MASK),
    ("01", "only the differences between scores matter to it", DEFINITION),
    ("01", "it serves every prediction at once", ONE_HEAD),
    # --- 02 ----------------------------------------------------------------------------------------------
    ("02", "how one big matrix holds the matrices of all 12 heads", GOAL),
    ("02", "That head is the only attention the model has, so it has to serve every prediction", ONE_HEAD),
    ("02", "First notebook 01's one head, sentence by sentence; then every head of this layer", CODE),
    ("02", "The one head's weights are a compromise between every prediction it serves", ONE_HEAD),
    ("02", "and in none of those 28 sentences the largest share", P13 + "test_02_the_one_head_sentence_by_sentence_not_never_most"),
    ("02", "the subject gets their largest weight in all 28 story openings", P13 + "test_02_four_subject_heads_no_resting_head_and_head_1_is_not_a_subject_head"),
    ("02", "these models never had a start token to rest on", P13 + "test_01_the_sentence_is_read_as_the_model_was_trained"),
    ("02", "gives a query of only 64 numbers", "test_walkthrough.py::test_shapes_the_notebooks_state"),
    ("02", "### Exercise 1: one head, every word", TITLE),
    ("02", "Return every word's update [T × d]", INSTRUCTION),
    ("02", "One matrix product makes the queries of all the heads", "test_attention.py::test_split_and_merge_are_inverse_and_keep_blocks_contiguous"),
    ("02", "Each head still reads all 768 numbers of each word", READS_ALL),
    ("02", "every head multiplies all 768 numbers of the word by its own [768 × 64] matrix", READS_ALL),
    ("02", "If head 0 only read its own piece", LN + "test_02_several_heads_look_from_draw_at_I_and_each_reads_all_768_numbers"),
    ("02", "Every one of the 768 input numbers feeds head 0's query, and the same holds for every head", READS_ALL),
    ("02", "All twelve heads at a glance", TITLE),
    ("02", "One head has to serve every prediction at once", ONE_HEAD),
    ("02", "holds the query matrices of all 12 heads; its output splits", "test_walkthrough.py::test_trained_layer_equals_the_model"),
    # --- 03 ----------------------------------------------------------------------------------------------
    ("03", "block *h* only ever meets the 64 numbers of head *h*", "test_attention.py::test_property_concat_times_recombination_equals_sum_of_decompressions"),
    ("03", "their blocks' factors only 1.8 times", P13 + "test_03_what_the_article_means_by_weighing_the_heads_and_what_is_true"),
    ("03", "a map that keeps all 64 of the head's directions", P13 + "test_03_a_block_is_a_full_map_not_a_weight"),
    ("03", "each head's update through its own block, all added", INSTRUCTION),
    ("03", "Every length jumps from about 1 to between 28 and 79", LN + "test_03_lengths_and_the_recombination_figure"),
    ("03", "every row's direction is the update's (cosine 0.999 or more)", P13 + "test_03_lengths_and_directions_after_the_layer"),
    ("03", "the same number of weights, only cut differently", "test_attention.py::test_parameter_counts_of_the_walkthrough_layer"),
    ("03", "Counting everything, biases included", CODE),
    ("03", "Time to put every step together", INSTRUCTION),
    ("03", "makes the queries, keys and values of every head at once", CODE),
    # --- 04 ----------------------------------------------------------------------------------------------
    # --- 05 (its sentences' tests are here, in test_prose_04_05.py and, for the numbers, claims_05.py) -----
    ("05", "# 05 · All 144 heads", TITLE),
    ("05", "See every attention head of a 12-layer, 12-head model at once", GOAL),
    ("05", "144 heads, all reading the same sentence", DEFINITION),
    ("05", "Here we put all 144 attention maps in one picture", CODE),
    ("05", "the upper-right triangle of every cell is dark", MASK),
    ("05", "A sentence that uses every relation", TITLE),
    ("05", "and the sentence below holds them all", U + "test_05s_sentence_holds_every_annotated_relation"),
    ("05", "The grid below labels only three types", CODE),
    ("05", "the induction stripe of the list is only four words long", U + "test_05s_sentence_holds_every_annotated_relation"),
    ("05", "in a long text there is always one nearby", U + "test_a_full_stop_is_never_far_back_in_a_story"),
    ("05", "*and* beats a head that always looks a fixed number of words back", DEFINITION),
    ("05", "always sit 2 and 3 words back", FIXED),
    ("05", "**none**: none of the above", DEFINITION),
    ("05", 'No head gets the type "object" or "subject"', P6 + "test_05_grid_labels_agree_with_06"),
    ("05", "notebook 06 maps every type", CODE),
    ("05", "Choosing one query word shows only its lines", "test_views.py::test_token_links_with_a_selected_query_draws_only_its_lines"),
    ("05", "so the line view draws the list part only", P45 + "test_05_the_token_links_of_the_list_part_fit_a_screen_and_keep_the_query_whole"),
    ("05", "four detectors that need none", CODE),
    ("05", "The classroom model never saw random words said twice", P45 + "test_05_generic_detectors_find_no_duplicate_or_induction_head_on_the_classroom_model"),
    ("05", "has only 0.02 left for the other words", P45 + "test_05_rescaling_draws_a_resting_heads_small_remainder_at_full_brightness"),
    ("05", "Write a function that takes all attention maps", INSTRUCTION),
    ("05", "a determiner's key is always the word just before the query", FIXED),
    ("05", "with relay games only mixed into the stories no previous-word head formed", CITED),
    ("05", "The check judges only the repeated words", CODE),
    ("05", "the head does not rest on `<bos>` at all", P45 + "test_05_the_best_induction_head_looks_at_each_word_itself_in_the_first_copy"),
    ("05", "All 144 maps fit in one image", "test_views.py::test_plot_all_heads_is_one_image_of_the_mosaic_with_labels"),
    # --- 06 ----------------------------------------------------------------------------------------------
    ("06", "So every head can be checked against the truth", CODE),
    ("06", "everything else still uses the classroom model", CODE),
    ("06", "We only ever score on *held-out* stories", U + "test_held_out_stories_come_from_a_seed_no_model_trained_on"),
    ("06", "**previous** pairs every word with the word just before it", "test_scores.py::test_relation_pairs_point_back_to_the_right_words"),
    ("06", "**resting** pairs every word with the start token", "test_scores.py::test_resting_mask_marks_bos_and_the_latest_full_stop"),
    ("06", "averaged over all (query, key) pairs of that relation", DEFINITION),
    ("06", "A head that always looks exactly at the right word scores 1", "test_scores.py::test_pair_scores_give_one_to_a_head_that_follows_the_truth"),
    ("06", "First we run all 64 stories through the model in one batch", CODE),
    ("06", "every table uses the same colour scale from 0 to 1", U + "test_every_score_table_shares_one_colour_scale_from_0_to_1"),
    ("06", "which relations have a bright head at all", INSTRUCTION),
    ("06", "A grammar head only shows something when it beats that baseline", DEFINITION),
    ("06", "grammar rows count only the pairs beyond the previous word", CODE),
    ("06", "an adjective always follows its determiner directly", FIXED),
    ("06", "the key is always the same number of words back (2 for objects, 3 for subjects)", FIXED),
    ("06", "Every row of a head's map adds up to 1", MASK),
    ("06", "whatever it does, none of our relations describes it", DEFINITION),
    ("06", "94 of the 144 heads get no type at all", P6 + "test_06_type_counts_put_position_first"),
    ("06", "If the interval includes 0, these stories cannot tell", DEFINITION),
    ("06", "Over all words:", P6 + "test_06_offset_heads_do_not_look_a_fixed_distance_back_everywhere"),
    ("06", "none of the 23 gives a quarter of its attention to either word", P6 + "test_06_offset_heads_do_not_look_a_fixed_distance_back_everywhere"),
    ("06", "only a knock-out says whether the model needs it", DEFINITION),
    ("06", "a word that is not in the list at all", HA + "test_knock_out_demo_changes_the_top_prediction"),
    ("06", "shows the measured number only once you have predicted", "test_ablation.py::test_knockout_prediction_check"),
    ("06", "0.92 with every head present", HA + "test_the_circuit_is_where_the_induction_heads_look"),
    ("06", "Only one of them changes where the induction heads look", HA + "test_the_circuit_is_where_the_induction_heads_look"),
    ("06", 'What it adds, none of our relations says; its type is "none"', U + "test_l0_h9_never_looks_at_the_earlier_copy_and_l0_h7_is_untyped"),
    ("06", "Notebook 05 showed all 144 heads of the classroom model at once", CODE),
    ("06", "While it writes, it notes every **relation**", "test_core_language.py::test_annotations_are_true"),
    ("06", "The simplest positional head always looks k words back", DEFINITION),
    ("06", "So we score each noted relation again, on only the pairs", CODE),
    ("06", "every determiner key is the previous word, so no pairs are left", FIXED),
    ("06", "The baselines score only 0.54, 0.54 and 0.25", HA + "test_numbers_notebook_06_states"),
    ("06", "On all pairs, L0 H9 scores even higher for determiners (0.98)", HA + "test_numbers_notebook_06_states"),
    ("06", "is no better than always looking 3 words back", P6 + "test_06_the_offset_heads_are_the_object_and_subject_heads_and_l6_h11"),
    ("06", "Do the offset heads look 2 or 3 words back at *every* word?", P6 + "test_06_offset_heads_do_not_look_a_fixed_distance_back_everywhere"),
    ("06", "So they look there at objects and subjects, not everywhere", P6 + "test_06_offset_heads_do_not_look_a_fixed_distance_back_everywhere"),
    ("06", "There the 6 induction heads put only 0.05 to 0.28", "test_claims.py::test_claim"),
    ("06", "the model says the second copy of a list right only 38 %", HA + "test_induction_knock_out_and_its_control"),
    ("06", "A score of 1.0 means it always looks at the right word", DEFINITION),
    ("06", "the best head that always looks k words back (Clark et al., 2019)", DEFINITION),
    # --- 07 ----------------------------------------------------------------------------------------------
    # --- the teacher's guide -----------------------------------------------------------------------------
    ("guide", "Every exercise check names the slips it recognises with a stable code",
     "test_mistake_codes.py::test_every_mistake_has_a_unique_snake_case_code"),
    ("guide", "lists, per exercise, every code with what the check says and the fix",
     "test_mistake_codes.py::test_every_code_is_in_the_doc"),
    ("guide", "Every notebook runs top to bottom in seconds", "test_notebooks.py::test_same_text_output_twice"),
    ("guide", "On every classroom machine (or ask students to do it at home)", INSTRUCTION),
    ("guide", 'and ends with "All good … ready for class" when there is none', "test_doctor.py::test_the_command_marks_every_line_and_exits_with_its_crosses"),
    ("guide", "every cell runs in seconds, offline, and gives the same numbers every time", "test_notebooks.py::test_same_text_output_twice"),
    ("guide", "| 02 Shrinking the head | a head reads all 768 numbers", READS_ALL),
    ("guide", "| 05 All 144 heads | one grid of every head", TITLE),
    ("guide", '"If every score were the same, what would the weights be?"', DEFINITION),
    ("guide", "**Put almost all the weight on the largest score**", U + "test_unscaled_scores_put_almost_all_the_weight_on_one_word"),
    ("guide", "−∞ on every later word before the softmax, so no word looks ahead", MASK),
    ("guide", "does head 3 read?\" **All of them**", READS_ALL),
    ("guide", "which heads would notice?\" **All of them.**", READS_ALL),
    ("guide", "only where the cuts are differs", TG + "test_the_guides_answers_are_the_models_numbers"),
    ("guide", "What carries over to GPT-2's heads of 64 is every step and rule", "test_gpt2_loader.py::test_model_from_checkpoint_matches_transformers"),
    ("guide", "### 05 All 144 heads", TITLE),
    ("guide", "A head that puts all its attention on the first token", TG + "test_the_guides_answers_are_the_models_numbers"),
    ("guide", "whose keys beyond the previous word here always sit 2 or 3 words back", TG + "test_the_guides_grammar_and_offset_answers_hold_for_every_head"),
    ("guide", "do all 12 heads draw the same map?", TG + "test_the_guides_kv_1_answer_quotes_kv_1"),
    ("guide", "none is asserted here, because the tests never download GPT-2", NO_NETWORK),
    ("guide", '"Why is everything above the diagonal zero?" |', MASK),
    ("guide", "Recap: heads of 64 read all 768 numbers", READS_ALL),
    ("guide", "Every head reads *all* 768 numbers of every word", READS_ALL),
    ("guide", "which heads would notice?\" (all of them)", READS_ALL),
    ("guide", '"this word looks at everything"', QUOTE),
    ("guide", "the causal mask puts −∞ on every later word's score before the softmax, so no word can look ahead", MASK),
    ("guide", "the first word can only look at itself", MASK),
    ("guide", '"Why is the top-left cell of every map 1?"', MASK),
    ("guide", "opens an app with only the slider and the explorer", "test_voila.py::test_the_app_shows_only_the_two_widgets_offline_and_they_move"),
    ("guide", "docker run --rm --network none", CODE),
]


# --- the scanner ---------------------------------------------------------------------------------------
def paragraphs(markdown: str) -> list[str]:
    """Headings, table rows, list items and paragraphs, each flattened to one line."""
    out, current = [], []
    for line in markdown.splitlines():
        s = line.strip()
        new_block = (not s or s.startswith(("#", "|", "<!--", "```")) or re.match(r"([-*+]|\d+\.)\s", s))
        if new_block and current:
            out.append(" ".join(current))
            current = []
        if s.startswith(("#", "|")):
            out.append(s)
        elif s and not s.startswith(("<!--", "```")):
            current.append(s)
    if current:
        out.append(" ".join(current))
    return out


def sentences(markdown: str) -> list[str]:
    return [s.strip() for p in paragraphs(markdown) for s in SPLIT.split(p) if s.strip()]


def sources() -> dict[str, str]:
    """The markdown of notebooks 01-08 that exist (navigation cells left out) and the teacher's guide."""
    out = {}
    for path in sorted((ROOT / "notebooks").glob("0[1-8]_*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        out[path.name[:2]] = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
                                         and not "".join(c["source"]).startswith("<!--NAVIGATION-->"))
    out["guide"] = (ROOT / "docs" / "teaching.md").read_text()
    return out


def universal_sentences() -> dict[str, list[str]]:
    return {name: [s for s in sentences(text) if UNIVERSAL.search(s)] for name, text in sources().items()}


def unregistered() -> list[tuple[str, str]]:
    found = universal_sentences()
    return [(name, s) for name, ss in found.items() for s in ss
            if not any(src == name and quote in s for src, quote, _ in CLAIMS)]


def stale() -> list[tuple[str, str]]:
    found = universal_sentences()
    return [(src, quote) for src, quote, _ in CLAIMS if not any(quote in s for s in found.get(src, []))]


def test_every_universal_sentence_is_registered():
    missing = unregistered()
    listing = "\n".join(f"  {name}: {s!r}" for name, s in missing)
    assert not missing, (f"{len(missing)} sentences say never/always/every/only/none/all and are not in CLAIMS "
                         f"of tests/test_universal_claims.py; register each with the test that checks it on every "
                         f"input it speaks of, or reword it:\n{listing}")


def test_every_registered_quote_is_still_in_its_source():
    old = stale()
    assert not old, "quotes no longer found (reworded? register the new sentence):\n" + "\n".join(
        f"  {src}: {quote!r}" for src, quote in old)


def _test_names(file: str) -> set[str]:
    tree = ast.parse((TESTS / file).read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_claim_names_an_existing_test_or_a_reason():
    for src, quote, covered in CLAIMS:
        if covered in REASONS + PENDING_KINDS:
            continue
        file, _, name = covered.partition("::")
        assert (TESTS / file).is_file() and name.startswith("test_") and name in _test_names(file), (src, quote, covered)


def test_only_04_and_07_wait_for_tests_from_elsewhere():
    """The notebooks and the guide this work owns have every universal sentence covered now."""
    waiting = {src for src, _, covered in CLAIMS if covered == PENDING}
    assert waiting <= {"04", "07"}, waiting
    waiting = [f"  {src}: {quote!r} ({covered.split(':')[0]})" for src, quote, covered in CLAIMS if covered in PENDING_KINDS]
    if waiting:  # one warning, so the summary stays readable; `python tests/test_universal_claims.py` lists them too
        warnings.warn(f"{len(waiting)} universal sentences still wait for their tests:\n" + "\n".join(waiting),
                      UserWarning, stacklevel=1)


# --- the universal checks no other file holds --------------------------------------------------------------
needs_models = pytest.mark.skipif(not {"classroom", "walkthrough-1", "walkthrough-12"} <= set(manifest()),
                                  reason="data/models.json lists no classroom or walkthrough models")


def notebook_05_sentence() -> str:
    """The SENTENCE of notebook 05's section 4, read from its code cell."""
    cells = json.loads(next((ROOT / "notebooks").glob("05_*.ipynb")).read_text())["cells"]
    code = next("".join(c["source"]) for c in cells if c["cell_type"] == "code" and "SENTENCE = (" in "".join(c["source"]))
    assign = next(n for n in ast.parse(code).body if isinstance(n, ast.Assign) and n.targets[0].id == "SENTENCE")
    return ast.literal_eval(assign.value)


def _walkthrough_stories(n: int = 64):
    writer = StoryWriter(HELD_OUT_SEED)
    return [writer.story(64, bos=False) for _ in range(n)]


@needs_models
def test_every_map_hides_later_words_and_each_row_adds_up_to_one():
    """01 §5 and §9, 05 §2, 06 §4, the guide's mask answers: in every map of every head, on every held-out
    story (as each model was trained) and on "I like to draw", every weight above the diagonal is 0, each row
    adds up to 1, and the first word puts its whole weight on itself."""
    classroom = H.load_model("classroom")
    with torch.no_grad():
        maps = [classroom.model(story_ids(classroom, held_out_stories(64))).attentions]  # (B, L, H, T, T)
    for name in ("walkthrough-1", "walkthrough-12"):
        lm = H.load_model(name)
        ids = torch.tensor([[lm.tokenizer.ids[t] for t in s.tokens] for s in _walkthrough_stories()])
        with torch.no_grad():
            maps.append(lm.model(ids).attentions)
    maps += [H.run_sentence(H.load_model(n), "I like to draw").attentions[None] for n in ("classroom", "walkthrough-1")]
    for attn in maps:
        T = attn.shape[-1]
        later = torch.ones(T, T, dtype=torch.bool).triu(1)
        assert float(attn[..., later].abs().max()) == 0.0
        assert torch.allclose(attn.sum(-1), torch.ones(attn.shape[:-1]), atol=1e-5)
        assert torch.allclose(attn[..., 0, 0], torch.ones(attn.shape[:-2]))


@needs_models
def test_every_head_reads_all_768_numbers_of_every_word(walk_twelve):
    """02 and the guide: every head of walkthrough-12 has no all-zero row in its W_Q, W_K or W_V, so each of the
    768 input numbers feeds every head; and shuffling the 768 numbers changes every head's query (seeded
    shuffles of every word's row): "which heads would notice? All of them"."""
    walk = walk_twelve
    for W in (walk.W_Q, walk.W_K, walk.W_V):  # (12, 768, 64)
        assert W.shape == (12, 768, 64) and bool((W.abs().sum(-1) > 0).all())
    g = torch.Generator().manual_seed(0)
    for _ in range(5):
        shuffled = walk.X[:, torch.randperm(768, generator=g)]  # (T, 768)
        before = torch.einsum("td,hde->hte", walk.X, walk.W_Q)  # (12, T, 64)
        after = torch.einsum("td,hde->hte", shuffled, walk.W_Q)
        change = (after - before).norm(dim=-1) / before.norm(dim=-1)  # (12, T)
        assert float(change.min()) > 0.1, change


def test_the_possessive_after_an_activity_is_fixed_by_the_subject_alone():
    """01 §4 and 02 §1: in every hobby sentence of 2,000 stories of each kind (with and without a start token),
    the word after the activity is the subject's possessive ("I like to draw" is always followed by my, "she
    likes to draw" by her, "tom likes to draw" by his); and no other word of the sentence fixes it: each verb,
    "to" and each activity is followed by more than one possessive."""
    seen: dict[int, dict[str, set[str]]] = {0: {}, 1: {}, 2: {}, 3: {}}
    for bos in (False, True):
        writer = StoryWriter(HELD_OUT_SEED)
        for _ in range(2000):
            story = writer.story(64, bos=bos)
            for q, k in story.links["subject"]:
                words = story.tokens[k:q + 2]  # subject, like(s), to, activity, possessive
                if len(words) < 5:
                    continue  # the story was cut before the possessive
                pronoun = NAMES.get(words[0], words[0])
                assert words[4] == (PRONOUN_SUBJECTS.get(pronoun) or POSSESSIVE[pronoun]), words
                for i in range(4):
                    seen[i].setdefault(words[i], set()).add(words[4])
    assert seen[0]["I"] == {"my"} and seen[0]["she"] == {"her"} and seen[0]["tom"] == {"his"}
    assert all(len(seen[0][s]) == 1 for s in seen[0])  # the subject alone decides
    for i in (1, 2, 3):  # like(s), to, the activity: none of them does
        assert all(len(after) > 1 for after in seen[i].values()), (i, seen[i])


@needs_models
def test_the_walkthrough_layers_are_all_the_attention_their_models_have():
    """01 and 02: walkthrough-1's one head is the only attention of its model (one layer, one head, no MLP),
    so it serves every prediction; walkthrough-12 has its twelve heads in its one layer."""
    for name, heads in (("walkthrough-1", 1), ("walkthrough-12", 12)):
        cfg = H.load_model(name).config
        assert (cfg.n_layer, cfg.n_head, cfg.mlp) == (1, heads, False), (name, cfg)


@needs_models
def test_the_models_of_04_to_07_were_trained_with_a_start_token():
    """01 §1: "The models of notebooks 04–06 were trained with a start token, <bos>, in front of every story"
    (07's, which reuse 04's recipe, too); the walkthrough models of 01-03 without one."""
    shipped = manifest()
    for name in shipped:
        lm = H.load_model(name)
        assert lm.bos is (not name.startswith("walkthrough")), name


@needs_models
def test_unscaled_scores_put_almost_all_the_weight_on_one_word(walk_one):
    """01 §3 and the guide: without the division by √768, the softmax of every word's masked scores in
    "I like to draw" puts at least 0.98 on one word: "a near one-hot row"."""
    head = walk_one.head(0)
    T = head.scores.shape[-1]
    weights = head.scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
    assert float(weights.max(-1).values.min()) > 0.98
    assert float(head.weights.max(-1).values[1:].max()) < 0.9  # with the division the rows spread


def test_determiner_object_and_subject_keys_sit_at_one_distance_in_every_story():
    """05 §5, 06 §4 and the guide: in every one of 1,000 held-out stories, every determiner key is the word just
    before its query (an adjective always follows its determiner directly), and beyond the previous word every
    object key sits 2 words back and every subject key 3."""
    stories = held_out_stories(1000)
    assert {q - k for _, q, k in relation_pairs(stories, "determiner")} == {1}
    assert {q - k for _, q, k in relation_pairs(stories, "object", beyond_previous=True)} == {2}
    assert {q - k for _, q, k in relation_pairs(stories, "subject", beyond_previous=True)} == {3}


def test_05s_sentence_holds_every_annotated_relation():
    """05 §4: "this sentence contains all of them" (subject, agreement, pronoun, object, determiner, induction)
    and its list is four words long: each part is a sentence the generator writes, checked against its tables."""
    sentence = notebook_05_sentence()
    parts = [p.split() for p in sentence.replace(" .", " .|").split("|") if p.strip()]
    hobby, agreement, pronoun, obj = parts[:4]
    assert hobby[:5] == ["I", "like", "to", "draw", L.PRONOUN_SUBJECTS["I"]] and "picture" in L.HOBBIES["draw"]
    assert agreement[2] in L.PREPOSITIONS and agreement[3] in L.DETERMINERS["plural"]
    assert agreement[4] in L.ADJECTIVES and agreement[6] == "is" and agreement[1] in L.ANIMALS  # determiner too
    assert pronoun[pronoun.index("because") + 1] == L.ANIMALS[pronoun[1]][1]
    assert any(obj[2] in forms and obj[-2] in things for forms, things in L.VERBS.items())
    first, second = sentence.split("list : ")[1].split(" . again : ")
    assert first.split() == second.rstrip(" .").split() and len(first.split()) == 4


def test_a_full_stop_is_never_far_back_in_a_story():
    """05 §3: "in a long text there is always one nearby": in 500 held-out stories with relay games (the
    classroom model's training mix), every word after the first full stop has one at most 18 words back, the
    length of the longest sentence the generator writes."""
    writer = StoryWriter(HELD_OUT_SEED)
    worst = 0
    for _ in range(500):
        last = None
        for i, token in enumerate(writer.story(64, relay_chance=0.5).tokens):
            last = i if token == "." else last
            worst = max(worst, 0 if last is None else i - last)
    assert worst <= 18, worst


def test_held_out_stories_come_from_a_seed_no_model_trained_on():
    """06 §1: "We only ever score on held-out stories, written from a seed the model never trained on": no
    recipe and no shipped model used HELD_OUT_SEED, and its stories are not the first stories of any recipe."""
    assert HELD_OUT_SEED not in {r.seed for r in RECIPES.values()}
    assert all(entry.get("info", {}).get("seed") != HELD_OUT_SEED for entry in manifest().values())
    held = [s.tokens for s in held_out_stories(8)]
    for seed in {r.seed for r in RECIPES.values()}:
        writer = StoryWriter(seed)
        assert not any(writer.story(64).tokens in held for _ in range(8)), seed


@needs_models
def test_every_score_table_shares_one_colour_scale_from_0_to_1():
    """06 §3: "every table uses the same colour scale from 0 to 1"."""
    fig = H.plot_score_tables(H.relation_scores(H.load_model("classroom")))
    images = [im for ax in fig.axes for im in ax.images]
    assert len(images) == len(H.SCORED_RELATIONS) and all(im.get_clim() == (0.0, 1.0) for im in images)


@needs_models
def test_l0_h9_never_looks_at_the_earlier_copy_and_l0_h7_is_untyped():
    """06 §8 and the circuit: L0 H9 "puts at most 0.002 of its attention on the earlier copy" on every induction
    pair; it puts on average 0.96 on the word just before, more than half at 98 % of the words; L0 H7's type
    is "none"."""
    lm = H.load_model("classroom")
    stories, attn = H.scored_stories(lm)
    b, q, k = (torch.tensor(c) for c in zip(*relation_pairs(stories, "induction")))
    assert f"{attn[b, 0, 9, q, k].max():.3f}" == "0.002"
    b, q, k = (torch.tensor(c) for c in zip(*relation_pairs(stories, "previous")))
    previous = attn[b, 0, 9, q, k]
    assert f"{previous.mean():.2f}" == "0.96" and f"{(previous > 0.5).float().mean():.0%}" == "98%"
    types, _ = H.head_types(lm)
    assert types[0, 7] == "none" and types[0, 9] == "previous"


def report() -> str:
    """Unregistered sentences first, then every pending one, for whoever finishes them."""
    lines = [f"UNREGISTERED ({len(unregistered())}): register each in CLAIMS with its test, or reword it"]
    lines += [f"  {name}: {s}" for name, s in unregistered()]
    lines += [f"STALE QUOTES ({len(stale())})"] + [f"  {src}: {quote}" for src, quote in stale()]
    for kind in PENDING_KINDS:
        waiting = [(src, quote) for src, quote, covered in CLAIMS if covered == kind]
        lines += [f"{kind.upper()} ({len(waiting)})"] + [f"  {src}: {quote}" for src, quote in waiting]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
    sys.exit(1 if unregistered() or stale() else 0)
