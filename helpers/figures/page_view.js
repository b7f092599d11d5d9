// The offline page's viewer: the grid of every head, one head up close (canvas, or a table), the
// token links, and, when the page carries its model (page_model.js), typed sentences, the next
// word and knock-outs, and a slider between models. Every text from data is put in as text.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("page-data").textContent);
  const specs = JSON.parse(document.getElementById("model-data").textContent);  // [] when precomputed
  const $ = id => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const LEVELS = data.levels;
  const rgb = data.colours.map(c => [1, 3, 5].map(i => parseInt(c.slice(i, i + 2), 16)));
  const pixel = Uint32Array.from(rgb, ([r, g, b]) => (255 << 24 | b << 16 | g << 8 | r) >>> 0);  // RGBA, little-endian
  const live = specs.length > 0;
  const models = specs.map(spec => PageModel.loadModel(spec));  // float16 -> Float32Array, once
  const sentences = data.sentences.map(s => s.text);
  const state = {m: data.start_model || 0, s: 0, layer: data.start[0], head: data.start[1], query: null, table: false};
  const knocked = models.map(() => new Set());  // per model: l * H + h of every knocked-out head
  const changes = models.map(() => 0);  // per model: how many times its knock-outs changed
  const runs = new Map();  // "model|sentence" -> what is drawn
  const api = {data, state, timings: [], kinds: [], runs, knocked, models};
  window.attentionPage = api;
  let L = data.layers, H = data.heads;

  // --- what one sentence shows: precomputed (8-bit maps from Python) or computed here -----------
  function bytes(b64) {  // base64 -> Uint8Array
    const text = atob(b64), out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }
  const {readSentence, pct} = PageLive;
  function run(m, s) {  // the sentence s as model m reads it now (computed once, knock-outs applied)
    const key = `${m}|${s}`;
    let r = runs.get(key);
    if (!r && live) {
      const read = readSentence(models[m], sentences[s]);
      r = {tokens: read.tokens, ids: read.ids, all: PageModel.run(models[m], read.ids, null), change: -1};
      runs.set(key, r);
    } else if (!r) {
      const given = data.sentences[s];
      r = {tokens: given.tokens, maps: bytes(given.maps), captions: given.head_captions, gridCaption: given.grid_caption};
      runs.set(key, r);
    }
    if (live && r.change !== changes[m]) { PageLive.knockOut(r, models[m], knocked[m], LEVELS); r.change = changes[m]; }  // knock-outs changed since
    return r;
  }
  const current = () => run(state.m, state.s);
  const T = () => current().tokens.length;
  const value = (l, h, q, k) => current().maps[((l * H + h) * T() + q) * T() + k];  // 0..255
  const fmt = v => (v / LEVELS).toFixed(2);
  const headName = (l, h) => `layer ${l}, head ${h}`;

  // --- the grid: drawn once per sentence (and knock-out); a head change redraws only the frame ---------
  const grid = api.grid = {};  // geometry, for clicks and the tests
  function drawGrid() {
    const n = T(), W = H * (n + 1) - 1, Hh = L * (n + 1) - 1;
    const scale = Math.max(1, Math.floor(560 / Math.max(W, Hh)));
    Object.assign(grid, {n, scale, left: 34, top: 20});
    const image = new ImageData(W, Hh), px = new Uint32Array(image.data.buffer), maps = current().maps;
    px.fill(0xffffffff);  // white gaps between the maps
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) for (let q = 0; q < n; q++) {
      const from = ((l * H + h) * n + q) * n, to = (l * (n + 1) + q) * W + h * (n + 1);
      for (let k = 0; k < n; k++) px[to + k] = pixel[maps[from + k]];  // one RGBA word per cell
    }
    const off = document.createElement("canvas");
    off.width = W; off.height = Hh;
    off.getContext("2d").putImageData(image, 0, 0);
    const canvas = $("grid"), mark = $("grid-mark");
    canvas.width = mark.width = grid.left + W * scale + 4;
    canvas.height = mark.height = grid.top + Hh * scale + 4;
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, grid.left, grid.top, W * scale, Hh * scale);
    ctx.fillStyle = "#1a1a1a"; ctx.font = "12px system-ui, sans-serif";
    const mid = (n * scale) / 2, step = (n + 1) * scale;
    ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    for (let h = 0; h < H; h++) ctx.fillText("H" + h, grid.left + h * step + mid, grid.top - 3);
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    for (let l = 0; l < L; l++) ctx.fillText("L" + l, grid.left - 4, grid.top + l * step + mid);
    $("grid-size").textContent = `(${L} layer${L > 1 ? "s" : ""} × ${H} head${H > 1 ? "s" : ""})`;
    $("grid-caption").textContent = current().gridCaption;
  }
  function drawMark() {
    const mark = $("grid-mark"), ctx = mark.getContext("2d"), step = (grid.n + 1) * grid.scale, size = grid.n * grid.scale;
    ctx.clearRect(0, 0, mark.width, mark.height);
    ctx.strokeStyle = "#767676"; ctx.lineWidth = 2;
    for (const i of live ? knocked[state.m] : []) {  // a knocked-out head: crossed out
      const x = grid.left + (i % H) * step, y = grid.top + Math.floor(i / H) * step;
      ctx.fillStyle = "rgba(255,255,255,0.6)"; ctx.fillRect(x, y, size, size);
      ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x + size, y + size); ctx.moveTo(x + size, y); ctx.lineTo(x, y + size); ctx.stroke();
    }
    ctx.strokeStyle = data.highlight; ctx.lineWidth = 3;
    ctx.strokeRect(grid.left + state.head * step - 2, grid.top + state.layer * step - 2, size + 4, size + 4);
    const framed = `${headName(state.layer, state.head)} is framed`;
    $("grid").setAttribute("aria-label", `All ${L * H} heads of ${modelName()} reading “${sentences[state.s]}”: ${current().gridCaption} ${framed[0].toUpperCase() + framed.slice(1)}.`);
  }
  function headAt(event) {
    const r = $("grid").getBoundingClientRect(), step = (grid.n + 1) * grid.scale;
    const x = (event.clientX - r.left) * $("grid").width / r.width - grid.left;
    const y = (event.clientY - r.top) * $("grid").height / r.height - grid.top;
    const h = Math.floor(x / step), l = Math.floor(y / step);
    return (h >= 0 && h < H && l >= 0 && l < L) ? [l, h] : null;
  }

  // --- the zoomed head: one map with the words, or the same numbers as a table ----------------------
  const zoom = api.zoom = {};
  function layoutZoom() {  // once per sentence: cell size and margins from the words
    const canvas = $("zoom"), ctx = canvas.getContext("2d"), n = T();
    ctx.font = "14px system-ui, sans-serif";
    const longest = Math.max(...current().tokens.map(t => ctx.measureText(t).width));
    const cell = Math.max(10, Math.min(44, Math.floor(440 / n)));
    Object.assign(zoom, {n, cell, left: Math.ceil(longest) + 10, top: 6, words: Math.ceil(longest) + 10});
    canvas.width = zoom.left + n * cell + 8;
    canvas.height = zoom.top + n * cell + zoom.words;
  }
  const isKnocked = () => live && knocked[state.m].has(state.layer * H + state.head);
  function zoomCaption() {
    return current().captions[state.layer * H + state.head] + (isKnocked() ? " It is knocked out: its output is zeroed." : "");
  }
  function drawZoom() {
    const canvas = $("zoom"), ctx = canvas.getContext("2d"), n = zoom.n, c = zoom.cell, tokens = current().tokens;
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) {
      ctx.fillStyle = data.colours[value(state.layer, state.head, q, k)];
      ctx.fillRect(zoom.left + k * c, zoom.top + q * c, c, c);
    }
    ctx.font = "14px system-ui, sans-serif"; ctx.textBaseline = "middle";
    tokens.forEach((t, q) => {
      ctx.fillStyle = q === state.query ? data.highlight : "#1a1a1a";
      ctx.font = (q === state.query ? "bold " : "") + "14px system-ui, sans-serif";
      ctx.textAlign = "right"; ctx.fillText(t, zoom.left - 5, zoom.top + (q + 0.5) * c);
      ctx.save(); ctx.translate(zoom.left + (q + 0.5) * c, zoom.top + n * c + 5); ctx.rotate(-Math.PI / 2);
      ctx.fillStyle = "#1a1a1a"; ctx.font = "14px system-ui, sans-serif";
      ctx.textAlign = "right"; ctx.fillText(t, 0, 0); ctx.restore();
    });
    if (state.query !== null) {  // frame the chosen query's row (its edges only: the cells keep their colour)
      ctx.strokeStyle = data.highlight; ctx.lineWidth = 2;
      ctx.strokeRect(zoom.left - 1, zoom.top + state.query * c - 1, n * c + 2, c + 2);
    }
    $("zoom-title").textContent = `Layer ${state.layer}, head ${state.head}` + (isKnocked() ? " (knocked out)" : "");
    $("zoom-caption").textContent = zoomCaption();
    canvas.setAttribute("aria-label", `Map of ${headName(state.layer, state.head)}, queries down, keys across: ${zoomCaption()}`);
    if (state.table) drawTable();
  }
  function drawTable() {  // the zoomed map as numbers: queries as row headers, keys as column headers
    const table = $("zoom-table"), tokens = current().tokens, n = tokens.length;
    const cell = (tag, text, attrs = {}) => {
      const e = document.createElement(tag); e.textContent = text;
      Object.entries(attrs).forEach(([a, v]) => e.setAttribute(a, v)); return e;
    };
    const caption = cell("caption", `Layer ${state.layer}, head ${state.head}: each row is one query word's weights on the key words; the largest in each row is marked “(largest)”.`);
    const head = document.createElement("tr");
    head.append(cell("th", "query \\ key", {scope: "col"}), ...tokens.map((t, k) => cell("th", `${k}: ${t}`, {scope: "col"})));
    const rows = tokens.map((t, q) => {
      const tr = document.createElement("tr"); let best = 0;
      for (let k = 1; k < n; k++) if (value(state.layer, state.head, q, k) > value(state.layer, state.head, q, best)) best = k;
      tr.append(cell("th", `${q}: ${t}`, {scope: "row"}), ...tokens.map((_, k) =>
        cell("td", fmt(value(state.layer, state.head, q, k)) + (k === best ? " (largest)" : ""), k === best ? {class: "largest"} : {})));
      return tr;
    });
    const thead = document.createElement("thead"), tbody = document.createElement("tbody");
    thead.append(head); tbody.append(...rows);
    table.replaceChildren(caption, thead, tbody);
  }
  function readout(event) {
    const r = $("zoom").getBoundingClientRect(), c = zoom.cell;
    const k = Math.floor((event.clientX - r.left - zoom.left) / c), q = Math.floor((event.clientY - r.top - zoom.top) / c);
    const tokens = current().tokens;
    $("readout").textContent = (q >= 0 && q < zoom.n && k >= 0 && k < zoom.n)
      ? `query “${tokens[q]}” → key “${tokens[k]}”: ${fmt(value(state.layer, state.head, q, k))}` : "";
  }

  // --- the next word: top 5 with probabilities, and with every head when some are knocked out ---------
  function top(probs, k) { return [...probs.keys()].sort((a, b) => probs[b] - probs[a]).slice(0, k); }
  function drawPrediction() {
    if (!live) return;
    const r = current(), model = models[state.m], any = knocked[state.m].size > 0;
    $("prediction").replaceChildren(...top(r.now.probs, 5).map(i => {
      const li = document.createElement("li");
      li.textContent = `${model.vocab[i]}: ${r.now.probs[i].toFixed(2)}` + (any ? ` (every head: ${r.all.probs[i].toFixed(2)})` : "");
      return li;
    }));
    const last = r.tokens[r.tokens.length - 1];
    $("prediction-title").textContent = `Next word after “${last}”` + (any ? `, ${knocked[state.m].size} head${knocked[state.m].size > 1 ? "s" : ""} knocked out` : "");
    $("knocked-list").textContent = any ? "Knocked out: " + [...knocked[state.m]].sort((a, b) => a - b).map(i => `L${Math.floor(i / H)} H${i % H}`).join(", ") : "";
    $("knock").textContent = isKnocked() ? "Put this head back" : "Knock out this head";
  }
  const prediction = () => live ? ` Next word: ${top(current().now.probs, 1).map(i => `${models[state.m].vocab[i]} ${current().now.probs[i].toFixed(2)}`)}.` : "";
  function announce() { $("live").textContent = zoomCaption() + prediction(); }

  // --- token links: one SVG line per (query, key), made once per sentence -------------------------------
  const links = {lines: [], right: []};
  function layoutLinks() {
    const svg = $("links"), tokens = current().tokens, n = tokens.length, row = 24, x0 = 150, x1 = 330;
    svg.replaceChildren();
    svg.setAttribute("width", 480); svg.setAttribute("height", 30 + n * row);
    const y = i => 34 + i * row;
    const head = (x, text, anchor) => {
      const t = document.createElementNS(SVG, "text");
      Object.entries({x, y: 14, "text-anchor": anchor, "font-style": "italic"}).forEach(([a, v]) => t.setAttribute(a, v));
      t.textContent = text; svg.appendChild(t);
    };
    head(x0 - 8, "keys", "end"); head(x1 + 8, "queries", "start");
    links.lines = [];
    for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) {
      const line = document.createElementNS(SVG, "line");
      Object.entries({x1: x0, y1: y(k), x2: x1, y2: y(q), stroke: "#0072b2", "stroke-linecap": "round"})
        .forEach(([a, v]) => line.setAttribute(a, v));
      svg.appendChild(line); links.lines.push(line);
    }
    links.right = tokens.map((t, i) => {
      const left = document.createElementNS(SVG, "text"), right = document.createElementNS(SVG, "text");
      Object.entries({x: x0 - 8, y: y(i), "text-anchor": "end", "dominant-baseline": "middle"}).forEach(([a, v]) => left.setAttribute(a, v));
      Object.entries({x: x1 + 8, y: y(i), "text-anchor": "start", "dominant-baseline": "middle"}).forEach(([a, v]) => right.setAttribute(a, v));
      left.textContent = right.textContent = t;
      right.addEventListener("click", () => setQuery(state.query === i ? null : i));
      svg.appendChild(left); svg.appendChild(right);
      return right;
    });
    $("query").replaceChildren(...[["all words", -1], ...tokens.map((t, i) => [`${i}: ${t}`, i])].map(([label, v]) => {
      const option = document.createElement("option"); option.value = v; option.textContent = label; return option;
    }));
  }
  function drawLinks() {
    const n = T(), tokens = current().tokens;
    for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) {
      const w = (state.query === null || state.query === q) ? value(state.layer, state.head, q, k) / LEVELS : 0;
      const line = links.lines[q * n + k];
      line.setAttribute("stroke-width", (6 * w).toFixed(2)); line.setAttribute("stroke-opacity", w.toFixed(3));
    }
    links.right.forEach((t, i) => t.classList.toggle("chosen", i === state.query));
    $("query").value = state.query === null ? -1 : state.query;
    if (state.query === null) {
      $("links-caption").textContent = "Each query word (right) is joined to the key words it reads (left); " +
        "the thicker the line, the more attention. Pick a query word to follow only its lines.";
    } else {
      let best = 0;
      for (let k = 1; k < n; k++) if (value(state.layer, state.head, state.query, k) > value(state.layer, state.head, state.query, best)) best = k;
      $("links-caption").textContent = `“${tokens[state.query]}” (word ${state.query}) reads “${tokens[best]}” ` +
        `(word ${best}) most: ${fmt(value(state.layer, state.head, state.query, best))} of its attention.`;
    }
  }

  // --- what each control changes ------------------------------------------------------------------------
  const modelName = () => live ? models[state.m].name : data.model;
  function timed(event, draw, kind) {  // key or click to picture: the handler's drawing, then the next frame
    const start = event ? event.timeStamp : performance.now();
    draw();
    requestAnimationFrame(() => { api.timings.push(performance.now() - start); api.kinds.push(kind); });
  }
  function select(layer, head) {
    state.layer = Math.max(0, Math.min(L - 1, layer)); state.head = Math.max(0, Math.min(H - 1, head));
    drawMark(); drawZoom(); drawLinks(); drawPrediction(); announce();
  }
  function setQuery(q) { state.query = q; drawZoom(); drawLinks(); }
  function drawAll() {
    drawGrid(); drawMark(); layoutZoom(); drawZoom(); layoutLinks(); drawLinks(); drawPrediction(); announce();
  }
  function setSentence(i) { state.s = i; state.query = null; $("sentence").value = i; drawAll(); }
  function toggleKnockout(layer = state.layer, head = state.head) {
    const i = layer * H + head;
    if (knocked[state.m].has(i)) knocked[state.m].delete(i); else knocked[state.m].add(i);
    changes[state.m]++;
    state.layer = layer; state.head = head;
    drawGrid(); drawMark(); drawZoom(); drawLinks(); drawPrediction(); announce();
  }
  function restore() { knocked[state.m].clear(); changes[state.m]++; drawAll(); }
  function setModel(m) {  // the slider: another model reads the same sentence
    state.m = m; L = models[m].config.n_layer; H = models[m].config.n_head;
    state.layer = Math.min(state.layer, L - 1); state.head = Math.min(state.head, H - 1);
    $("slider").value = m;
    const slider = data.slider, numbers = models[m].spec.numbers;
    const label = `${slider.values[m]} ${slider.values[m] === 1 ? slider.unit.replace(/s$/, "") : slider.unit}`;
    $("slider").setAttribute("aria-valuetext", label);
    const seeds = numbers.list_accuracy_seeds;
    $("slider-numbers").textContent = `${label}: held-out loss ${numbers.held_out_loss.toFixed(3)}, ` +
      `list said again correctly ${pct(numbers.accuracy_induction)} (models.json)` +
      (seeds ? `; over ${seeds[2]} training seeds ${pct(seeds[0])} to ${pct(seeds[1])}` : "");
    try { drawAll(); $("problem").textContent = ""; } catch (err) { $("problem").textContent = err.message; }
  }
  function submit(text) {  // a typed sentence: read it, run the model, draw everything; one line if it cannot
    let r;
    try {
      if (text.length > 4000) throw new Error(`That is ${text.length} characters; ${models[state.m].name} reads at most ${models[state.m].config.n_ctx - 1} words: shorten it.`);
      readSentence(models[state.m], text);
    } catch (err) { $("problem").textContent = err.message; return false; }
    const clean = text.trim();
    let i = sentences.indexOf(clean);
    if (i < 0) {
      i = sentences.push(clean) - 1;
      const option = document.createElement("option"); option.value = i; option.textContent = `typed: ${clean}`;
      $("sentence").append(option);
    }
    $("problem").textContent = "";
    setSentence(i);
    return true;
  }
  Object.assign(api, {select, setQuery, setSentence, setModel, submit, toggleKnockout, restore, current});

  $("grid").addEventListener("click", e => {
    const at = headAt(e);
    if (at && e.shiftKey && live) timed(e, () => toggleKnockout(...at), "knock");
    else if (at) timed(e, () => select(...at), "select");
  });
  $("grid").addEventListener("mousemove", e => { const at = headAt(e); $("grid").title = at ? headName(...at) : ""; });
  $("zoom").addEventListener("mousemove", readout);
  $("zoom").addEventListener("mouseleave", () => { $("readout").textContent = ""; });
  $("sentence").addEventListener("change", e => timed(e, () => setSentence(Number(e.target.value)), "sentence"));
  $("query").addEventListener("change", e => timed(e, () => setQuery(Number(e.target.value) < 0 ? null : Number(e.target.value)), "query"));
  $("type-form").addEventListener("submit", e => { e.preventDefault(); timed(e, () => submit($("typed").value), "type"); });
  $("knock").addEventListener("click", e => timed(e, () => toggleKnockout(), "knock"));
  $("restore").addEventListener("click", e => timed(e, restore, "knock"));
  $("slider").addEventListener("input", e => timed(e, () => setModel(Number(e.target.value)), "slider"));
  $("table-toggle").addEventListener("click", () => {
    state.table = !state.table;
    $("table-box").hidden = !state.table;
    $("table-toggle").textContent = state.table ? "Hide the table" : "Show as table";
    $("table-toggle").setAttribute("aria-expanded", String(state.table));
    if (state.table) drawTable();
  });
  document.addEventListener("keydown", e => {
    const t = e.target;
    if (t instanceof HTMLSelectElement || t instanceof HTMLInputElement || e.altKey || e.ctrlKey || e.metaKey) return;
    const inLinks = $("links-panel").contains(t), n = T();
    const moves = inLinks
      ? {ArrowUp: () => setQuery(state.query === null ? n - 1 : Math.max(0, state.query - 1)),
         ArrowDown: () => setQuery(state.query === null ? 0 : Math.min(n - 1, state.query + 1))}
      : {ArrowLeft: () => select(state.layer, state.head - 1), ArrowRight: () => select(state.layer, state.head + 1),
         ArrowUp: () => select(state.layer - 1, state.head), ArrowDown: () => select(state.layer + 1, state.head)};
    moves.Escape = () => setQuery(null);
    if (live && !inLinks) { moves.k = moves.K = () => toggleKnockout(); moves.r = moves.R = restore; }
    if (moves[e.key]) { e.preventDefault(); timed(e, moves[e.key], /^[kKrR]$/.test(e.key) ? "knock" : "select"); }
  });

  // --- the searchable list of words ----------------------------------------------------------------------
  function wordList() {
    const model = models[state.m], filter = $("word-filter").value.trim().toLowerCase();
    const words = model.vocab.filter(w => w !== model.spec.start && w.toLowerCase().includes(filter));
    $("words-summary").textContent = `Words this model knows (${model.vocab.length - 1})`;
    $("word-list").replaceChildren(...words.map(w => {
      const b = document.createElement("button"); b.type = "button"; b.textContent = w;
      b.setAttribute("aria-label", `add the word ${w}`);
      b.addEventListener("click", () => { const box = $("typed"); box.value = (box.value.trimEnd() + " " + w).trimStart(); box.focus(); });
      return b;
    }));
  }
  $("word-filter").addEventListener("input", wordList);

  // --- start ---------------------------------------------------------------------------------------------
  $("sentence").replaceChildren(...data.sentences.map((s, i) => {
    const option = document.createElement("option"); option.value = i; option.textContent = s.text; return option;
  }));
  const bar = $("colourbar").getContext("2d");
  data.colours.forEach((c, i) => { bar.fillStyle = c; bar.fillRect(Math.floor(i * 160 / 256), 0, 1, 14); });
  $("about").textContent = data.about;
  if (live) {
    $("precision").textContent = "computed in this page from 16-bit weights, shown to 2 decimals";
    $("type-bar").hidden = $("knock-bar").hidden = $("prediction-box").hidden = false;
    $("help").append(" Type a sentence and press Enter to run the model on it; knock a head out with K " +
                     "(or Shift+click), R puts every head back.");
    wordList();
  } else {
    $("grid-panel").setAttribute("aria-label", "All heads: arrow keys move the framed head");
    $("precision").textContent = `${data.model}: weights stored in 8 bits, shown to 2 decimals (within ±${data.precision.toFixed(3)} of the model's)`;
  }
  if (data.slider) {
    $("slider-bar").hidden = false; $("slider").max = models.length - 1;
    $("slider-label").textContent = data.slider.label;
    setModel(state.m);
  } else {
    if (live) { L = models[0].config.n_layer; H = models[0].config.n_head; }
    setSentence(0);
  }
  $("grid-panel").focus();
  api.ready = performance.now();  // ms from the start of navigation to the first full picture
})();
