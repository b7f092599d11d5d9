"""Reading load of the notebooks' core path: prose words, words per sentence, long sentences, reading minutes.

    python tools/reading_load.py [notebooks/0*.ipynb ...]   -> one line per notebook, a last line with the verdict

The core path is the markdown outside sections whose heading says "Going further" (navigation cells left out).
Targets: 01+02+03 core <= 3,300 words; 05 core <= 1,600; every notebook: mean <= 18 words a sentence, <= 8 % of
sentences over 30 words. Minutes are words / 130 (a student reading to learn: 120-150 words a minute), the
figure the guide's plan adds exercise minutes to. The counting rules are the ones the targets were set with
(the lesson-first issue's reading.py), copied unchanged so the figures compare."""
import glob, json, re, sys
from pathlib import Path

WORDS_PER_MINUTE = 130
ABBR = ['e.g.', 'i.e.', 'et al.', 'etc.', 'vs.', 'Fig.', 'cf.', 'approx.']

def clean(t):
    t = re.sub(r'<!--.*?-->', ' ', t, flags=re.S); t = re.sub(r'```.*?```', ' ', t, flags=re.S)
    t = re.sub(r'<[^>]+>', ' ', t); t = re.sub(r'!\[[^\]]*\]\([^)]*\)', ' ', t)
    t = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', t); t = re.sub(r'\$\$.*?\$\$', ' MATH. ', t, flags=re.S)
    t = re.sub(r'\$[^$\n]+\$', 'MATH', t); return re.sub(r'`[^`]+`', 'CODE', t)

def words_of(s):
    return [x.strip('.,') for x in re.findall(r"[A-Za-z0-9][A-Za-z0-9'’\-\.,]*", s) if x.strip('.,')]

def blocks(text):
    out, para = [], []
    for line in text.split('\n'):
        s = line.strip()
        if re.match(r'^#{1,6}\s+', s) or re.match(r'^([-*•]|\d+\.)\s+', s) or s.startswith('|') or not s:
            if para: out.append(' '.join(para)); para = []
            if s.startswith('|') and not re.match(r'^\|[-\s|:]+\|?$', s): out.append(s.replace('|', ' ') + ' .')
            elif re.match(r'^([-*•]|\d+\.)\s+', s): para = [re.sub(r'^([-*•]|\d+\.)\s+', '', s)]
            continue
        para.append(s)
    if para: out.append(' '.join(para))
    return out

def sentences(p):
    for a in ABBR: p = p.replace(a, a.replace('.', '§'))
    return [s.replace('§', '.').strip() for s in re.split(r'(?<=[.!?])\s+(?=[^a-z])', p) if words_of(s)]

def core_markdown(path):
    """Markdown of the core path: sections under a 'Going further' heading (to the next heading of the same or a
    higher level) are left out, as are navigation cells."""
    cells = json.load(open(path))['cells']
    keep, skip_level = [], None
    for c in cells:
        if c['cell_type'] != 'markdown': continue
        src = ''.join(c['source'])
        if 'NAVIGATION' in src: continue
        out = []
        for line in src.split('\n'):
            m = re.match(r'^(#{1,6})\s+(.*)', line.strip())
            if m:
                level = len(m.group(1))
                if skip_level is not None and level <= skip_level: skip_level = None
                if skip_level is None and re.search(r'going further', m.group(2), re.I): skip_level = level
            if skip_level is None: out.append(line)
        keep.append('\n'.join(out))
    return '\n\n'.join(keep)

def measure(path):
    text = clean(core_markdown(path))
    heads = sum(len(words_of(l)) for l in text.split('\n') if re.match(r'^\s*#{1,6}\s', l))
    body = '\n'.join(l for l in text.split('\n') if not re.match(r'^\s*#{1,6}\s', l))
    sents = [s for b in blocks(body) for s in sentences(b)]
    lens = [len(words_of(s)) for s in sents]
    words = sum(lens) + heads
    return {"words": words, "sentences": len(sents), "wps": sum(lens) / max(1, len(sents)),
            "long": sum(n > 30 for n in lens) / max(1, len(sents))}

if __name__ == "__main__":
    paths = sys.argv[1:] or sorted(glob.glob(str(Path(__file__).resolve().parent.parent / "notebooks" / "0*.ipynb")))
    res, problems = {}, []
    for p in paths:
        n = re.search(r'(\d\d)_', p).group(1); r = res[n] = measure(p)
        print(f"{n}: {r['words']} words, {r['wps']:.1f} words/sentence, {100 * r['long']:.0f} % over 30 words, "
              f"{r['words'] / WORDS_PER_MINUTE:.0f} min to read")
        if r['wps'] > 18: problems.append(f"{n} {r['wps']:.1f} w/s")
        if r['long'] > 0.08: problems.append(f"{n} {100 * r['long']:.0f} % long")
    core = sum(res[n]['words'] for n in ("01", "02", "03") if n in res)
    if core > 3300: problems.append(f"01-03 core {core} words (> 3,300)")
    if "05" in res and res["05"]["words"] > 1600: problems.append(f"05 core {res['05']['words']} words (> 1,600)")
    print(("FAIL: " + "; ".join(problems)) if problems else f"PASS: 01-03 core {core} words")
    sys.exit(1 if problems else 0)
