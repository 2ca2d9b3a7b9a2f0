"""Which sides of equation 2 a CoFe selection matches (section 5, appendices C.6 and D).

``score_c = Match(X, X_c) + Match(Y, Y_c)`` (equation 2) matches both the source side X (the NL expression)
and the target side Y (the logical form). The paper tries two variants:

- ``source_only`` (appendix D, Table 6, "only matching source side"): the second term, Match(Y, Y_c), is
  removed; every test case is kept;
- ``target_only`` (section 5, appendix C.6, "excluding NL-side matching"): the first term, Match(X, X_c), is
  removed, and the matching of X_S^1 is limited: the test case's *sentence rule* must not be covered by the
  chosen examples, and test cases whose chosen examples cover it are filtered out (1,037 of 4,785 kept in the
  paper).

How the sentence rule is read (docs/decisions.md): a one-depth structure of the test's source tree whose parent
is ``sentence`` (appendix A's N-production rules ``sentence -> subject active-verb ...``), leaving out the
R-production ``sentence -> sentence conj sentence``. A chained test case has one per clause; it is kept only
when no chosen example's source tree has any of them in its own X_S^1.

>>> from backend.icl.data import make_example
>>> test = make_example({"input": "Noah gave Ava a donut .", "output": "GIVE ( NOAH , DONUT , AVA )"})
>>> sorted(sentence_rules(test.source))
['sentence[subject active-verb indirect-object direct-object]']
>>> other = make_example({"input": "Emma gave a cake to Liam .", "output": "GIVE ( EMMA , CAKE , LIAM )"})
>>> covered_sentence_rules(test, [other])
[]
"""

from __future__ import annotations

from collections.abc import Iterable

from backend.icl.data import IclExample
from backend.icl.trees import TreeFeatures

MATCHING: dict[str, tuple[str, ...]] = {"both": ("X", "Y"), "source_only": ("X",), "target_only": ("Y",)}
MATCHING_HELP = {
    "both": "equation 2: Match(X, X_c) + Match(Y, Y_c), source and target side (the paper's CoFe)",
    "source_only": "appendix D, Table 6: only the source (NL) side; Match(Y, Y_c) removed",
    "target_only": "section 5, appendix C.6: the NL side excluded; Match(X, X_c) removed and test cases whose "
    "sentence rule a chosen example covers are filtered out",
}
RECURSIVE_SENTENCE = "sentence[sentence conj sentence]"


def on_sides(keys: Iterable[str], sides: tuple[str, ...]) -> set[str]:
    """The side-prefixed feature keys (``X:...``, ``Y:...``) of the matched sides.

    >>> sorted(on_sides({"X:Emma", "Y:EMMA"}, ("Y",)))
    ['Y:EMMA']
    """
    return {key for key in keys if key.split(":", 1)[0] in sides}


def sentence_rules(source: TreeFeatures) -> set[str]:
    """The N-production rules with ``sentence`` on the left hand in a source tree's X_S^1 (appendix C.6)."""
    return {key for key in source.structures1 if key.startswith("sentence[") and key != RECURSIVE_SENTENCE}


def covered_sentence_rules(test: IclExample, chosen: list[IclExample]) -> list[str]:
    """The test case's sentence rules that some chosen example's source tree also holds (sorted)."""
    have: set[str] = set()
    for example in chosen:
        have |= example.source.structures1
    return sorted(sentence_rules(test.source) & have)


def filters_test_cases(matching: str) -> bool:
    """Whether a variant drops test cases whose sentence rule is covered (only ``target_only``)."""
    return matching == "target_only"


def variant_name(setting: str, matching: str = "both") -> str:
    """The name a selection's predictions are stored under: the setting, plus the variant when one side is dropped.

    >>> variant_name("full_similarity"), variant_name("full_similarity", "target_only")
    ('full_similarity', 'full_similarity+target_only')
    """
    return setting if matching == "both" else f"{setting}+{matching}"
