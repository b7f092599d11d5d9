"""The classroom language: seeded little stories whose structure we know exactly.

Every relation a head could learn is written down as (query position, key position)
pairs while the story is generated, so a head can later be checked against the truth.
The query is always the position where the model must *predict* a word that needs
the relation, because in a left-to-right model that is where looking back pays off.

Relations (see RELATIONS) and the sentence that teaches each one:
- agreement: "the cat near the dogs is tired"   "dogs" must look back to "cat" to say "is"
- pronoun:   "the girl sat on the mat because she was tired"   "because" looks back to "girl"
- induction: "list : red cup old fox . again : red cup old fox ."   the second copy
  looks at the word after the earlier copy of the current word
- object:    "the boy eats the red apple"   the word before the object looks back to the verb
- determiner: "these big cats"   the word before the noun looks back to its determiner
- subject:   "I like to draw my cat"   the activity looks back to the subject to say my/his/her
- previous (every word to the one before it) and bos (every word to <bos>) need no annotation.
  The relay game "relay : red fox is cup ..." is what makes the previous word worth a head:
  each word there is fixed by the word two places back (RELAY), i.e. by the word just before
  the one being read. Any word can appear in a relay, so only *position* tells a head where
  that word is, and the head it grows looks one word back in every sentence.
Stories may also repeat an earlier sentence word for word (a "refrain"); it keeps its grammar links.
Each relation is *needed*: a distractor in between points the other way, or the next word
is chosen at random (list words), so only a head that finds the right word predicts it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .tokenizer import BOS

RELATIONS = ("previous", "bos", "agreement", "pronoun", "induction", "object", "determiner", "subject")
FORCED = ("agreement", "pronoun", "induction")  # next words fully decided by a relation

# --- the word lists -------------------------------------------------------------------
PRONOUN_SUBJECTS = {"I": "my", "you": "your", "we": "our", "they": "their", "he": "his", "she": "her"}
NAMES = {"anna": "she", "mia": "she", "lily": "she", "emma": "she",
         "tom": "he", "sam": "he", "max": "he", "leo": "he"}
POSSESSIVE = {"she": "her", "he": "his"}
# animate nouns: singular -> (plural, pronoun of the singular)
ANIMALS = {"girl": ("girls", "she"), "boy": ("boys", "he"), "woman": ("women", "she"),
           "man": ("men", "he"), "queen": ("queens", "she"), "king": ("kings", "he"),
           "cat": ("cats", "it"), "dog": ("dogs", "it"), "bird": ("birds", "it"),
           "fox": ("foxes", "it"), "horse": ("horses", "it"), "mouse": ("mice", "it")}
PLACES = {"mat": "mats", "chair": "chairs", "bed": "beds", "box": "boxes",
          "table": "tables", "rug": "rugs", "sofa": "sofas", "wall": "walls"}
HOBBIES = {"draw": ["picture", "house", "tree", "flower", "map"],
           "paint": ["picture", "wall", "boat", "door"],
           "read": ["book", "story", "letter", "poem"],
           "write": ["letter", "story", "poem", "song"],
           "sing": ["song", "tune"],
           "cook": ["soup", "cake", "bread", "pie"],
           "play": ["game", "piano", "ball", "drum"]}
# verb (singular form, plural form) -> the things it can take as object
VERBS = {("eats", "eat"): ["apple", "cake", "bread", "fish", "pie"],
         ("drinks", "drink"): ["milk", "tea", "water", "juice"],
         ("chases", "chase"): ["cat", "dog", "mouse", "bird", "ball"],
         ("opens", "open"): ["door", "box", "window", "book"],
         ("kicks", "kick"): ["ball", "box", "door", "drum"]}
MOVES = {"sat on": list(PLACES), "slept on": ["mat", "bed", "rug", "sofa"],
         "hid under": ["table", "bed", "chair", "sofa"], "ran to": list(PLACES)}
PREPOSITIONS = ["near", "behind", "beside", "with"]
ADJECTIVES = ["red", "blue", "green", "big", "small", "old", "new", "little"]
FEELINGS = ["tired", "happy", "hungry", "sad", "sleepy", "angry", "cold"]
DETERMINERS = {"singular": ["the", "a", "this"], "plural": ["the", "these", "some"]}
GLUE = ["like", "likes", "to", "is", "are", "was", "were", "because", "list", "again", ":", "."]


def _plural(noun: str) -> str:
    if noun in ANIMALS:
        return ANIMALS[noun][0]
    if noun in PLACES:
        return PLACES[noun]
    return noun + "es" if noun.endswith(("x", "sh", "ch")) else noun + "s"


def vocabulary(relay: bool = False) -> list[str]:
    """Every token of the language, in a fixed order (<bos> is id 0).

    relay=True adds the relay game's marker word at the end. Models trained without relays
    keep the shorter list, so their seeds still regenerate them exactly."""
    words = [BOS] + list(PRONOUN_SUBJECTS) + list(PRONOUN_SUBJECTS.values()) + ["it"]
    words += list(NAMES) + list(ANIMALS) + [p for p, _ in ANIMALS.values()]
    words += list(PLACES) + list(PLACES.values()) + list(HOBBIES)
    for objects in list(HOBBIES.values()) + list(VERBS.values()):
        words += objects + [_plural(o) for o in objects]
    for pair in VERBS:
        words += list(pair)
    for move in MOVES:
        words += move.split()
    words += PREPOSITIONS + ADJECTIVES + FEELINGS + DETERMINERS["singular"] + DETERMINERS["plural"] + GLUE
    words += ["relay"] if relay else []
    return list(dict.fromkeys(words))  # drop repeats, keep first-seen order


LIST_WORDS = sorted(set(ADJECTIVES) | set(PLACES) | set(ANIMALS) | {o for v in HOBBIES.values() for o in v})
# The relay game's fixed table: each word names the word two places after it. It covers every
# word, so a head can find "the word before" only by position, never by what the words are.
RELAY_WORDS = vocabulary()[1:]  # all but <bos>
RELAY = dict(zip(RELAY_WORDS, random.Random(2).sample(RELAY_WORDS, len(RELAY_WORDS))))


@dataclass
class Story:
    """One training sequence: tokens plus the ground truth of every relation."""

    tokens: list[str] = field(default_factory=lambda: [BOS])
    links: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: {r: [] for r in RELATIONS[2:]})
    forced: dict[str, list[int]] = field(default_factory=lambda: {r: [] for r in FORCED + ("relay",)})

    def add(self, *words: str) -> int:
        """Append words; return the position of the first one."""
        start = len(self.tokens)
        self.tokens.extend(words)
        return start

    def link(self, relation: str, query: int, key: int) -> None:
        self.links[relation].append((query, key))

    def link_induction(self, query: int, key: int) -> None:
        """Induction's target, "the word after the earlier copy of this word", is only
        well defined when this word occurred exactly once before; otherwise no link."""
        if self.tokens[:query].count(self.tokens[query]) == 1:
            self.link("induction", query, key)

    def cut(self, n: int) -> "Story":
        """The first n tokens, keeping only annotations that fit inside them."""
        short = Story(tokens=self.tokens[:n])
        short.links = {r: [(q, k) for q, k in v if q < n - 1] for r, v in self.links.items()}
        short.forced = {r: [p for p in v if p < n] for r, v in self.forced.items()}
        return short


class StoryWriter:
    """Writes stories from a seed; the same seed always gives the same stories."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    # Each sentence writer appends one sentence to the story and records its links.
    def hobby(self, s: Story) -> None:
        # "I like to draw my picture ." : the activity looks back to the subject for my/his/her
        r = self.rng
        subject = r.choice(list(PRONOUN_SUBJECTS) + list(NAMES))
        pronoun = NAMES.get(subject, subject)
        verb = "likes" if pronoun in ("he", "she") else "like"
        activity = r.choice(list(HOBBIES))
        possessive = PRONOUN_SUBJECTS.get(pronoun) or POSSESSIVE[pronoun]
        start = s.add(subject, verb, "to", activity, possessive, r.choice(HOBBIES[activity]), ".")
        s.link("subject", start + 3, start)

    def noun_phrase(self, s: Story, noun: str, plural: bool) -> int:
        """Add 'det (adj) noun'; return the noun's position."""
        r = self.rng
        det = r.choice(DETERMINERS["plural" if plural else "singular"])
        pos = s.add(det)
        if r.random() < 0.4:
            s.add(r.choice(ADJECTIVES))
            s.link("determiner", pos + 1, pos)  # the adjective must recall the determiner's number
        s.add(_plural(noun) if plural else noun)
        return len(s.tokens) - 1

    def agreement(self, s: Story) -> None:
        # "the cat near the dogs is tired ." : "dogs" must look back to "cat" to choose is/are
        r = self.rng
        plural = r.random() < 0.5
        subject = self.noun_phrase(s, r.choice(list(ANIMALS)), plural)
        s.add(r.choice(PREPOSITIONS))
        distractor_plural = (not plural) if r.random() < 0.8 else plural
        before_verb = self.noun_phrase(s, r.choice(list(ANIMALS) + list(PLACES)), distractor_plural)
        s.forced["agreement"].append(s.add("are" if plural else "is"))  # present tense: number alone decides
        s.link("agreement", before_verb, subject)
        s.add(r.choice(FEELINGS), ".")

    def pronoun(self, s: Story) -> None:
        # "the cat sat on the mat because it was tired ." : "because" looks back to "cat"
        r = self.rng
        plural = r.random() < 0.3
        noun = r.choice(list(ANIMALS))
        subject = self.noun_phrase(s, noun, plural)
        move = r.choice(list(MOVES))
        s.add(*move.split())
        place = r.choice(MOVES[move])
        self.noun_phrase(s, place, r.random() < 0.5)
        because = s.add("because")
        pronoun = "they" if plural else ANIMALS[noun][1]
        s.forced["pronoun"].append(s.add(pronoun))
        s.link("pronoun", because, subject)
        s.add("were" if pronoun == "they" else "was", r.choice(FEELINGS), ".")

    def verb_object(self, s: Story) -> None:
        # "the boy eats the red apple ." : the word before the object looks back to the verb
        r = self.rng
        plural = r.random() < 0.5
        self.noun_phrase(s, r.choice(list(ANIMALS)), plural)
        forms = r.choice(list(VERBS))
        verb = s.add(forms[1] if plural else forms[0])
        obj = self.noun_phrase(s, r.choice(VERBS[forms]), r.random() < 0.3)
        s.link("object", obj - 1, verb)
        s.add(".")

    def word_list(self, s: Story, markers: bool = True) -> None:
        # "list : red cup old fox . again : red cup old fox ." : the second copy is induction.
        # markers=False says "red cup old fox . red cup old fox ." (issue 50): nothing announces the copy,
        # so only "find this word earlier and read what followed it" predicts it, from its second word on.
        r = self.rng
        words = r.sample(LIST_WORDS, r.randint(3, 8))
        first = s.add(*(("list", ":") if markers else ()), *words, ".") + (2 if markers else 0)
        second = s.add(*(("again", ":") if markers else ()), *words, ".") + (2 if markers else 0)
        s.forced["induction"].extend(range(second + (0 if markers else 1), second + len(words)))
        for i in range(-1 if markers else 0, len(words) - 1):  # from the second ":" on, each word recalls its successor
            s.link_induction(second + i, first + i + 1)

    def relay(self, s: Story, length: int = 0) -> None:
        # "relay : red cup fox map ..." : each word fixes the word two places on (RELAY), so to say
        # the next word the model must know the word just *before* the current one: a task for a
        # previous-word head. One word in five is a fresh start, so no word is known far ahead.
        r = self.rng
        words = r.sample(RELAY_WORDS, 2)
        for _ in range((length or r.randint(10, 16)) - 2):
            words.append(r.choice(RELAY_WORDS) if r.random() < 0.2 else RELAY[words[-2]])
        first = s.add("relay", ":", *words, ".") + 2
        s.forced["relay"] += [first + i for i in range(2, len(words)) if words[i] == RELAY[words[i - 2]]]

    def refrain(self, s: Story, start: int, end: int) -> None:
        # An earlier sentence said again, with no marker. It was added hoping to make every word
        # carry its previous word along (a previous-word head). Refrains are not annotated as
        # induction: a refrain can also be predicted from grammar, so that relation is scored on
        # the word lists, where the classroom model's best induction head reaches 0.96 (measured
        # in tests/test_head_analysis.py).
        first = s.add(*s.tokens[start:end])
        for relation in RELATIONS[2:]:  # the copy keeps the grammar of the original
            for q, k in [(q, k) for q, k in s.links[relation] if start <= k and q < end]:
                s.link(relation, q - start + first, k - start + first)
        for relation, positions in s.forced.items():
            s.forced[relation] += [p - start + first for p in positions if start <= p < end]

    def relay_story(self, n_ctx: int, bos: bool = True) -> Story:
        """One relay game filling the whole story (the classroom recipe starts training on these)."""
        s = Story(tokens=[BOS] if bos else [])
        self.relay(s, length=n_ctx)
        return s.cut(n_ctx)

    def repeat_story(self, n_ctx: int, bos: bool = True, shortest: int = 4, longest: int = 24) -> Story:
        """Random words said again and again until n_ctx (issue 50): Olsson et al.'s repeated random
        tokens, in this vocabulary. Only an induction circuit predicts the copies; the first is noise."""
        r = self.rng
        s = Story(tokens=[BOS] if bos else [])
        words = r.sample(RELAY_WORDS, r.randint(shortest, longest))
        first = s.add(*words)
        while len(s.tokens) < n_ctx:
            s.add(*words)
        s.forced["induction"] = list(range(first + len(words) + 1, len(s.tokens)))  # from the second copy's 2nd word
        for i in range(len(words) - 1):  # the second copy: each word recalls its successor in the first
            s.link_induction(first + len(words) + i, first + i + 1)
        return s.cut(n_ctx)

    def story(self, n_ctx: int, list_chance: float = 0.5, bos: bool = True, refrain_chance: float = 0.5,
              relay_chance: float = 0.0, markers: bool = True) -> Story:
        """Sentences until n_ctx tokens are filled; a word list somewhere with list_chance,
        an earlier sentence repeated with refrain_chance, a relay game with relay_chance.
        bos=False starts with the first word (the walkthrough models read sentences that way).
        markers=False writes the word list without `list :` and `again :` (word_list)."""
        r = self.rng
        s = Story(tokens=[BOS] if bos else [])
        writers = [self.hobby, self.agreement, self.pronoun, self.verb_object]
        list_at = r.randint(0, 2) if r.random() < list_chance else -1
        refrain_at = r.randint(1, 4) if r.random() < refrain_chance else -1
        # no draw at all when relay_chance is 0, so recipes without relays keep their stories
        relay_at = r.randint(0, 2) if relay_chance and r.random() < relay_chance else -1
        sentences = []  # (start, end) of each ordinary sentence so far
        while len(s.tokens) < n_ctx:
            start, n = len(s.tokens), len(sentences)
            if n == relay_at:
                self.relay(s)
                relay_at = -1
            elif n == list_at:
                self.word_list(s, markers)
                list_at = -1
            elif n == refrain_at:
                self.refrain(s, *r.choice(sentences))
                refrain_at = -1
            else:
                r.choice(writers)(s)
                sentences.append((start, len(s.tokens)))
        return s.cut(n_ctx)
