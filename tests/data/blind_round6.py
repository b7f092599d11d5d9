"""Blind round 6: student answers to the exercises of notebooks 01-08, written from the notebooks alone
(without reading the checks, their mistake catalogue or the earlier rounds). Each entry: exercise (the
function or class name), notebook ("01".."08"), label (the mistake as the student would say it; "" for a
correct answer), kind (one word), correct (bool), source (the full def as typed into the cell)."""

from textwrap import dedent

ANSWERS = []


def _add(exercise, notebook, label, kind, correct, source):
    ANSWERS.append({"exercise": exercise, "notebook": notebook, "label": label, "kind": kind,
                    "correct": correct, "source": dedent(source).strip() + "\n"})


def _wrong(exercise, notebook, label, kind, source):
    _add(exercise, notebook, label, kind, False, source)


def _right(exercise, notebook, label, source):
    _add(exercise, notebook, label, "", True, source)


# --- notebook 01, exercise 1: attention_weights ---------------------------------------------------

_wrong("attention_weights", "01", "scaled by the number of words (Q.shape[0]) instead of the query length", "scale", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        d = Q.shape[0]
        scores = Q @ K.T / d ** 0.5
        return scores.softmax(dim=-1)
''')

_wrong("attention_weights", "01", "divided by d, not by its square root", "scale", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        d = Q.shape[-1]
        scores = (Q @ K.T) / d
        return scores.softmax(dim=-1)
''')

_wrong("attention_weights", "01", "keys against queries (K @ Q.T): rows end up being the keys", "transpose", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        d = Q.shape[-1]
        scores = K @ Q.T / d ** 0.5
        return scores.softmax(dim=-1)
''')

_wrong("attention_weights", "01", "kept the notebook's √768 for every input", "hardcode", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        scores = Q @ K.T / 768 ** 0.5
        return scores.softmax(dim=-1)
''')

_wrong("attention_weights", "01", "multiplied by √d instead of dividing", "scale", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        d = Q.shape[-1]
        scores = Q @ K.T * d ** 0.5
        return scores.softmax(dim=-1)
''')

_wrong("attention_weights", "01", "softmax of each row done by hand but divided by the total of the whole table", "normalise", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        d = Q.shape[-1]
        e = torch.exp(Q @ K.T / d ** 0.5)
        return e / e.sum()
''')

_right("attention_weights", "01", "", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        import math
        scores = torch.einsum("qd,kd->qk", Q, K) / math.sqrt(Q.shape[1])
        return torch.softmax(scores, dim=1)
''')

_right("attention_weights", "01", "", '''
    def attention_weights(Q, K):
        """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
        d = Q.size(-1)
        scores = Q @ K.transpose(0, 1) / d ** 0.5
        scores = scores - scores.max(dim=-1, keepdim=True).values  # stable: the softmax ignores shifts
        e = scores.exp()
        return e / e.sum(dim=-1, keepdim=True)
''')


# --- notebook 01, exercise 2: masked_weights ------------------------------------------------------

_wrong("masked_weights", "01", "tril(-1) instead of triu(1): hid the earlier words", "triangle", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        where = torch.ones(T, T, dtype=torch.bool).tril(-1)
        return scores.masked_fill(where, float("-inf")).softmax(dim=-1)
''')

_wrong("masked_weights", "01", "wrote float(\"inf\") without the minus sign", "sign", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        where = torch.ones(T, T, dtype=torch.bool).triu(1)
        return scores.masked_fill(where, float("inf")).softmax(dim=-1)
''')

_wrong("masked_weights", "01", "softmax first, then zeroed the later words", "order", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        weights = scores.softmax(dim=-1)
        where = torch.ones(T, T, dtype=torch.bool).triu(1)
        return weights.masked_fill(where, 0.0)
''')

_wrong("masked_weights", "01", "kept the lower triangle by multiplying with a 0/1 matrix", "fill", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        keep = torch.ones(T, T).tril()
        return (scores * keep).softmax(dim=-1)
''')

_wrong("masked_weights", "01", "masked_fill_ with the underscore: changed the caller's scores", "inplace", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        scores.masked_fill_(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return scores.softmax(dim=-1)
''')

_wrong("masked_weights", "01", "mask built for the 4 words of 'I like to draw'", "hardcode", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        future = torch.ones(4, 4, dtype=torch.bool).triu(1)
        return scores.masked_fill(future, float("-inf")).softmax(dim=-1)
''')

_wrong("masked_weights", "01", "after masking, softmax over dim=0", "axis", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        return scores.masked_fill(future, float("-inf")).softmax(dim=0)
''')

_right("masked_weights", "01", "", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
        masked = torch.where(allowed, scores, torch.tensor(float("-inf")))
        return torch.softmax(masked, dim=-1)
''')

_right("masked_weights", "01", "", '''
    def masked_weights(scores):
        """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
        T = scores.shape[-1]
        penalty = torch.full((T, T), float("-inf")).triu(1)  # -inf above the diagonal, 0 elsewhere
        return (scores + penalty).softmax(dim=-1)
''')


# --- notebook 01, exercise 3: weighted_sum --------------------------------------------------------

_wrong("weighted_sum", "01", "transposed the weights (weights.T @ V)", "transpose", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        return weights.T @ V
''')

