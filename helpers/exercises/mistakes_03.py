"""The mistake catalogues of notebook 03's two small exercises (merge_heads, recombine): the slips
students really make, each as a small wrong variant of the reference and the line that names it.
Notebooks 01-02 are in mistakes_01_03.py; the capstone's slips are switches in capstone.py.
"""

from __future__ import annotations

import torch

from .grading import Mistake as M

# --- 03, exercise 1: merge_heads(z) ------------------------------------------------------------------
MERGE_HEADS = [
    M("permute(2, 1, 0) reverses all three axes, (d, T, H): the words must come first and each head's d features "
      "stay together, so use z.permute(1, 0, 2) (= z.transpose(0, 1)), then reshape(T, H·d).",
      lambda z: z.permute(2, 1, 0).reshape(z.shape[1], -1), code="permute_210"),
    M("permute(2, 0, 1) puts the features first, (d, H, T): use z.permute(1, 0, 2) (= z.transpose(0, 1)), then "
      "reshape(T, H·d).", lambda z: z.permute(2, 0, 1).reshape(z.shape[1], -1), code="permute_201"),
    M("heads merged in the wrong order: z.reshape(T, H·d) mixes words; move the head axis next to the features "
      "first (z.transpose(0, 1)) and then reshape.", lambda z: z.reshape(z.shape[1], -1),
      code="reshape_without_transpose"),
    M("heads interleaved: head h's features must sit together at positions h·d … (h+1)·d − 1; use "
      "z.transpose(0, 1).reshape(T, H·d).", lambda z: z.permute(1, 2, 0).reshape(z.shape[1], -1), code="interleaved"),
    M("added the heads instead of putting them side by side: concatenate, the result has H·d features.", lambda z: z.sum(0),
      code="summed_heads"),
    M("averaged the heads instead of putting them side by side: concatenate, the result has H·d features.",
      lambda z: z.mean(0), code="averaged_heads"),
    M("moved the head axis but kept it: flatten the last two axes too, (T, H, d) -> (T, H·d).", lambda z: z.transpose(0, 1),
      code="not_flattened"),
    M("returned z unchanged: the heads' updates must end up side by side, (T, H·d).", lambda z: z, code="unchanged"),
    M("stacked the heads as rows: put them side by side along the features, torch.cat(list(z), dim=-1).",
      lambda z: z.reshape(-1, z.shape[-1]), code="stacked_as_rows"),
    M("swapped the wrong axes: z.transpose(0, 1) puts the words first; z.transpose(1, 2) does not.",
      lambda z: z.transpose(1, 2).reshape(z.shape[1], -1), code="transpose_1_2"),
    M("z.reshape(H·d, T) gives each word a column of mixed features: move the head axis next to the features, "
      "z.transpose(0, 1), then reshape(T, H·d).", lambda z: z.reshape(-1, z.shape[1]).T, code="columns_per_word"),
    M("the heads came out in reverse order: head 0 first, then head 1 …", lambda z: z.flip(0).transpose(0, 1).reshape(z.shape[1], -1),
      code="reverse_order"),
    M("the loop starts at 1: range(1, n) leaves out head 0; use range(n) (heads count from 0).",
      lambda z: torch.cat(list(z[1:]), dim=-1), code="head_0_left_out"),
    M("two slips at once: head 0 left out (range(1, n): heads count from 0), and the heads joined along dim 0 (put "
      "them side by side, dim=-1).", lambda z: torch.cat(list(z[1:]), dim=0), code="two_slips.head_0_left_out+stacked_as_rows"),
]


# --- 03, exercise 2: recombine(z, W_O) ---------------------------------------------------------------
RECOMBINE = [
    M("returned each head's decompressed update separately: add them up over the heads (.sum(0)).", lambda z, W: z @ W,
      code="not_summed"),
    M("used only head 0: every head's update goes through its own block and all are added.", lambda z, W: z[0] @ W[0],
      code="head_0_only"),
    M("a loop that overwrites instead of adds: only the last head is left; use total = total + z[h] @ W_O[h].",
      lambda z, W: z[-1] @ W[-1], code="loop_overwrites"),
    M("heads matched to the wrong blocks of W_O: head h must use W_O[h].", lambda z, W: (z @ W.flip(0)).sum(0),
      code="wrong_blocks"),
    M("averaged the heads instead of adding them: the recombination is a sum.", lambda z, W: (z @ W).mean(0),
      code="averaged_heads"),
    M("added the heads' updates before decompressing: each head's update meets only its own block.",
      lambda z, W: z.sum(0) @ W.sum(0), code="summed_before_projection"),
    M("summed over the words (axis 1): add over the heads, axis 0, and keep one row per word.",
      lambda z, W: (z @ W).sum(1), code="summed_over_words"),
    M("concatenated the heads in the wrong order: merge with z.transpose(0, 1), then reshape to (T, H·d).",
      lambda z, W: z.reshape(z.shape[1], -1) @ W.reshape(-1, W.shape[-1]), code="merge_without_transpose"),
    M("stacked W_O's blocks interleaved: W_O.reshape(H·d, D) keeps head h's rows together.",
      lambda z, W: z.transpose(0, 1).reshape(z.shape[1], -1) @ W.transpose(0, 1).reshape(-1, W.shape[-1]),
      code="blocks_interleaved"),
    M("the loop leaves out the last head: range(H), not range(H - 1).", lambda z, W: (z[:-1] @ W[:-1]).sum(0),
      code="loop_skips_last"),
    M("every head went through W_O[0]: head h uses its own block, W_O[h].", lambda z, W: (z @ W[0]).sum(0),
      code="every_head_block_0"),
    M("merged the heads interleaved (feature by feature): keep head h's d features together, "
      "z.transpose(0, 1).reshape(T, H·d), before the stacked W_O.",
      lambda z, W: z.permute(1, 2, 0).reshape(z.shape[1], -1) @ W.reshape(-1, W.shape[-1]), code="merged_interleaved"),
    M("W_O[h] is [d × D] already: no transpose, use z[h] @ W_O[h].", lambda z, W: (z @ W.transpose(-1, -2)).sum(0),
      code="blocks_transposed"),
    M("W_O @ z: words are rows, so z[h] @ W_O[h] ([T × d] @ [d × D]).", lambda z, W: (W @ z).sum(0), code="w_o_first"),
    M("multiplied element-wise (*): use the matrix product z[h] @ W_O[h].", lambda z, W: (z * W).sum(0),
      code="elementwise"),
    M("concatenated the heads along dim 0 (the words): put them side by side, z.transpose(0, 1).reshape(T, H·d), "
      "before the stacked W_O.", lambda z, W: torch.cat(list(z), dim=0) @ W.reshape(-1, W.shape[-1]),
      code="cat_along_words"),
    M("two slips at once: the loop starts at 1 (range(1, n) leaves out head 0), and divided by n at the end (the "
      "recombination is a plain sum).", lambda z, W: (z[1:] @ W[1:]).sum(0) / z.shape[0],
      code="two_slips.loop_from_1+averaged"),
]
