// What the offline page does with a run of page_model.js: the tokenizer's checks, with one line for
// each kind of bad input (core/tokenizer.py), the captions of every head (analysis/captions.py
// head_caption and all_heads_caption) and the knock-outs (analysis/knockout.py, zeroing a head).
// No drawing here: page_view.js draws what these return.
"use strict";
window.PageLive = (function () {
  const pct = x => `${(100 * x).toFixed(0)} %`;
  function wordFacts(tokens, rest) {  // once per sentence: resting keys, repeated words and their targets
    const rows = tokens.map((w, q) => q).filter(q => tokens.slice(0, q).includes(tokens[q]));
    return {resting: tokens.map(t => rest.includes(t)), rows, targets: rows.map(q => tokens.lastIndexOf(tokens[q], q - 1) + 1)};
  }
  function headCaption(a, T, facts, layer, head) {  // analysis/captions.py head_caption, in JS; a (T, T)
    const at = (q, k) => a[q * T + k];
    let resting = 0;
    for (let q = 0; q < T; q++) for (let k = 0; k <= q; k++) if (facts.resting[k]) resting += at(q, k);
    const offset = d => { if (T <= d) return 0; let s = 0; for (let i = d; i < T; i++) s += at(i, i - d); return s / (T - d); };
    const patterns = [["rests on <bos> or a full stop", resting / T], ["goes to the word just before", offset(1)],
                      ["stays on the word itself", offset(0)]];
    const rows = facts.rows;
    if (rows.length) {  // detectors.induction_match: the word after the latest earlier copy
      let s = 0;
      rows.forEach((q, i) => { s += at(q, facts.targets[i]); });
      patterns.push([`goes to the word after an earlier copy (over the ${rows.length} repeated words)`, s / rows.length]);
    }
    let best = patterns[0];
    for (const p of patterns) if (p[1] > best[1]) best = p;
    return {text: `Layer ${layer}, head ${head}: ${pct(best[1])} of the attention ${best[0]}.`, resting: resting / T};
  }
  function shown(run, model, LEVELS) {  // float maps (layer by layer) -> 8-bit maps to draw, and the captions
    const T = run.tokens.length, cfg = model.config, n = T * T, out = new Uint8Array(cfg.n_layer * cfg.n_head * n);
    run.captions = []; let resting = 0;
    const facts = wordFacts(run.tokens, model.spec.rest);
    run.now.attentions.forEach((w, l) => {
      for (let i = 0; i < w.length; i++) out[l * cfg.n_head * n + i] = Math.round(Math.min(1, Math.max(0, w[i])) * LEVELS);
      for (let h = 0; h < cfg.n_head; h++) {
        const c = headCaption(w.subarray(h * n, (h + 1) * n), T, facts, l, h);
        run.captions.push(c.text); if (c.resting > 0.5) resting++;
      }
    });
    run.maps = out;
    run.gridCaption = `${resting} of the ${cfg.n_layer * cfg.n_head} heads put more than half of their attention on <bos> or a full stop.`;
  }
  function headScale(model, knocked) {  // (L, H) of 1 (keep) / 0 (knocked out), or null: knockout.py knock_out
    if (!knocked.size) return null;
    const {n_layer, n_head} = model.config;
    return Array.from({length: n_layer}, (_, l) => Float32Array.from({length: n_head}, (_, h) => knocked.has(l * n_head + h) ? 0 : 1));
  }
  function knockOut(run, model, knocked, LEVELS) {  // run.now: rerun from the first knocked-out layer up
    const scale = headScale(model, knocked);
    if (!scale) run.now = run.all;
    else {  // as analysis/knockout.py: the blocks below the first removed head cannot tell
      const first = Math.min(...[...knocked].map(i => Math.floor(i / model.config.n_head)));
      run.now = PageModel.runBlocks(model, run.all.residuals[first], run.tokens.length, first, scale, run.all);
    }
    shown(run, model, LEVELS);
  }
  function readSentence(model, text) {  // core/tokenizer.py, with one line for each kind of bad input
    const cfg = model.config, example = "e.g. 'the cat is tired .'";
    if (!text.trim()) throw new Error(`The sentence is empty; type a few words, ${example}`);
    const words = PageModel.splitWords(model, text);
    if (words.length + (model.spec.bos ? 1 : 0) > cfg.n_ctx) {
      throw new Error(`That is ${words.length} words; ${model.name} reads at most ${cfg.n_ctx - (model.spec.bos ? 1 : 0)}: shorten it.`);
    }
    if (words.some(w => w.toLowerCase() === model.spec.start)) throw new Error(`Leave ${model.spec.start} out of the sentence: the page puts it in front for you.`);
    if (words.every(w => model.spec.punctuation.includes(w))) throw new Error(`The sentence holds only punctuation; type a few words, ${example}`);
    const unknown = [...new Set(words.filter(w => !model.ids.has(w)))];
    if (unknown.length) {
      const named = unknown.slice(0, 5).map(w => `'${[...w].map(c => /[\p{C}\p{Z}]/u.test(c) ? `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>` : c).join("")}'`);
      const more = unknown.length > 5 ? ` and ${unknown.length - 5} more` : "";
      throw new Error(`Unknown word${unknown.length > 1 ? "s" : ""} for ${model.name}: ${named.join(", ")}${more}; pick words from the list "Words this model knows".`);
    }
    const tokens = (model.spec.bos ? [model.spec.start] : []).concat(words);
    return {tokens, ids: tokens.map(w => model.ids.get(w))};
  }
  return {readSentence, knockOut, pct};
})();
