"""The classroom language: deterministic, and every annotation is true of the text."""

import hashlib

import pytest

from helpers.core import language as L
from helpers.core.tokenizer import BOS, WordTokenizer


@pytest.fixture(scope="module")
def stories():
    writer = L.StoryWriter(seed=123)
    return [writer.story(64) for _ in range(300)]


def test_same_seed_same_stories():
    a = [L.StoryWriter(7).story(64).tokens for _ in range(3)]
    b = [L.StoryWriter(7).story(64).tokens for _ in range(3)]
    assert a == b
    assert L.StoryWriter(7).story(64).tokens != L.StoryWriter(8).story(64).tokens


def test_every_story_fits_the_vocabulary(stories):
    tok = WordTokenizer(L.vocabulary())
    for s in stories:
        assert len(s.tokens) == 64 and s.tokens[0] == BOS
        assert all(t in tok.ids for t in s.tokens)


def test_the_walkthrough_sentence_occurs_naturally(stories):
    text = [" ".join(s.tokens) for s in stories]
    assert any("I like to draw" in t for t in text)
    assert any(" it was " in t for t in text)


def _pronoun_of(noun):
    for singular, (plural, pronoun) in L.ANIMALS.items():
        if noun == singular:
            return pronoun
        if noun == plural:
            return "they"
    raise AssertionError(noun)


def test_annotations_are_true(stories):
    counts = {r: 0 for r in L.RELATIONS[2:]}
    for s in stories:
        t = s.tokens
        for q, k in s.links["induction"]:
            assert t[q + 1] == t[k] and t[q] == t[k - 1] and k < q  # the word after the earlier copy
            assert t[:q].count(t[q]) == 1  # ... and there is exactly one earlier copy
        for q, k in s.links["agreement"]:
            plural = t[k] in {p for p, _ in L.ANIMALS.values()}
            assert t[q + 1] == ("are" if plural else "is")
        for q, k in s.links["pronoun"]:
            assert t[q] == "because" and t[q + 1] == _pronoun_of(t[k])
        for q, k in s.links["object"]:
            objects = next(objs for forms, objs in L.VERBS.items() if t[k] in forms)
            assert t[q + 1] in objects + [L._plural(o) for o in objects]
        for q, k in s.links["determiner"]:
            assert q == k + 1 and t[k] in L.DETERMINERS["singular"] + L.DETERMINERS["plural"]
        for q, k in s.links["subject"]:
            pronoun = L.NAMES.get(t[k], t[k])
            assert t[q + 1] == (L.PRONOUN_SUBJECTS.get(pronoun) or L.POSSESSIVE[pronoun])
        for relation, links in s.links.items():
            assert all(0 < k < q < 63 for q, k in links)
            counts[relation] += len(links)
    assert all(n > 50 for n in counts.values()), counts


def test_forced_words_follow_their_links(stories):
    for s in stories:
        for relation in L.FORCED:
            after_queries = {q + 1 for q, _ in s.links[relation]}
            if relation == "induction":  # a list word seen earlier in the story has no unique target
                assert after_queries <= set(s.forced[relation])
            else:  # each forced word is the word right after a query of its relation
                assert after_queries == set(s.forced[relation])


def test_distractors_make_agreement_necessary(stories):
    """Most agreement sentences put a noun of the other number right before the verb."""
    mismatched = total = 0
    plurals = {p for p, _ in L.ANIMALS.values()} | set(L.PLACES.values())
    for s in stories:
        for q, k in s.links["agreement"]:
            total += 1
            mismatched += (s.tokens[q] in plurals) != (s.tokens[k] in plurals)
    assert mismatched / total > 0.6


def test_stories_without_a_start_token_keep_true_links():
    writer = L.StoryWriter(seed=5)
    for _ in range(50):
        s = writer.story(64, bos=False)
        assert len(s.tokens) == 64 and BOS not in s.tokens
        for q, k in s.links["subject"]:
            pronoun = L.NAMES.get(s.tokens[k], s.tokens[k])
            assert s.tokens[q + 1] == (L.PRONOUN_SUBJECTS.get(pronoun) or L.POSSESSIVE[pronoun])


def test_relay_words_follow_the_table():
    """Every word the relay game decides is RELAY of the word two places back; the rest are fresh starts."""
    writer = L.StoryWriter(seed=9)
    decided = fresh = 0
    for _ in range(100):
        s = writer.story(64, relay_chance=1.0)
        assert "relay" in s.tokens and all(t in L.vocabulary(relay=True) for t in s.tokens)
        start = s.tokens.index("relay") + 2
        end = s.tokens.index(".", start) if "." in s.tokens[start:] else 64
        for p in range(start + 2, end):
            follows = s.tokens[p] == L.RELAY[s.tokens[p - 2]]
            assert (p in s.forced["relay"]) == follows
            decided, fresh = decided + follows, fresh + (not follows)
    assert 0.7 < decided / (decided + fresh) < 0.9  # one word in five is a fresh start


def test_a_relay_story_is_one_long_relay():
    s = L.StoryWriter(seed=4).relay_story(64)
    assert len(s.tokens) == 64 and s.tokens[:3] == [BOS, "relay", ":"]
    assert len(s.forced["relay"]) > 40 and not any(s.links.values())


def test_relays_change_nothing_when_switched_off():
    """relay_chance=0 draws no random number, so the models trained before the relay game was
    added still see the same stories: the digest is of the stories the generator wrote then."""
    writer = L.StoryWriter(3)
    text = " ".join(" ".join(writer.story(64).tokens) for _ in range(20))
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "b89e329ebf0ffc50"
    assert L.vocabulary(relay=True) == L.vocabulary() + ["relay"]
    assert set(L.RELAY) == set(L.RELAY.values()) == set(L.vocabulary()[1:])  # a reshuffle of every word
