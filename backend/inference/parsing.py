"""Turning a model's answer text into option letters, without ever guessing.

Letters run over as many options as the item has (ViLPAct: six, A-F). Single choice gives one letter,
indefinite choice (``multi``) a set of letters. The rules, tried in order; the first that matches wins:

1. the whole answer is a letter list: ``C``, ``(b)``, ``[D].``, ``A, C``, ``A and C``, ``Both B & D``;
2. an explicit cue: ``The answer is (C).``, ``Answer: b``, ``Correct options: A, C``, ``I choose D``,
   ``B is the correct answer``; when several cues disagree, the last ``final answer`` cue decides, else the
   answer is unparsed;
3. a leading letter followed by ``.``, ``)`` or ``:``: ``C. Opening a book``, ``(B) ...``;
4. exactly one bold letter: ``**B**``;
5. the option text echoed back (exactly, or as the only option named, without negation);
6. otherwise a refusal (``I cannot determine ...``, ``None of the options``) or unparsed.

Hedges (``A or C``) and letters beyond the item's options are unparsed. Unparsed and refused answers
count as wrong; every report shows their rate. Lower-case letters are accepted only where they cannot be
the article "a" (alone, after a cue, or before punctuation).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

LETTERS = string.ascii_uppercase  # option letters: the one source (planning, VQA, parsing)


@dataclass(frozen=True)
class ParsedAnswer:
    """``status``: ``ok`` (letters or text found), ``unparsed`` or ``refusal``; ``how``: the rule used."""

    status: str
    letters: frozenset[str] = frozenset()
    text: str = ""
    how: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def display(self) -> str:
        if not self.ok:
            return f"({self.status})"
        return ", ".join(sorted(self.letters)) if self.letters else self.text

    def as_dict(self) -> dict:
        return {"status": self.status, "letters": sorted(self.letters), "text": self.text, "how": self.how}

    @classmethod
    def from_dict(cls, data: dict) -> ParsedAnswer:
        return cls(data["status"], frozenset(data.get("letters", ())), data.get("text", ""), data.get("how", ""))


def letters_for(count: int) -> str:
    """The option letters of an item with ``count`` options.

    >>> letters_for(6)
    'ABCDEF'
    """
    return LETTERS[:count]


_MARKDOWN = re.compile(r"[*_`#]+")
_SEP = r"\s*(?:,|&|/|\band\b|\+|;)\s*"
_LETTER = r"[\(\[]?([A-Za-z])[\)\]]?"
_LIST = re.compile(rf"^(?:both\s+|options?\s+|choices?\s+)?{_LETTER}(?:{_SEP}{_LETTER})*\s*\.?$", re.I)
_CUE = re.compile(
    r"(?P<final>final\s+)?(?:answers?|correct\s+(?:options?|choices?|answers?|letters?)|my\s+(?:choice|answer)"
    r"|\bi\s+(?:would\s+)?(?:choose|select|pick|go\s+with)|\bchoose|\bselect)"
    r"\s*(?:is|are|would\s+be|should\s+be|will\s+be|:|=|-)?\s*(?:options?|choices?|letters?)?\s*:?\s*",
    re.I,
)
_AFTER_CUE_LIST = re.compile(rf"{_LETTER}(?=$|[\s.,;:!)\]&/+])(?:{_SEP}{_LETTER}(?=$|[\s.,;:!)\]&/+]))*")
_LETTER_THEN_CUE = re.compile(
    r"(?:^|[\s(\[])(?:options?\s+|choices?\s+)?[\(\[]?([A-Z])[\)\]]?\s+(?:is|are)\s+(?:the\s+)?"
    r"(?:correct|right|best)(?:\s+(?:answer|option|choice))?",
)
_LEADING = re.compile(r"^(?:options?\s+|choices?\s+)?[\(\[]?([A-Z])(?:[\)\]]\s*|[.:]\s+|[.:]?$)")
_BOLD = re.compile(r"(?:\*\*|__)\s*[\(\[]?([A-Za-z])[\)\]]?\s*\.?\s*(?:\*\*|__)")
_HEDGE = re.compile(r"\b[A-F]\)?\s+or\s+\(?[A-F]\b")
_REFUSAL = re.compile(
    r"\b(?:i\s+(?:can(?:no|')t|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|do\s+not\s+know|don't\s+know)"
    r"|(?:cannot|can't|impossible\s+to|unable\s+to|not\s+possible\s+to)\s+(?:be\s+)?(?:determine|tell|answer|say|know)"
    r"|none\s+of\s+(?:the|these)\s+(?:options|choices|answers|above)|sorry|as\s+an\s+ai|not\s+enough\s+information"
    r"|insufficient\s+information)",
    re.I,
)
_NEGATION = re.compile(r"\b(?:not|never|no|won't|isn't|doesn't|don't|cannot|can't|unlikely)\b", re.I)


def _norm(value: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", value.lower()).split())


def _split_letters(listing: str) -> list[str]:
    """``"(A) and (D)"`` -> ``["A", "D"]``: the letters of a list, separators removed."""
    tokens = re.split(_SEP, re.sub(r"^(?:both|options?|choices?)\s+", "", listing.strip(), flags=re.I).rstrip(". "))
    return [m.group(1) for m in (re.fullmatch(_LETTER, t.strip()) for t in tokens) if m]


def _valid(found: Sequence[str], valid: str) -> frozenset[str] | None:
    letters = frozenset(letter.upper() for letter in found if letter)
    if not letters or any(letter not in valid for letter in letters):
        return None
    return letters


def _cue_answers(text: str, valid: str) -> list[tuple[bool, frozenset[str] | None]]:
    answers = []
    for cue in _CUE.finditer(text):
        match = _AFTER_CUE_LIST.match(text, cue.end())
        if match is None:
            continue
        raw = _split_letters(match.group(0))
        # a lone lower-case "a" followed by a word is the article, not a letter
        if len(raw) == 1 and raw[0] == "a" and re.match(r"\s+[a-z]", text[match.end() :]):
            continue
        answers.append((bool(cue.group("final")), _valid(raw, valid)))
    return answers


def _echoed(text: str, options: Sequence[str], valid: str, multi: bool) -> frozenset[str] | None:
    said = _norm(re.sub(r"^(?:the\s+)?(?:answer|correct\s+option)\s*(?:is|:)\s*", "", text, flags=re.I))
    if not said:
        return None
    normed = [_norm(option) for option in options]
    for index, option in enumerate(normed):
        if option and said == option:
            return frozenset(valid[index])
    if _NEGATION.search(text):
        return None
    found = [i for i, option in enumerate(normed) if option and re.search(rf"\b{re.escape(option)}\b", said)]
    found = [i for i in found if not any(i != j and normed[i] in normed[j] for j in found)]
    if not found or (len(found) > 1 and not multi):
        return None
    leftover = said
    for i in found:
        leftover = leftover.replace(normed[i], " ")
    if multi and len(leftover.split()) > 4:
        return None
    return frozenset(valid[i] for i in found)


def parse_choice(raw: str, num_options: int, options: Sequence[str] = (), multi: bool = False) -> ParsedAnswer:
    """Parse a multiple-choice answer. Never guesses.

    >>> parse_choice("The answer is (C).", 6).letters
    frozenset({'C'})
    >>> sorted(parse_choice("A, C", 4, multi=True).letters)
    ['A', 'C']
    >>> parse_choice("A or C", 4).status
    'unparsed'
    >>> parse_choice("I cannot determine this from the video.", 4).status
    'refusal'
    """
    valid = letters_for(num_options)
    text = _MARKDOWN.sub("", raw or "").strip()
    if not text:
        return ParsedAnswer("unparsed", how="empty")
    if _HEDGE.search(text) and not _CUE.search(text):
        return ParsedAnswer("unparsed", how="hedge")
    found = _explicit(text, valid) or _layout(text, raw or "", valid, multi)
    if found is not None:
        return found
    if options:
        letters = _echoed(text, options, valid, multi)
        if letters:
            return ParsedAnswer("ok", letters, how="option text")
    if _REFUSAL.search(text):
        return ParsedAnswer("refusal", how="refusal")
    return ParsedAnswer("unparsed", how="no rule matched")


def _explicit(text: str, valid: str) -> ParsedAnswer | None:
    """Rules 1 and 2: the whole answer is a letter list, or letters follow an answer cue."""
    first_line = text.splitlines()[0].strip()
    if (len(text.splitlines()) == 1 or len(first_line) <= 3) and _LIST.match(first_line):
        raw_letters = _split_letters(first_line)
        letters = _valid(raw_letters, valid)
        if letters:
            return ParsedAnswer("ok", letters, how="letters")
        if all(len(x) == 1 and x.isupper() for x in raw_letters):
            return ParsedAnswer("unparsed", how="letter out of range")
    cues = _cue_answers(text, valid)
    if not cues:
        return None
    finals = [letters for final, letters in cues if final]
    if finals:
        chosen = finals[-1]
    else:
        distinct = {letters for _, letters in cues}
        chosen = distinct.pop() if len(distinct) == 1 else None
    if chosen:
        return ParsedAnswer("ok", chosen, how="cue")
    if len(cues) == 1:
        return ParsedAnswer("unparsed", how="letter out of range")
    return ParsedAnswer("unparsed", how="conflicting cues")


def _layout(text: str, raw: str, valid: str, multi: bool) -> ParsedAnswer | None:
    """Rules 3 and 4: "B is the correct answer", a leading "C." or "(B)", exactly one bold letter."""
    after = {m.group(1) for m in _LETTER_THEN_CUE.finditer(text)}
    letters = _valid(list(after), valid) if len(after) == 1 else None
    if letters:
        return ParsedAnswer("ok", letters, how="letter is correct")
    leading = _LEADING.match(text)
    letters = _valid([leading.group(1)], valid) if leading else None
    if letters:
        return ParsedAnswer("ok", letters, how="leading letter")
    bold = {b.upper() for b in _BOLD.findall(raw)}
    letters = _valid(list(bold), valid) if len(bold) == 1 or (multi and bold) else None
    if letters:
        return ParsedAnswer("ok", letters, how="bold")
    return None


def parse_text(raw: str) -> ParsedAnswer:
    """A free-text answer: the first non-empty line, without an ``Answer:`` prefix or surrounding quotes.

    >>> parse_text("Answer: DUST ( SAILOR , BOY , NONE )\\nbecause ...").text
    'DUST ( SAILOR , BOY , NONE )'
    """
    lines = [line.strip() for line in (raw or "").splitlines() if line.strip()]
    if not lines:
        return ParsedAnswer("unparsed", how="empty")
    first = re.sub(r"^(?:final\s+)?(?:answer|output)\s*:\s*", "", lines[0], flags=re.I).strip().strip("\"'`")
    if not first:
        return ParsedAnswer("unparsed", how="empty")
    return ParsedAnswer("ok", text=first, how="first line")
