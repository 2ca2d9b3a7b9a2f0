"""A parser for the COGS English grammar of CoFe appendix A (the source side of equation 2).

Categories follow appendix A: ``sentence``, ``subject``, ``direct-object``, ``indirect-object``,
``active-verb``, ``passive-verb``, ``conj``, ``pp-mod``, ``pp-s`` and ``prep``. Appendix A lists only "part of
the grammar"; the rest of COGS needs three more categories, named here: ``by-phrase`` (the agent of a
passive), ``infinitive-verb`` (``wanted to run``) and the ``to`` of a prepositional dative, which stays a
word inside ``indirect-object``.

Rules (R marks the recursive ones, which nest to the right as in the logical forms)::

    sentence        -> sentence conj sentence                       (R; conj is "that", or "to" before an infinitive)
    sentence        -> subject active-verb [direct-object | indirect-object direct-object | direct-object indirect-object]
    sentence        -> subject passive-verb [direct-object | indirect-object] [by-phrase]
    sentence        -> infinitive-verb                              (only right of conj "to")
    subject | direct-object | indirect-object | by-phrase -> [to|by] (noun phrase | pp-mod)
    pp-mod          -> pp-s prep pp-mod | noun phrase               (R)
    noun phrase     -> (a | the) noun | ProperName
    primitive       -> word                                         (the bank's one-word examples, e.g. "touch")

>>> print(parse_sentence("Jackson in a room observed a baby .").pretty())
sentence[subject[pp-mod[pp-s[Jackson] prep[in] pp-mod[a room]]] active-verb[observed] direct-object[a baby]]
"""

from __future__ import annotations

from backend.icl.trees import Tree, TreeError, node

DETERMINERS = {"a", "the"}
PREPOSITIONS = {"in", "on", "beside"}
_FUNCTION_WORDS = DETERMINERS | PREPOSITIONS | {"that", "to", "by", "was"}


class SentenceParseError(TreeError):
    """A sentence outside the COGS grammar."""


class _Words:
    def __init__(self, sentence: str):
        words = sentence.split()
        if words and words[-1] == ".":
            words = words[:-1]
        if words and words[0] in {"A", "The"}:
            words[0] = words[0].lower()
        if not words:
            raise SentenceParseError("empty sentence")
        self.items = words
        self.pos = 0

    def peek(self, ahead: int = 0) -> str | None:
        index = self.pos + ahead
        return self.items[index] if index < len(self.items) else None

    def take(self) -> str:
        word = self.peek()
        if word is None:
            raise SentenceParseError(f"sentence ends early after word {self.pos}")
        self.pos += 1
        return word

    def fail(self, wanted: str) -> SentenceParseError:
        found = self.peek()
        where = f"word {self.pos + 1} ({found!r})" if found is not None else "the end"
        return SentenceParseError(f"expected {wanted} at {where}")


def parse_sentence(sentence: str) -> Tree:
    """Parse one COGS sentence; raises :class:`SentenceParseError` naming the word where it failed.

    >>> parse_sentence("Jackson observed a baby .").pretty()
    'sentence[subject[Jackson] active-verb[observed] direct-object[a baby]]'
    >>> parse_sentence("Emma wanted to run .").pretty()
    'sentence[sentence[subject[Emma] active-verb[wanted]] conj[to] sentence[infinitive-verb[run]]]'
    """
    words = _Words(sentence)
    if len(words.items) == 1 and words.items[0].isalpha():
        return node("primitive", words.items[0])
    tree = _sentence(words)
    if words.peek() is not None:
        raise words.fail("the end of the sentence")
    return tree


def _is_noun_start(word: str | None) -> bool:
    return word is not None and (word in DETERMINERS or (word[:1].isupper() and word.lower() not in _FUNCTION_WORDS))


def _is_verb(word: str | None) -> bool:
    return word is not None and word.isalpha() and word.islower() and word not in _FUNCTION_WORDS


def _is_content_word(word: str | None) -> bool:
    return word is not None and word.isalpha() and word.lower() not in _FUNCTION_WORDS


def _sentence(words: _Words) -> Tree:
    clause = _clause(words)
    if words.peek() == "that":
        words.take()
        return node("sentence", clause, node("conj", "that"), _sentence(words))
    if words.peek() == "to" and _is_verb(words.peek(1)):
        words.take()
        infinitive = node("sentence", node("infinitive-verb", words.take()))
        return node("sentence", clause, node("conj", "to"), infinitive)
    return clause


def _clause(words: _Words) -> Tree:
    subject = _role(words, "subject")
    if words.peek() == "was":
        words.take()
        if not _is_verb(words.peek()):
            raise words.fail("a past participle after 'was'")
        parts = [subject, node("passive-verb", "was", words.take())]
        if words.peek() == "to" and _is_noun_start(words.peek(1)):
            parts.append(_role(words, "indirect-object", "to"))
        elif _is_noun_start(words.peek()):
            parts.append(_role(words, "direct-object"))
        if words.peek() == "by":
            parts.append(_role(words, "by-phrase", "by"))
        return node("sentence", *parts)
    if not _is_verb(words.peek()):
        raise words.fail("a verb")
    parts = [subject, node("active-verb", words.take())]
    if _is_noun_start(words.peek()):
        first = _noun_phrase(words)
        if _is_noun_start(words.peek()):
            parts += [node("indirect-object", *first), _role(words, "direct-object")]
        else:
            parts.append(node("direct-object", *first))
            if words.peek() == "to" and _is_noun_start(words.peek(1)):
                parts.append(_role(words, "indirect-object", "to"))
    return node("sentence", *parts)


def _role(words: _Words, label: str, marker: str | None = None) -> Tree:
    """A noun-phrase slot: its children are the marker word (to/by), then the noun's words or one pp-mod."""
    prefix = [words.take()] if marker is not None else []
    if not _is_noun_start(words.peek()):
        raise words.fail(f"a noun phrase for the {label}")
    return node(label, *prefix, *_noun_phrase(words))


def _noun_phrase(words: _Words) -> list[Tree | str]:
    """The children a slot gets: ``[pp-mod]`` when prepositional phrases follow, else the noun's words."""
    core = _noun(words)
    if words.peek() in PREPOSITIONS and _is_noun_start(words.peek(1)):
        preposition = words.take()
        return [node("pp-mod", node("pp-s", *core), node("prep", preposition), _pp_tail(words))]
    return list(core)


def _pp_tail(words: _Words) -> Tree:
    core = _noun(words)
    if words.peek() in PREPOSITIONS and _is_noun_start(words.peek(1)):
        preposition = words.take()
        return node("pp-mod", node("pp-s", *core), node("prep", preposition), _pp_tail(words))
    return node("pp-mod", *core)


def _noun(words: _Words) -> list[str]:
    first = words.peek()
    if first in DETERMINERS:
        words.take()
        if not _is_content_word(words.peek()):
            raise words.fail(f"a noun after {first!r}")
        return [first, words.take()]
    if _is_noun_start(first):
        return [words.take()]
    raise words.fail("a noun phrase")
