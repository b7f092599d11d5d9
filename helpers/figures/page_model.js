// The classroom model in plain JavaScript: helpers/core/model.py again, for the offline page.
//
// Same names and the same steps as model.py, so a student who reads one can read the other:
// embed -> run_blocks (each Block: ln_1, SelfAttention, residual add, ln_2, MLP, residual add)
// -> unembed (ln_f, then the tied embedding wte). Tensors are flat Float32Arrays in row-major
// order; the shape comments say how to read them. nn.Linear keeps its weight as (out, in).
// The weights come from figures/page.py (model_data): every tensor of the state dict in 16 bits.
"use strict";
window.PageModel = (function () {
  // --- the weights: base64 float16 -> one Float32Array per tensor, once at load -----------------
  function float16(bits) {  // one IEEE half-precision number (1 sign, 5 exponent, 10 fraction bits)
    const sign = bits & 0x8000 ? -1 : 1, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
    if (exponent === 0) return sign * fraction * 2 ** -24;  // subnormal
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
  }
  let HALVES = null;  // every 16-bit pattern's value, made once: decoding is then one look-up per weight
  function loadModel(spec) {
    HALVES = HALVES || Float32Array.from({length: 65536}, (_, bits) => float16(bits));
    const text = atob(spec.weights), n = text.length / 2, values = new Float32Array(n);
    for (let i = 0; i < n; i++) values[i] = HALVES[text.charCodeAt(2 * i) | (text.charCodeAt(2 * i + 1) << 8)];
    const tensors = {};
    for (const [name, [offset, shape]] of Object.entries(spec.tensors)) {
      tensors[name] = values.subarray(offset, offset + shape.reduce((a, b) => a * b, 1));
    }
    const ids = new Map(spec.vocab.map((word, i) => [word, i]));
    return {name: spec.name, config: spec.config, vocab: spec.vocab, ids, tensors, spec};
  }

  // --- the tokenizer of the classroom language (core/tokenizer.py split_words) ------------------
  function splitWords(model, sentence) {  // punctuation apart, split on white space, lower case but "I"
    const marks = new RegExp("([" + model.spec.punctuation.replace(/[\\\]^-]/g, "\\$&") + "])", "g");
    return sentence.replace(marks, " $1 ").split(/\s+/).filter(w => w.length > 0)
      .map(w => w.toLowerCase() === "i" ? "I" : w.toLowerCase());
  }

  // --- the pieces of one block --------------------------------------------------------------------
  function linear(x, T, weight, bias, nIn, nOut) {  // x (T, nIn) @ weight.T + bias -> (T, nOut)
    // Output (t, o) is the dot product of word t with weight row o. The loops take two weight rows
    // and four words at a time: each number read serves several products (bench/bench_page.py measures
    // the forward pass), and every sum still adds its terms in order i = 0, 1, ..., so the result
    // is the same to the last bit.
    const y = new Float32Array(T * nOut);
    let o = 0;
    for (; o + 2 <= nOut; o += 2) {
      const u = o * nIn, v = u + nIn;  // weight rows o and o + 1
      let t = 0;
      for (; t + 4 <= T; t += 4) {
        const r0 = t * nIn, r1 = r0 + nIn, r2 = r1 + nIn, r3 = r2 + nIn;
        let a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
        for (let i = 0; i < nIn; i++) {
          const wu = weight[u + i], wv = weight[v + i];
          const x0 = x[r0 + i], x1 = x[r1 + i], x2 = x[r2 + i], x3 = x[r3 + i];
          a0 += x0 * wu; a1 += x1 * wu; a2 += x2 * wu; a3 += x3 * wu;
          b0 += x0 * wv; b1 += x1 * wv; b2 += x2 * wv; b3 += x3 * wv;
        }
        const y0 = t * nOut + o, y1 = y0 + nOut, y2 = y1 + nOut, y3 = y2 + nOut;  // y[t..t+3, o]
        y[y0] = a0 + bias[o]; y[y1] = a1 + bias[o]; y[y2] = a2 + bias[o]; y[y3] = a3 + bias[o];
        y[y0 + 1] = b0 + bias[o + 1]; y[y1 + 1] = b1 + bias[o + 1];
        y[y2 + 1] = b2 + bias[o + 1]; y[y3 + 1] = b3 + bias[o + 1];
      }
      for (; t < T; t++) dotInto(y, x, t, weight, bias, nIn, nOut, o, 2);  // the last few words
    }
    if (o < nOut) for (let t = 0; t < T; t++) dotInto(y, x, t, weight, bias, nIn, nOut, o, 1);  // an odd last row
    return y;
  }
  function dotInto(y, x, t, weight, bias, nIn, nOut, first, count) {  // y[t, first..first+count) one at a time
    for (let o = first; o < first + count; o++) {
      let s = 0;
      for (let i = 0; i < nIn; i++) s += x[t * nIn + i] * weight[o * nIn + i];
      y[t * nOut + o] = s + bias[o];
    }
  }

  function layerNorm(x, T, D, weight, bias, eps) {  // each row (D,) to mean 0, variance 1, then scaled
    const y = new Float32Array(T * D);
    for (let t = 0; t < T; t++) {
      let mean = 0, variance = 0;
      for (let i = 0; i < D; i++) mean += x[t * D + i];
      mean /= D;
      for (let i = 0; i < D; i++) variance += (x[t * D + i] - mean) ** 2;
      const scale = 1 / Math.sqrt(variance / D + eps);
      for (let i = 0; i < D; i++) y[t * D + i] = (x[t * D + i] - mean) * scale * weight[i] + bias[i];
    }
    return y;
  }
  const ROOT_2_OVER_PI = Math.sqrt(2 / Math.PI);
  const tanh = u => 1 - 2 / (Math.exp(2 * u) + 1);  // = Math.tanh(u); gelu fell from 18 % to 3 % of a pass
  const gelu = x => 0.5 * x * (1 + tanh(ROOT_2_OVER_PI * (x + 0.044715 * x * x * x)));  // GPT-2's "gelu_new"

  function selfAttention(model, layer, x, T, headScale) {
    // x (T, D) -> {update (T, D), weights (H, T, T)}; headScale (H,) of 1 (keep) / 0 (knock out)
    const {n_head: H, n_kv_head: Hkv, n_embd: D} = model.config, d = D / H, kvWidth = Hkv * d;
    const w = name => model.tensors[`h.${layer}.attn.${name}`];
    const qkv = linear(x, T, w("c_attn.weight"), w("c_attn.bias"), D, D + 2 * kvWidth);  // (T, [q | k | v])
    const width = D + 2 * kvWidth, group = H / Hkv;  // query heads 0..group-1 read key/value head 0, ...
    const weights = new Float32Array(H * T * T), heads = new Float32Array(T * D);  // heads merged: (T, H·d)
    const scores = new Float64Array(T), scale = 1 / Math.sqrt(d);
    for (let h = 0; h < H; h++) {
      const q0 = h * d, k0 = D + Math.floor(h / group) * d, v0 = D + kvWidth + Math.floor(h / group) * d;
      for (let i = 0; i < T; i++) {  // query i reads keys 0..i: the causal mask hides later words
        let top = -Infinity;
        for (let j = 0; j <= i; j++) {
          let s = 0;
          for (let c = 0; c < d; c++) s += qkv[i * width + q0 + c] * qkv[j * width + k0 + c];
          scores[j] = s * scale;  // / sqrt(d_head)
          top = Math.max(top, scores[j]);
        }
        let total = 0;
        for (let j = 0; j <= i; j++) { scores[j] = Math.exp(scores[j] - top); total += scores[j]; }
        const row = (h * T + i) * T;
        for (let j = 0; j <= i; j++) weights[row + j] = scores[j] / total;  // softmax over the keys
        const keep = headScale ? headScale[h] : 1;
        for (let c = 0; c < d; c++) {  // this head's output: weights @ v, times 1 or 0
          let s = 0;
          for (let j = 0; j <= i; j++) s += weights[row + j] * qkv[j * width + v0 + c];
          heads[i * D + q0 + c] = keep * s;
        }
      }
    }
    return {update: linear(heads, T, w("c_proj.weight"), w("c_proj.bias"), D, D), weights};
  }

  function mlp(model, layer, x, T) {  // x (T, D) -> (T, D) through 4·D hidden units
    const D = model.config.n_embd, w = name => model.tensors[`h.${layer}.mlp.${name}`];
    const hidden = linear(x, T, w("c_fc.weight"), w("c_fc.bias"), D, 4 * D).map(gelu);  // (T, 4D)
    return linear(hidden, T, w("c_proj.weight"), w("c_proj.bias"), 4 * D, D);
  }

  function block(model, layer, x, T, headScale) {  // x (T, D) -> {x, weights (H, T, T)}
    const {n_embd: D, ln_eps: eps} = model.config, w = name => model.tensors[`h.${layer}.${name}`];
    const normed = layerNorm(x, T, D, w("ln_1.weight"), w("ln_1.bias"), eps);
    const {update, weights} = selfAttention(model, layer, normed, T, headScale);
    const out = x.map((v, i) => v + update[i]);  // the residual add
    if (model.config.mlp) {
      const more = mlp(model, layer, layerNorm(out, T, D, w("ln_2.weight"), w("ln_2.bias"), eps), T);
      for (let i = 0; i < out.length; i++) out[i] += more[i];
    }
    return {x: out, weights};
  }

  // --- the model ------------------------------------------------------------------------------------
  function embed(model, ids) {  // token plus position embeddings: ids (T,) -> (T, D)
    const D = model.config.n_embd, x = new Float32Array(ids.length * D);
    const wte = model.tensors["wte.weight"], wpe = model.tensors["wpe.weight"];
    ids.forEach((id, t) => { for (let i = 0; i < D; i++) x[t * D + i] = wte[id * D + i] + wpe[t * D + i]; });
    return x;
  }

  function runBlocks(model, x, T, first, headScale, kept) {
    // The one loop over the blocks: x (T, D) enters block `first`. headScale (L, H) or null.
    // kept: {residuals, attentions} of an earlier run, reused below `first` (a knock-out restarts here).
    const {n_layer: L} = model.config;
    const residuals = kept ? kept.residuals.slice(0, first + 1) : [x];
    const attentions = kept ? kept.attentions.slice(0, first) : [];  // (H, T, T) per layer
    for (let i = first; i < L; i++) {
      const out = block(model, i, x, T, headScale ? headScale[i] : null);
      x = out.x;
      residuals.push(x);
      attentions.push(out.weights);
    }
    return {residuals, attentions, probs: nextWordProbs(model, x, T)};
  }

  function unembed(model, x, T) {  // the last position's residual -> next-word logits (vocab,)
    const {n_embd: D, vocab_size: V, ln_eps: eps} = model.config;
    const last = layerNorm(x.subarray((T - 1) * D), 1, D, model.tensors["ln_f.weight"], model.tensors["ln_f.bias"], eps);
    return linear(last, 1, model.tensors["wte.weight"], new Float32Array(V), D, V);  // tied: wte again
  }
  function nextWordProbs(model, x, T) {  // softmax of the logits: (vocab,)
    const logits = unembed(model, x, T), top = Math.max(...logits);
    const e = Array.from(logits, v => Math.exp(v - top)), total = e.reduce((a, b) => a + b, 0);
    return Float32Array.from(e, v => v / total);
  }

  function run(model, ids, headScale) {  // ids (T,) -> {residuals (L+1)×(T, D), attentions L×(H, T, T), probs}
    return runBlocks(model, embed(model, ids), ids.length, 0, headScale, null);
  }
  return {loadModel, splitWords, run, runBlocks, embed};
})();
