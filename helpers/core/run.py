"""Run one sentence through a model once and keep what every lesson looks at.

In the spirit of TransformerLens's `run_with_cache`: one forward pass keeps the maps, what enters
each block, what each head reads and writes, and the logits, so no analysis, figure or widget
reruns the blocks by hand or re-derives the values or the unembedding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .model import LanguageModel


@dataclass
class Run:
    tokens: list[str]  # what the model read, <bos> (or <|endoftext|>) first when used
    ids: list[int]
    attentions: torch.Tensor  # (n_layer, n_head, T, T): rows are queries, columns are keys
    logits: torch.Tensor  # (T, vocab): the prediction for the word after each position
    residuals: torch.Tensor  # (n_layer + 1, T, D): what enters each block, then the last block's output
    attention_inputs: torch.Tensor  # (n_layer, T, D): what each layer's heads read (after its LayerNorm)
    head_outputs: torch.Tensor  # (n_layer, n_head, T, d_head): each head's weighted sum of values
    # (what a knock-out hook replaces is what c_proj reads, so these stay the heads' own outputs)

    def next_word_probs(self, position: int = -1) -> torch.Tensor:
        return self.logits[position].softmax(-1)


def read_sentence(lm: LanguageModel, sentence: str, bos: bool | None = None) -> tuple[list[str], list[int]]:
    """Tokenize once: (tokens, ids). bos=None uses the start token exactly when the model was
    trained with one. Models that share a tokenizer can all run these ids (see run_ids)."""
    if not all(hasattr(lm, part) for part in ("model", "tokenizer", "bos")):  # "classroom" typed for its model
        raise ValueError(f"Expected a model from H.load_model(...), got {type(lm).__name__} {lm!r:.40}; "
                         f"load it first, e.g. lm = H.load_model('classroom').")
    bos = lm.bos if bos is None else bos
    ids = lm.tokenizer.encode(sentence, bos=bos)
    return lm.tokenizer.decode(ids), ids


@torch.no_grad()
def run_ids(lm: LanguageModel, tokens: list[str], ids: list[int]) -> Run:
    """The one forward pass of a tokenized sentence, everything kept. Inside
    `with analysis.knockout.knock_out(lm, heads):` the heads are removed. The model refuses a sentence
    longer than its context in one line."""
    out = lm.model(torch.tensor([ids]), keep=True)
    return Run(tokens=tokens, ids=ids, attentions=out.attentions[0], logits=out.logits[0],
               residuals=out.residuals[0], attention_inputs=out.attention_inputs[0],
               head_outputs=out.head_outputs[0])


def run_sentence(lm: LanguageModel, sentence: str, bos: bool | None = None) -> Run:
    """Tokenize and run the model once."""
    return run_ids(lm, *read_sentence(lm, sentence, bos))