_wrong("weighted_sum", "01", "loop that multiplies by V[i] (the query's own value) instead of V[j]", "index", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        T = weights.shape[0]
        out = torch.zeros_like(V)
        for i in range(T):
            for j in range(T):
                out[i] += weights[i, j] * V[i]
        return out
''')

_wrong("weighted_sum", "01", "returned a Python list of row tensors", "type", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        return [row @ V for row in weights]
''')

_wrong("weighted_sum", "01", "divided by T to make it an average", "normalise", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        T = weights.shape[0]
        return weights @ V / T
''')

_wrong("weighted_sum", "01", "broadcast over the wrong axis: summed over the queries", "axis", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        return (weights.unsqueeze(-1) * V.unsqueeze(1)).sum(dim=0)
''')

_wrong("weighted_sum", "01", "loop that starts at 1 and skips the first word", "offbyone", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        rows = []
        for i in range(len(weights)):
            total = torch.zeros(V.shape[1])
            for j in range(1, len(V)):
                total = total + weights[i, j] * V[j]
            rows.append(total)
        return torch.stack(rows)
''')

_right("weighted_sum", "01", "", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        return torch.einsum("ij,jd->id", weights, V)
''')

_right("weighted_sum", "01", "", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        return (weights[:, :, None] * V[None, :, :]).sum(dim=1)
''')

_right("weighted_sum", "01", "", '''
    def weighted_sum(weights, V):
        """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
        rows = []
        for i in range(weights.shape[0]):
            rows.append(sum(weights[i, j] * V[j] for j in range(V.shape[0])))
        return torch.stack(rows)
''')


# --- notebook 02, exercise 1: one_head ------------------------------------------------------------

_wrong("one_head", "02", "scaled by √D, the width of X, instead of the head size", "scale", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        weights = (Q @ K.T / X.shape[-1] ** 0.5).softmax(dim=-1)
        return weights @ V
''')

_wrong("one_head", "02", "returned the weights, forgot the values", "incomplete", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        Q, K = X @ W_Q, X @ W_K
        d = W_Q.shape[1]
        return (Q @ K.T / d ** 0.5).softmax(dim=-1)
''')

_wrong("one_head", "02", "added the causal mask of notebook 01 although this exercise has none", "mask", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        d = Q.shape[-1]
        T = X.shape[0]
        scores = (Q @ K.T / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return scores.softmax(dim=-1) @ V
''')

_wrong("one_head", "02", "copy-paste slip: keys made with W_Q", "copy", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        Q = X @ W_Q
        K = X @ W_Q
        V = X @ W_V
        d = Q.shape[-1]
        return (Q @ K.T / d ** 0.5).softmax(dim=-1) @ V
''')

_wrong("one_head", "02", "kept the head size 64 of the notebook", "hardcode", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        weights = (Q @ K.T / 8).softmax(dim=-1)  # √64 = 8
        return weights @ V
''')

_wrong("one_head", "02", "weights on the left of V but transposed (V.T @ weights.T gives [d × T])", "transpose", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        d = Q.shape[-1]
        weights = (Q @ K.T / d ** 0.5).softmax(dim=-1)
        return V.T @ weights.T
''')

_right("one_head", "02", "", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V)
''')

_right("one_head", "02", "", '''
    def one_head(X, W_Q, W_K, W_V):
        """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
        d = W_K.shape[1]
        Q = torch.einsum("td,de->te", X, W_Q) / d ** 0.25  # half the scale on each side
        K = torch.einsum("td,de->te", X, W_K) / d ** 0.25
        weights = torch.softmax(Q @ K.T, dim=1)
        return weights @ (X @ W_V)
''')


# --- notebook 02, exercise 2: split_heads ---------------------------------------------------------

_wrong("split_heads", "02", "reshaped straight to [n_heads, T, d]", "layout", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        T, D = x.shape
        return x.reshape(n_heads, T, D // n_heads)
''')

