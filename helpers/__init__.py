"""Companion code for the multi-head attention notebooks.

Everything a notebook needs is importable from here: `import helpers as H`.
Data flows one way: text -> tokens -> model (or one attention layer) -> attention tensors -> figures.
"""

# --- models, tokens and runs (model.py, tokenizer.py, language.py, weights.py, catalog.py, run.py)
from .catalog import LanguageModel, load_model, shipped_models
from .language import RELATIONS, StoryWriter, vocabulary
from .model import GPT, GPTConfig, head_weights
from .run import Run, run_sentence
from .tokenizer import BOS, WordTokenizer, split_words

# --- attention math, the MultiHead module, walkthrough data (attention.py, multihead.py, walkthrough.py)

# --- plots, slide export, exercise checks (plots.py, export.py, checks.py)

# --- GPT-2 small (gpt2.py)

# --- the 144-head views and the explorer (views.py, explorer.py, deck.py)

# --- the head-count slider (slider.py)

# --- head scores and knock-outs (scores.py, ablation.py)
