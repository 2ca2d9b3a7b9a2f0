"""Prompts in CoFe's format (appendix C.3 orders, appendix C.7 fictional words).

A prompt is ``input: ...`` / ``output: ...`` blocks separated by a blank line, with the test input last and
its ``output:`` left open. The example closest to the test input is the last block.

>>> from backend.icl.selection import Chosen
>>> chosen = [Chosen(0, 5, 2, 0.0), Chosen(1, 3, 9, 0.0), Chosen(2, 4, 9, 0.0)]
>>> [c.example_id for c in order_examples(chosen, "structure_closer")]
[0, 1, 2]
>>> [c.example_id for c in order_examples(chosen, "atom_closer")]
[1, 2, 0]
>>> print(format_prompt([("Emma ate .", "EAT ( EMMA , NONE , NONE )")], "Liam ate ."))
input: Emma ate .
output: EAT ( EMMA , NONE , NONE )
<BLANKLINE>
input: Liam ate .
output:
"""

from __future__ import annotations

import random
import string

from backend.icl.selection import Chosen

ORDERS = ("structure_closer", "atom_closer", "random")


def order_examples(chosen: list[Chosen], order: str = "structure_closer", seed: int = 0) -> list[Chosen]:
    """Prompt order, first block first. ``structure_closer`` (the paper's default) puts a higher structural_similarity
    nearer the test input, ``atom_closer`` a higher primitive_coverage; ties keep the earlier pick nearer the test.
    ``random`` shuffles with ``seed``."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; choose one of {', '.join(ORDERS)}")
    ranked = list(enumerate(chosen))
    if order == "random":
        random.Random(seed).shuffle(ranked)
        return [c for _, c in ranked]
    if order == "structure_closer":
        ranked.sort(key=lambda item: (item[1].structural_similarity, item[1].primitive_coverage, -item[0]))
    else:
        ranked.sort(key=lambda item: (item[1].primitive_coverage, item[1].structural_similarity, -item[0]))
    return [c for _, c in ranked]


def format_prompt(pairs: list[tuple[str, str]], test_input: str) -> str:
    blocks = [f"input: {x}\noutput: {y}" for x, y in pairs]
    blocks.append(f"input: {test_input}\noutput:")
    return "\n\n".join(blocks)


def context_length(pairs: list[tuple[str, str]]) -> int:
    """Whitespace tokens in the examples' inputs and outputs (Table 2's "Context" column)."""
    return sum(len(x.split()) + len(y.split()) for x, y in pairs)


def fictional_words(outputs: list[str], seed: int = 0) -> tuple[list[str], dict[str, str]]:
    """Appendix C.7: replace every target-side word by random capital letters of the same length, one
    consistent mapping for the whole prompt (distinct words stay distinct); brackets and commas stay.

    >>> new, mapping = fictional_words(["EAT ( EMMA , NONE , NONE )", "EAT ( LIAM , CAKE , NONE )"], seed=1)
    >>> new[0].split()[0] == new[1].split()[0] and len(mapping["EMMA"]) == 4
    True
    >>> new[0].count("(") == 1 and all(mapping[w] != w for w in mapping)
    True
    """
    rng = random.Random(seed)
    mapping: dict[str, str] = {}
    used: set[str] = set()
    originals = {token for text in outputs for token in text.split() if token.isalnum()}
    for word in sorted(originals):
        while True:
            fake = "".join(rng.choice(string.ascii_uppercase) for _ in word)
            if fake not in used and fake not in originals:
                break
        mapping[word] = fake
        used.add(fake)
    replaced = [" ".join(mapping.get(token, token) for token in text.split()) for text in outputs]
    return replaced, mapping