_wrong("split_heads", "02", "reshaped to [T, n_heads, d] and forgot to swap the axes", "incomplete", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        T, D = x.shape
        return x.reshape(T, n_heads, D // n_heads)
''')

_wrong("split_heads", "02", "reshaped to [T, d, n_heads]: each head gets every n-th feature", "layout", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        T, D = x.shape
        return x.reshape(T, D // n_heads, n_heads).permute(2, 0, 1)
''')

_wrong("split_heads", "02", "chunked along the words (dim=0)", "axis", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        return torch.stack(x.chunk(n_heads, dim=0))
''')

_wrong("split_heads", "02", "head size with / gives a float", "float", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        T, D = x.shape
        d = D / n_heads
        return x.reshape(T, n_heads, d).transpose(0, 1)
''')

_wrong("split_heads", "02", "swapped the last two axes instead of the first two", "transpose", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        T, D = x.shape
        return x.reshape(T, n_heads, D // n_heads).transpose(1, 2)
''')

_right("split_heads", "02", "", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        d = x.shape[1] // n_heads
        return torch.stack([x[:, h * d:(h + 1) * d] for h in range(n_heads)])
''')

_right("split_heads", "02", "", '''
    def split_heads(x, n_heads):
        """x [T × D] -> [n_heads × T × D // n_heads]."""
        return x.unflatten(-1, (n_heads, -1)).permute(1, 0, 2)
''')


# --- notebook 03, exercise 1: merge_heads ---------------------------------------------------------

_wrong("merge_heads", "03", "plain reshape of the input, no transpose", "layout", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        n_heads, T, d = z.shape
        return z.reshape(T, n_heads * d)
''')

_wrong("merge_heads", "03", "permute(1, 2, 0): the heads' features come out interleaved", "layout", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        n_heads, T, d = z.shape
        return z.permute(1, 2, 0).reshape(T, n_heads * d)
''')

_wrong("merge_heads", "03", "concatenated along the words (dim=0)", "axis", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        return torch.cat(list(z), dim=0)
''')

_wrong("merge_heads", "03", "added the heads up instead of laying them side by side", "concept", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        return z.sum(dim=0)
''')

_wrong("merge_heads", "03", "loop over range(1, n_heads): head 0 left out", "offbyone", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        n_heads = z.shape[0]
        return torch.cat([z[h] for h in range(1, n_heads)], dim=-1)
''')

_wrong("merge_heads", "03", "swapped T and d before the reshape (transpose(1, 2))", "transpose", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        n_heads, T, d = z.shape
        return z.transpose(1, 2).reshape(T, n_heads * d)
''')

_right("merge_heads", "03", "", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        return torch.cat(z.unbind(0), dim=-1)
''')

_right("merge_heads", "03", "", '''
    def merge_heads(z):
        """z [n_heads × T × d] -> [T × n_heads * d]."""
        return z.permute(1, 0, 2).flatten(start_dim=1)
''')


# --- notebook 03, exercise 2: recombine -----------------------------------------------------------

_wrong("recombine", "03", "averaged the heads' updates instead of adding them", "reduce", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        return (z @ W_O).mean(dim=0)
''')

_wrong("recombine", "03", "summed over the words (dim=1) instead of the heads", "axis", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        return (z @ W_O).sum(dim=1)
''')

_wrong("recombine", "03", "added up the W_O blocks first, then multiplied", "order", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        return z.sum(dim=0) @ W_O.sum(dim=0)
''')

_wrong("recombine", "03", "flattened z with a plain reshape before the one big product", "layout", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        n_heads, T, d = z.shape
        return z.reshape(T, n_heads * d) @ W_O.reshape(n_heads * d, -1)
''')

_wrong("recombine", "03", "concatenated the heads' updates side by side instead of adding", "concept", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        return torch.cat([z[h] @ W_O[h] for h in range(z.shape[0])], dim=-1)
''')

_wrong("recombine", "03", "einsum that keeps the head index (per-head updates, not added)", "reduce", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        return torch.einsum("htd,hdo->hto", z, W_O)
''')

_right("recombine", "03", "", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        return torch.einsum("htd,hdo->to", z, W_O)
''')

_right("recombine", "03", "", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        n_heads, T, d = z.shape
        merged = z.transpose(0, 1).reshape(T, n_heads * d)  # concatenate, then one big W_O
        return merged @ W_O.reshape(n_heads * d, W_O.shape[-1])
''')

_right("recombine", "03", "", '''
    def recombine(z, W_O):
        """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
        total = 0
        for h in range(z.shape[0]):
            total = total + z[h] @ W_O[h]
        return total
''')


# --- notebook 03, exercise 3: MyMultiHead ---------------------------------------------------------

_wrong("MyMultiHead", "03", "forgot step 4, the causal mask", "mask", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = [t.reshape(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v)]
            weights = (q @ k.transpose(-2, -1) / self.size ** 0.5).softmax(dim=-1)
            y = (weights @ v).transpose(1, 2).reshape(B, T, D)
            return self.out(y)
''')

_wrong("MyMultiHead", "03", "split by reshaping straight to [B, heads, T, size]", "layout", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q = q.reshape(B, self.heads, T, self.size)
            k = k.reshape(B, self.heads, T, self.size)
            v = v.reshape(B, self.heads, T, self.size)
            scores = q @ k.transpose(-2, -1) / self.size ** 0.5
            future = torch.ones(T, T, dtype=torch.bool).triu(1)
            weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
            y = (weights @ v).transpose(1, 2).reshape(B, T, D)
            return self.out(y)
''')

_wrong("MyMultiHead", "03", "scaled by √dim (768) instead of √size (64)", "scale", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / D ** 0.5
            future = torch.ones(T, T, dtype=torch.bool).triu(1)
            weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
            y = (weights @ v).transpose(1, 2).reshape(B, T, D)
            return self.out(y)
''')

_wrong("MyMultiHead", "03", "merged back with a reshape only, without swapping back", "layout", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / self.size ** 0.5
            future = torch.ones(T, T, dtype=torch.bool).triu(1)
            weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
            y = (weights @ v).reshape(B, T, D)
            return self.out(y)
''')

_wrong("MyMultiHead", "03", "forgot step 7, returned the merged heads without self.out", "incomplete", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / self.size ** 0.5
            future = torch.ones(T, T, dtype=torch.bool).triu(1)
            weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
            return (weights @ v).transpose(1, 2).reshape(B, T, D)
''')

_wrong("MyMultiHead", "03", "mask sized for 'I like to draw' (4 tokens)", "hardcode", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O
            self.register_buffer("future", torch.ones(4, 4, dtype=torch.bool).triu(1))

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / self.size ** 0.5
            weights = scores.masked_fill(self.future, float("-inf")).softmax(dim=-1)
            y = (weights @ v).transpose(1, 2).reshape(B, T, D)
            return self.out(y)
''')

_wrong("MyMultiHead", "03", "the order q, v, k when unpacking the chunks", "order", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, v, k = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / self.size ** 0.5
            future = torch.ones(T, T, dtype=torch.bool).triu(1)
            weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
            y = (weights @ v).transpose(1, 2).reshape(B, T, D)
            return self.out(y)
''')

_right("MyMultiHead", "03", "", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (t.unflatten(-1, (self.heads, self.size)).permute(0, 2, 1, 3) for t in (q, k, v))
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.out(y.permute(0, 2, 1, 3).flatten(2))
''')

_right("MyMultiHead", "03", "", '''
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
            self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

        def forward(self, x):
            """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            outputs = []
            for h in range(self.heads):  # one head at a time, on its own block of columns
                cols = slice(h * self.size, (h + 1) * self.size)
                scores = torch.einsum("bqs,bks->bqk", q[..., cols], k[..., cols]) / self.size ** 0.5
                scores = scores + torch.full((T, T), float("-inf")).triu(1)
                outputs.append(scores.softmax(dim=-1) @ v[..., cols])
            return self.out(torch.cat(outputs, dim=-1))
''')


# --- notebook 04, exercise 1: concat_shape --------------------------------------------------------

_wrong("concat_shape", "04", "gave the stacked heads' shape, not the concatenation", "concept", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        return (n_heads, n_tokens, width // n_heads)
''')

_wrong("concat_shape", "04", "gave one head's output shape", "concept", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        return (n_tokens, width // n_heads)
''')

_wrong("concat_shape", "04", "each head gives width numbers, so n_heads × width columns", "concept", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        return (n_tokens, n_heads * width)
''')

_wrong("concat_shape", "04", "added a row for <bos> on top of the T tokens", "offbyone", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        return (n_tokens + 1, n_heads * (width // n_heads))
''')

_wrong("concat_shape", "04", "rows and columns swapped", "transpose", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        return (n_heads * (width // n_heads), n_tokens)
''')

_wrong("concat_shape", "04", "returned the number of entries instead of the shape", "type", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        return n_tokens * n_heads * (width // n_heads)
''')

_right("concat_shape", "04", "", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        d = width // n_heads
        return tuple(torch.zeros(n_heads, n_tokens, d).transpose(0, 1).reshape(n_tokens, -1).shape)
''')

_right("concat_shape", "04", "", '''
    def concat_shape(n_tokens, width, n_heads):
        """Return (rows, columns) of the concatenated head outputs."""
        head_size = width // n_heads
        columns = sum(head_size for _ in range(n_heads))
        return n_tokens, columns
''')


# --- notebook 04, exercise 2: head_size_and_params ------------------------------------------------

_wrong("head_size_and_params", "04", "forgot the biases: 4 × width²", "bias", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        return d, n_heads * (3 * width * d + d * width)
''')

_wrong("head_size_and_params", "04", "left out the output bias", "bias", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        return d, n_heads * (3 * (width * d + d) + d * width)
''')

_wrong("head_size_and_params", "04", "counted the output bias once per head", "bias", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        return d, n_heads * (3 * (width * d + d) + d * width + width)
''')

_wrong("head_size_and_params", "04", "head size with /, a float", "float", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width / n_heads
        return d, n_heads * (3 * (width * d + d) + d * width) + width
''')

_wrong("head_size_and_params", "04", "counted one head only", "concept", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        return d, 3 * (width * d + d) + d * width + width
''')

_wrong("head_size_and_params", "04", "returned (parameters, head size)", "order", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        params = n_heads * (3 * (width * d + d) + d * width) + width
        return params, d
''')

_wrong("head_size_and_params", "04", "forgot W_O: only query, key and value", "incomplete", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        return d, n_heads * 3 * (width * d + d) + width
''')

_right("head_size_and_params", "04", "", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        qkv = torch.nn.Linear(width, 3 * n_heads * d)  # every head's W_Q, W_K, W_V and biases
        out = torch.nn.Linear(n_heads * d, width)  # W_O and the output bias
        return d, sum(p.numel() for p in qkv.parameters()) + sum(p.numel() for p in out.parameters())
''')

_right("head_size_and_params", "04", "", '''
    def head_size_and_params(width, n_heads):
        """Return (head size, parameters of one attention layer)."""
        d = width // n_heads
        inner = n_heads * d  # the concatenation's width
        return (d, 4 * width * inner + 3 * inner + width)
''')


# --- notebook 05, exercise 1: previous_word_head --------------------------------------------------

_wrong("previous_word_head", "05", "offset=1: read just above the diagonal", "offset", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        below = attentions.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1)
        best = int(below.argmax())
        return best // below.shape[1], best % below.shape[1]
''')

_wrong("previous_word_head", "05", "used the main diagonal (the word itself)", "offset", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        own = attentions.diagonal(dim1=-2, dim2=-1).mean(-1)
        best = int(own.argmax())
        return best // own.shape[1], best % own.shape[1]
''')

_wrong("previous_word_head", "05", "returned (head, layer)", "order", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        below = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
        n_heads = below.shape[1]
        best = int(below.argmax())
        return best % n_heads, best // n_heads
''')

_wrong("previous_word_head", "05", "picked the best layer on average, then the best head in it", "reduce", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        below = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
        layer = int(below.mean(dim=1).argmax())
        head = int(below[layer].argmax())
        return layer, head
''')

_wrong("previous_word_head", "05", "took each head's single largest previous-word weight, not its mean", "reduce", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        below = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).max(dim=-1).values
        best = int(below.argmax())
        return best // below.shape[1], best % below.shape[1]
''')

_wrong("previous_word_head", "05", "returned the flat index of the best head", "type", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        below = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
        return int(below.argmax())
''')

_right("previous_word_head", "05", "", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        below = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1)  # a sum ranks like the mean
        layer, head = np.unravel_index(int(below.argmax()), tuple(below.shape))
        return int(layer), int(head)
''')

_right("previous_word_head", "05", "", '''
    def previous_word_head(attentions):
        """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
        n_layers, n_heads, T, _ = attentions.shape
        best, best_score = None, -1.0
        for layer in range(n_layers):
            for head in range(n_heads):
                score = sum(float(attentions[layer, head, t, t - 1]) for t in range(1, T)) / (T - 1)
                if score > best_score:
                    best, best_score = (layer, head), score
        return best
''')


# --- notebook 05, exercise 2: predict_induction ---------------------------------------------------

_wrong("predict_induction", "05", "put the 1 on the earlier copy itself, not the word after it", "offbyone", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        T = len(tokens)
        pattern = np.zeros((T, T))
        for q in range(T):
            earlier = [k for k in range(q) if tokens[k] == tokens[q]]
            pattern[q, earlier[-1] if earlier else 0] = 1
        return pattern
''')

_wrong("predict_induction", "05", "took the word before the earlier copy", "offbyone", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        T = len(tokens)
        pattern = np.zeros((T, T))
        for q in range(T):
            earlier = [k for k in range(q) if tokens[k] == tokens[q]]
            pattern[q, earlier[-1] - 1 if earlier else 0] = 1
        return pattern
''')

_wrong("predict_induction", "05", "searched range(q + 1), so every word finds itself", "range", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        T = len(tokens)
        pattern = np.zeros((T, T))
        for q in range(T):
            earlier = [k for k in range(q + 1) if tokens[k] == tokens[q]]
            target = earlier[-1] + 1 if earlier else 0
            if target < T:
                pattern[q, target] = 1
        return pattern
''')

_wrong("predict_induction", "05", "filled the array as [key, query] (transposed)", "transpose", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        T = len(tokens)
        pattern = np.zeros((T, T))
        for q in range(T):
            earlier = [k for k in range(q) if tokens[k] == tokens[q]]
            pattern[earlier[-1] + 1 if earlier else 0, q] = 1
        return pattern
''')

_wrong("predict_induction", "05", "returned the target position of each query, not a (T, T) array", "type", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        targets = []
        for q, word in enumerate(tokens):
            earlier = [k for k in range(q) if tokens[k] == word]
            targets.append(earlier[-1] + 1 if earlier else 0)
        return targets
''')

_wrong("predict_induction", "05", "hard-coded the list's 7-token gap from the printed tokens", "hardcode", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        T = len(tokens)
        pattern = np.zeros((T, T))
        pattern[:, 0] = 1
        for q in range(9, T):  # 'again' is at 8: the second copy starts at 9, 7 after the first
            pattern[q, 0] = 0
            pattern[q, q - 6] = 1
        return pattern
''')

_right("predict_induction", "05", "", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        T = len(tokens)
        pattern = np.zeros((T, T))
        last_seen = {}
        for q, word in enumerate(tokens):
            pattern[q, last_seen[word] + 1 if word in last_seen else 0] = 1
            last_seen[word] = q
        return pattern
''')

_right("predict_induction", "05", "", '''
    def predict_induction(tokens):
        """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
        T = len(tokens)
        rows = []
        for q in range(T):
            row = [0] * T
            target = 0
            for k in range(q - 1, -1, -1):  # walk back to the nearest earlier copy
                if tokens[k] == tokens[q]:
                    target = k + 1
                    break
            row[target] = 1
            rows.append(row)
        return np.array(rows, dtype=float)
''')


# --- notebook 06: my_prediction -------------------------------------------------------------------

_wrong("my_prediction", "06", "it hardly looks at the earlier copy, so nothing changes: 1.0", "concept", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        return 1.0
''')

_wrong("my_prediction", "06", "the induction heads go blind: 0", "concept", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        return 0.0
''')

_wrong("my_prediction", "06", "wrote the guess as a percentage", "units", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        return 80
''')

_wrong("my_prediction", "06", "took the 0.002 it puts on the earlier copy", "misread", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        return 0.002
''')

_wrong("my_prediction", "06", "printed the guess and left the stub's return None", "print", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        print(0.8)
        return None
''')

_wrong("my_prediction", "06", "a coin flip: half", "concept", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        return 0.5
''')

_right("my_prediction", "06", "", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        return 4 / 5
''')

_right("my_prediction", "06", "", '''
    def my_prediction():
        # your guess: induction accuracy (0..1) after removing L0 H9 alone
        guess_percent = 80
        return guess_percent / 100
''')


# --- notebook 07, exercise 1: kv_cache_bytes ------------------------------------------------------

_wrong("kv_cache_bytes", "07", "counted the keys only (no factor 2 for the values)", "factor", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        head_size = config["hidden_size"] // config["num_attention_heads"]
        return config["num_hidden_layers"] * config["num_key_value_heads"] * head_size * n_tokens * 2
''')

_wrong("kv_cache_bytes", "07", "used every attention head, not the key/value heads", "heads", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        head_size = config["hidden_size"] // config["num_attention_heads"]
        return 2 * config["num_hidden_layers"] * config["num_attention_heads"] * head_size * 2 * n_tokens
''')

_wrong("kv_cache_bytes", "07", "head size from the key/value heads (hidden_size // num_key_value_heads)", "headsize", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        kv = config["num_key_value_heads"]
        head_size = config["hidden_size"] // kv
        return 2 * config["num_hidden_layers"] * kv * head_size * 2 * n_tokens
''')

_wrong("kv_cache_bytes", "07", "16 bits per number counted as 16 bytes", "units", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        head_size = config["hidden_size"] // config["num_attention_heads"]
        numbers = 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * head_size * n_tokens
        return numbers * 16
''')

_wrong("kv_cache_bytes", "07", "head size with /, the answer comes out a float", "float", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        head_size = config["hidden_size"] / config["num_attention_heads"]
        return 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * head_size * 2 * n_tokens
''')

_wrong("kv_cache_bytes", "07", "returned gigabytes", "units", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        head_size = config["hidden_size"] // config["num_attention_heads"]
        total = 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * head_size * 2 * n_tokens
        return total / 1024 ** 3
''')

_wrong("kv_cache_bytes", "07", "typed in Mistral's numbers instead of reading config", "hardcode", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        return 2 * 32 * 8 * (4096 // 32) * 2 * n_tokens
''')

_right("kv_cache_bytes", "07", "", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        import math
        head_size = config["hidden_size"] // config["num_attention_heads"]
        kv_width = config["num_key_value_heads"] * head_size  # numbers per token for the keys of one layer
        return int(math.prod([n_tokens, config["num_hidden_layers"], 2, kv_width, 2]))
''')

_right("kv_cache_bytes", "07", "", '''
    def kv_cache_bytes(config, n_tokens):
        """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
        per_layer_per_token = torch.zeros(2, config["num_key_value_heads"],
                                          config["hidden_size"] // config["num_attention_heads"],
                                          dtype=torch.float16)  # one key and one value per kv head
        return per_layer_per_token.nelement() * per_layer_per_token.element_size() * config["num_hidden_layers"] * n_tokens
''')


# --- notebook 07, exercise 2: grouped_attention ---------------------------------------------------

_wrong("grouped_attention", "07", "K.repeat instead of repeat_interleave: head h reads h % n_kv_heads", "tile", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        group = n_heads // K.shape[0]
        K, V = K.repeat(group, 1, 1), V.repeat(group, 1, 1)
        scores = Q @ K.transpose(-2, -1) / d ** 0.5
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        return scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ V
''')

_wrong("grouped_attention", "07", "forgot the causal mask", "mask", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        group = n_heads // K.shape[0]
        K, V = K.repeat_interleave(group, dim=0), V.repeat_interleave(group, dim=0)
        return (Q @ K.transpose(-2, -1) / d ** 0.5).softmax(dim=-1) @ V
''')

_wrong("grouped_attention", "07", "indexed the kv head with h // n_kv_heads", "index", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        n_kv_heads = K.shape[0]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        out = []
        for h in range(n_heads):
            kv = h // n_kv_heads
            scores = (Q[h] @ K[kv].T / d ** 0.5).masked_fill(future, float("-inf"))
            out.append(scores.softmax(dim=-1) @ V[kv])
        return torch.stack(out)
''')

_wrong("grouped_attention", "07", "index h // (n_heads / n_kv_heads): the inner / makes it a float", "float", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        n_kv_heads = K.shape[0]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        out = torch.empty_like(Q)
        for h in range(n_heads):
            kv = h // (n_heads / n_kv_heads)
            scores = (Q[h] @ K[kv].T / d ** 0.5).masked_fill(future, float("-inf"))
            out[h] = scores.softmax(dim=-1) @ V[kv]
        return out
''')

_wrong("grouped_attention", "07", "scaled by √T instead of √d", "scale", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        group = n_heads // K.shape[0]
        K, V = K.repeat_interleave(group, dim=0), V.repeat_interleave(group, dim=0)
        scores = Q @ K.transpose(-2, -1) / T ** 0.5
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        return scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ V
''')

_wrong("grouped_attention", "07", "averaged each group's queries: one output per kv head", "concept", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        n_kv_heads = K.shape[0]
        Qg = Q.reshape(n_kv_heads, n_heads // n_kv_heads, T, d).mean(dim=1)
        scores = Qg @ K.transpose(-2, -1) / d ** 0.5
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        return scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ V
''')

_wrong("grouped_attention", "07", "scores as keys against queries (K @ Q^T): the map comes out transposed", "transpose", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        group = n_heads // K.shape[0]
        K, V = K.repeat_interleave(group, dim=0), V.repeat_interleave(group, dim=0)
        scores = K @ Q.transpose(-2, -1) / d ** 0.5
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        return scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ V
''')

_right("grouped_attention", "07", "", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        n_kv_heads = K.shape[0]
        group = n_heads // n_kv_heads
        K = K.unsqueeze(1).expand(n_kv_heads, group, T, d).reshape(n_heads, T, d)
        V = V.unsqueeze(1).expand(n_kv_heads, group, T, d).reshape(n_heads, T, d)
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
''')

_right("grouped_attention", "07", "", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        n_kv_heads = K.shape[0]
        Qg = Q.reshape(n_kv_heads, n_heads // n_kv_heads, T, d)  # neighbouring query heads in one group
        scores = torch.einsum("gqtd,gsd->gqts", Qg, K) / d ** 0.5
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        out = torch.einsum("gqts,gsd->gqtd", scores.softmax(dim=-1), V)
        return out.reshape(n_heads, T, d)
''')

_right("grouped_attention", "07", "", '''
    def grouped_attention(Q, K, V):
        """Q [n_heads × T × d], K and V [n_kv_heads × T × d] -> [n_heads × T × d]."""
        n_heads, T, d = Q.shape
        group = n_heads // K.shape[0]
        later = torch.ones(T, T, dtype=torch.bool).triu(1)
        heads = []
        for h in range(n_heads):
            k, v = K[h // group], V[h // group]
            w = torch.softmax((Q[h] @ k.T) / d ** 0.5 + torch.where(later, float("-inf"), 0.0), dim=-1)
            heads.append(w @ v)
        return torch.stack(heads)
''')


# --- notebook 08, exercise 1: formation_step ------------------------------------------------------

_wrong("formation_step", "08", "strictly above 0.5 (> instead of >=)", "boundary", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        for step, score in zip(steps, scores):
            if score > 0.5:
                return step
        return None
''')

_wrong("formation_step", "08", "returned the snapshot's index, not its step", "index", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        for i, score in enumerate(scores):
            if score >= 0.5:
                return i
        return None
''')

_wrong("formation_step", "08", "converted to tokens with tokens_per_step", "units", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        for step, score in zip(steps, scores):
            if score >= 0.5:
                return step * tokens_per_step
        return None
''')

_wrong("formation_step", "08", "no early return: kept the last step above 0.5", "loop", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        found = None
        for step, score in zip(steps, scores):
            if score >= 0.5:
                found = step
        return found
''')

_wrong("formation_step", "08", "returned -1 when the head never forms", "sentinel", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        for step, score in zip(steps, scores):
            if score >= 0.5:
                return step
        return -1
''')

_wrong("formation_step", "08", "the step of the highest score", "concept", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        best = max(range(len(scores)), key=lambda i: scores[i])
        return steps[best] if scores[best] >= 0.5 else None
''')

_wrong("formation_step", "08", "returned the step before the one that reaches 0.5", "offbyone", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        for i in range(1, len(steps)):
            if scores[i] >= 0.5:
                return steps[i - 1]
        return None
''')

_right("formation_step", "08", "", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        return next((s for s, v in zip(steps, scores) if v >= 0.5), None)
''')

_right("formation_step", "08", "", '''
    def formation_step(steps, scores, tokens_per_step):
        """The first step whose score reaches 0.5."""
        i = 0
        while i < len(scores) and not scores[i] >= 0.5:
            i += 1
        if i == len(scores):
            return None
        return steps[i]
''')


# --- notebook 08, exercise 2: my_knockout_prediction ----------------------------------------------

_wrong("my_knockout_prediction", "08", "no change either time: 8 % and 100 %", "concept", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        return 0.08, 1.0
''')

_wrong("my_knockout_prediction", "08", "wrote percentages, not fractions", "units", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        return 4, 1
''')

_wrong("my_knockout_prediction", "08", "the rest of the model carries it at the end: small drop to 84 %", "concept", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        return (0.04, 0.84)
''')

_wrong("my_knockout_prediction", "08", "read 92 % at step 720 as the step-552 number", "misread", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        return 0.92, 0.01
''')

_wrong("my_knockout_prediction", "08", "returned one number: only the end", "type", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        return 0.01
''')

_wrong("my_knockout_prediction", "08", "halved both numbers", "concept", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        with_head = (0.08, 1.0)
        return tuple(x / 2 for x in with_head)
''')

_right("my_knockout_prediction", "08", "", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        before, end = 4 / 100, 1 / 100
        return before, end
''')

_right("my_knockout_prediction", "08", "", '''
    def my_knockout_prediction():
        """(share of lists said again without L0 H0 at step 552, the same at step 1953)."""
        return (0.05, 0.0)
''')
