"""Run one sentence through a model and keep what the notebooks look at."""

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

    def next_word_probs(self, position: int = -1) -> torch.Tensor:
        return self.logits[position].softmax(-1)


@torch.no_grad()
def run_sentence(lm: LanguageModel, sentence: str, bos: bool | None = None, head_scale=None, head_mean=None) -> Run:
    """Tokenize, check the length against the context, and run the model once.
    bos=None uses the start token exactly when the model was trained with one."""
    bos = lm.bos if bos is None else bos
    tokens = lm.tokenizer.tokens(sentence, bos=bos)
    ids = lm.tokenizer.encode(sentence, bos=bos)
    if len(ids) > lm.config.n_ctx:
        raise ValueError(
            f"The sentence is {len(ids)} tokens long but {lm.name} reads at most {lm.config.n_ctx}; shorten it."
        )
    out = lm.model(torch.tensor([ids]), head_scale=head_scale, head_mean=head_mean)
    return Run(tokens=tokens, ids=ids, attentions=out.attentions[0], logits=out.logits[0])
