"""The mistake catalogue of notebook 02's split_heads(x, n_heads): the slips students really make, each
as a small wrong variant of the reference (mistakes_01_03.py holds the other catalogues of 01-02)."""

from __future__ import annotations

import torch

from .grading import Mistake as M


# --- 02, exercise 2: split_heads(x, n_heads) ---------------------------------------------------------
def _blocks(x, n):
    return x.shape[0], x.shape[1] // n


SPLIT_HEADS = [
    M("heads split in the wrong order: x.reshape(n_heads, T, d) mixes words; reshape to (T, n_heads, d) and then "
      "swap the first two axes (.transpose(0, 1)).", lambda x, n: x.reshape(n, *_blocks(x, n)),
      code="reshape_without_transpose"),
    M("heads interleaved: each head must take a *contiguous* block of d features, not every n_heads-th feature; "
      "reshape to (T, n_heads, d).", lambda x, n: x.reshape(x.shape[0], -1, n).permute(2, 0, 1), code="interleaved"),
    M("swapped the head count and the head size: reshape to (T, n_heads, d_head), then .transpose(0, 1).",
      lambda x, n: x.reshape(x.shape[0], -1, n).transpose(0, 1), code="count_and_size_swapped"),
    M("forgot to move the head axis first: the result should be (n_heads, T, d), not (T, n_heads, d).",
      lambda x, n: x.reshape(x.shape[0], n, -1), code="head_axis_not_first"),
    M("each head's block came out transposed (d, T): use .transpose(0, 1) on (T, n_heads, d), not a full "
      "reversal of the axes.", lambda x, n: x.reshape(x.shape[0], n, -1).permute(1, 2, 0), code="blocks_transposed"),
    M("gave every head all D features: a head reads a block of d = D / n_heads features.",
      lambda x, n: x.expand(n, *x.shape), code="all_features_per_head"),
    M("split the words (dim 0) instead of the features: chunk along the last axis, x.chunk(n_heads, dim=-1).",
      lambda x, n: torch.stack(x.chunk(n, dim=0)), code="split_words"),
    M("the heads came out in reverse order: head 0 takes the first d features, head 1 the next …",
      lambda x, n: x.reshape(x.shape[0], n, -1).flip(1).transpose(0, 1), code="reverse_order"),
    M("swapped axes 0 and 2, giving (d, n_heads, T): swap the first two, .transpose(0, 1).",
      lambda x, n: x.reshape(x.shape[0], n, -1).transpose(0, 2), code="axes_0_2_swapped"),
    M("returned x unchanged: cut its features into n_heads blocks, (n_heads, T, d).", lambda x, n: x, code="unchanged"),
    M("each head got d − 1 features: in Python a slice's end is left out, so head h is x[:, h*d:(h+1)*d] (features "
      "h·d … (h+1)·d − 1 *included*).", lambda x, n: torch.stack([x[:, h * _blocks(x, n)[1]:(h + 1) * _blocks(x, n)[1] - 1]
                                                                 for h in range(n)]), code="slice_one_short"),
    M("swapped axes 1 and 2 after the reshape, giving (T, d, n_heads): swap the first two, .transpose(0, 1).",
      lambda x, n: x.reshape(x.shape[0], n, -1).transpose(1, 2), code="axes_1_2_swapped"),
    M("x.T.reshape(...) cuts the transposed x, mixing words and features: reshape x to (T, n_heads, d) and then "
      ".transpose(0, 1).", lambda x, n: x.T.reshape(n, *_blocks(x, n)), code="transposed_then_reshaped"),
    M("heads counted from 1: range(1, n_heads + 1) skips head 0's block and asks for one past the end; heads count "
      "from 0, range(n_heads).", lambda x, n: torch.stack([x[:, h * _blocks(x, n)[1]:(h + 1) * _blocks(x, n)[1]]
                                                         for h in range(1, n + 1)]), code="heads_from_1"),
    M("torch.cat joins the heads into one [n_heads·T × d] block: torch.stack them, (n_heads, T, d).",
      lambda x, n: torch.cat(x.chunk(n, dim=-1), dim=0), code="cat_not_stack"),
    M("the head size came from x.shape[0], the number of words: d = x.shape[1] // n_heads (the width).",
      lambda x, n: x.reshape(x.shape[0], n, x.shape[0] // n).transpose(0, 1), code="size_from_words"),
]
