"""Torch only: attention maths, the model, tokens, the classroom language, weights, one run of a sentence."""
