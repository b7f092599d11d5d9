"""Numbers about heads, no matplotlib: scores, knock-outs, head-count experiments, captions."""
