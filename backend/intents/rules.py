"""The rules an intent must follow (ViLPAct paper, section "Intent annotation"; the released crowd template).

An annotator writes two intents per action sequence: the *concrete* activity ("S/He wants to drink a glass
of water") and a *high-level* one ("S/He is thirsty" / "S/He wants to quench the thirst"). Each must

1. use one of the permitted forms, "S/He wants to ..." (future-directed) or "S/He is ..." (present-directed).
   The paper's "S/He" stands for either pronoun, so "She ..." and "He ..." are accepted too, in any
   capitalisation; ``SUBJECTS`` and ``VERBS`` below are the single list that the checker and the page's
   instructions (``accepted_forms``) both use;
2. have real content after the prefix (at least two letters, not a filler such as "something");
3. not copy an action name: the original template rejected a character-bigram Jaccard similarity above 0.8
   between the intent and any action of the sequence. We compare the content after the prefix, lower-cased
   with whitespace collapsed (the prefix would only dilute the overlap); the threshold is a setting;

and the two intents must differ. Every failed check gives its own message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUBJECTS = ("S/He", "She", "He")
VERBS = ("wants to", "is")  # future-directed, present-directed
_FORM = re.compile(
    r"^\s*(?P<subject>"
    + "|".join(re.escape(s) for s in SUBJECTS)
    + r")\s+(?P<verb>"
    + "|".join(r"\s+".join(map(re.escape, v.split())) for v in VERBS)
    + r")\b(?P<content>.*)$",
    re.IGNORECASE | re.S,
)
_FILLERS = {"something", "do something", "doing something", "nothing", "it", "this", "that", "n/a", "na", "xxx"}
FUTURE_DIRECTED, PRESENT_DIRECTED = "future-directed", "present-directed"


@dataclass(frozen=True)
class ParsedIntent:
    form: str  # FUTURE_DIRECTED ("S/He wants to ...") or PRESENT_DIRECTED ("S/He is ...")
    content: str


def accepted_forms() -> str:
    """The accepted beginnings in words, for the page and the messages.

    >>> accepted_forms()
    '“S/He wants to …”, “S/He is …”, “She wants to …”, “She is …”, “He wants to …” or “He is …”'
    """
    forms = [f"“{subject} {verb} …”" for subject in SUBJECTS for verb in VERBS]
    return ", ".join(forms[:-1]) + " or " + forms[-1]


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def char_bigrams(text: str) -> set[str]:
    """Character bigrams of the normalised text.

    >>> sorted(char_bigrams("Open  a"))
    [' a', 'en', 'n ', 'op', 'pe']
    """
    text = normalise(text)
    return {text[i : i + 2] for i in range(len(text) - 1)}


def bigram_jaccard(a: str, b: str) -> float:
    """|A ∩ B| / |A ∪ B| over character bigrams; 0.0 when both are empty.

    By hand: "opening a book" has 13 distinct bigrams, "open a book" 10; they share 9
    (' a', ' b', 'a ', 'bo', 'en', 'ok', 'oo', 'op', 'pe'), so 9 / (13 + 10 - 9) = 9/14.

    >>> round(bigram_jaccard("opening a book", "open a book"), 3)
    0.643
    >>> bigram_jaccard("abc", "abc")
    1.0
    """
    return _jaccard(char_bigrams(a), char_bigrams(b))


def _jaccard(x: set[str], y: set[str]) -> float:
    union = len(x | y)
    return len(x & y) / union if union else 0.0


def parse_intent(text: str) -> ParsedIntent | None:
    match = _FORM.match(text or "")
    if not match:
        return None
    form = FUTURE_DIRECTED if match.group("verb").lower().startswith("wants") else PRESENT_DIRECTED
    return ParsedIntent(form, match.group("content").strip(" \t\n.,;:!?"))


def check_intent(label: str, text: str, action_names: list[str], max_similarity: float) -> list[str]:
    """Problems with one intent, each as a message naming the field (empty list: it passes)."""
    text = (text or "").strip()
    if not text:
        return [f"The {label} intent is empty: write it as “S/He wants to …” or “S/He is …”."]
    if len(text) > 500:
        return [f"The {label} intent is too long ({len(text)} characters; at most 500)."]
    parsed = parse_intent(text)
    if parsed is None:
        subjects = ", ".join(SUBJECTS[:-1]) + " or " + SUBJECTS[-1]
        verbs = " or ".join(f"“{verb} …”" for verb in VERBS)
        return [f"The {label} intent must start with {subjects}, then {verbs} (you wrote “{text[:40]}”)."]
    problems = []
    letters = sum(ch.isalpha() for ch in parsed.content)
    if letters < 2 or normalise(parsed.content) in _FILLERS:
        problems.append(f"The {label} intent needs real content after “S/He wants to” / “S/He is”.")
    content = char_bigrams(parsed.content)
    for name in action_names:
        similarity = _jaccard(content, char_bigrams(name))
        if similarity > max_similarity:
            problems.append(
                f"The {label} intent copies the action “{name}” (similarity {similarity:.2f} > {max_similarity}); "
                "say why the person acts, not what they do."
            )
            break
    return problems


def check_intent_pair(
    concrete: str, high_level: str, action_names: list[str], max_similarity: float = 0.8
) -> list[str]:
    """All problems with a submitted pair; empty when it may be stored."""
    problems = check_intent("concrete", concrete, action_names, max_similarity)
    problems += check_intent("high-level", high_level, action_names, max_similarity)
    if concrete and high_level and normalise(concrete).rstrip(".!") == normalise(high_level).rstrip(".!"):
        problems.append(
            "The concrete and the high-level intent must differ: the high-level one says the goal behind it."
        )
    return problems
