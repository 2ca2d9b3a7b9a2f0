"""The rules that read option letters out of a model's answer (the order they run in, and what each reads, is
described in :mod:`backend.inference.parsing`, which runs them and records the trace)."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
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


MARKDOWN = re.compile(r"[*_`#]+")
_SEP = r"\s*(?:,|&|/|\band\b|\+|;)\s*"
_LETTER = r"[\(\[]?([A-Za-z])[\)\]]?"
_LIST = re.compile(rf"^(?:both\s+|options?\s+|choices?\s+)?{_LETTER}(?:{_SEP}{_LETTER})*\s*\.?$", re.I)
_RUN = re.compile(r"^(?:options?\s+|choices?\s+)?(?:[\(\[][A-Za-z][\)\]]\s*){2,}\.?$", re.I)
_JOINED = re.compile(r"^(?:options?\s+|choices?\s+)?([A-Z]{2,})\.?$")
# "a book", "A person opens ...": the article, not the letter (but "A because ..." is the letter)
_ARTICLE = re.compile(r"(?:a\s+[a-z]|A\s+(?!(?:because|since|as|is|fits|seems|would|and|or)\b)[a-z]+\b)")
_ITEM_LINE = re.compile(r"^[\(\[]?([A-Z])[.):\]]\s+\S", re.M)
_LINE_ITEM = re.compile(r"^(?:[-*•]\s*|\d+[.)]\s+)?[\(\[]?([A-Za-z])(?:[\)\]]|[.:])?(?:\s+(?P<rest>.*))?$")
CUE = re.compile(
    r"(?:answers?|correct\s+(?:options?|choices?|answers?|letters?)|my\s+(?:choice|answer)"
    r"|\bi\s+(?:would\s+)?(?:choose|select|pick|go\s+with)|\bchoose|\bselect)"
    r"\s*(?:is|are|would\s+be|should\s+be|will\s+be|:|=|-)?\s*"
    r"(?:(?:probably|likely|most\s+likely|clearly|definitely|certainly)\s+)?(?:options?|choices?|letters?)?\s*:?\s*",
    re.I,
)
_AFTER_CUE_LIST = re.compile(
    r"(?:(?:[\(\[][A-Za-z][\)\]]\s*){2,}(?=$|[\s.,;:!])"
    r"|[A-Z]{2,}(?=$|[\s.,;:!)])"
    rf"|{_LETTER}(?=$|[\s.,;:!)\]&/+])(?:{_SEP}{_LETTER}(?=$|[\s.,;:!)\]&/+]))*)"
)
_LETTER_THEN_CUE = re.compile(
    r"(?:^|[\s(\[])(?:options?\s+|choices?\s+)?[\(\[]?([A-Z])[\)\]]?\s+(?:is|are)\s+(?:the\s+)?"
    r"(?:correct|right|best)(?:\s+(?:answer|option|choice))?",
)
_LEADING = re.compile(r"^(?:options?\s+|choices?\s+)?[\(\[]?([A-Z])(?:[\)\]]\s*|[.:]\s+|[.:]?$)")
BOLD = re.compile(r"(?:\*\*|__)\s*[\(\[]?([A-Za-z])[\)\]]?\s*\.?\s*(?:\*\*|__)")
HEDGE = re.compile(r"\b[A-F]\)?\s+or\s+\(?[A-F]\b")
_HEDGED_SENTENCE = re.compile(
    r"\b(?:i\s+(?:think|believe|guess|suspect|would\s+say|'d\s+say|lean\s+towards?|would\s+go\s+with)"
    r"|most\s+(?:plausible|likely|probable|reasonable|fitting)|best\s+(?:fits?|matches|match|answer|option|choice)"
    r"|probably|likely|seems\s+to\s+be|appears\s+to\s+be|my\s+(?:best\s+)?guess)\b",
    re.I,
)
_NAMED_OPTION = re.compile(
    r"\b(?:options?|choices?)\s+[\(\[]?([A-Za-z])[\)\]]?(?![A-Za-z])|[\(\[]([A-Z])[\)\]]"
    r"|\b(?:is|be)\s+([A-Z])(?=$|[\s.,;:!])"
)
_REJECTED = re.compile(
    r"\b(?:wrong|incorrect|not\s+(?:the|correct|right|likely|plausible|possible|it)|ruled\s+out|unlikely"
    r"|implausible|impossible)\b",
    re.I,
)
REFUSAL = re.compile(
    r"\b(?:i\s+(?:can(?:no|')t|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|do\s+not\s+know|don't\s+know)"
    r"|(?:cannot|can't|impossible\s+to|unable\s+to|not\s+possible\s+to)\s+(?:be\s+)?(?:determine|tell|answer|say|know)"
    r"|none\s+of\s+(?:the|these)\s+(?:options|choices|answers|above)|sorry|as\s+an\s+ai|not\s+enough\s+information"
    r"|insufficient\s+information)",
    re.I,
)
NONE_ANSWER = re.compile(r"^(?:answer\s*:\s*)?none\.?$", re.I)
_NEGATION = re.compile(r"\b(?:not|never|no|won't|isn't|doesn't|don't|cannot|can't|unlikely|rather\s+than)\b", re.I)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.I | re.S)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_FINAL = re.compile(r"final\s+answer\s*(?:is\b|:|=|-|\n)\s*(?:options?|choices?|letters?)?\s*:?[ \t]*", re.I)
_LEADING_SPAN = re.compile(r"^(?:options?\s+|choices?\s+)?[\(\[]?([A-Z])[\)\]]?(?=[,;]|\s+[-–—]|\s+because\b)")


@dataclass(frozen=True)
class Context:
    valid: str
    options: tuple[str, ...]
    multi: bool


def _norm(value: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", value.lower()).split())


def _split_letters(listing: str) -> list[str]:
    """``"(A) and (D)"`` -> ``["A", "D"]``; ``"(B)(D)"`` and ``"AC"`` -> ``["B", "D"]``, ``["A", "C"]``."""
    listing = re.sub(r"^(?:both|options?|choices?)\s+", "", listing.strip(), flags=re.I).rstrip(". ")
    if re.fullmatch(r"[A-Z]{2,}", listing):
        return list(listing) if len(set(listing)) == len(listing) else []
    if _RUN.match(listing):
        return re.findall(r"[\(\[]([A-Za-z])[\)\]]", listing)
    tokens = re.split(_SEP, listing)
    return [m.group(1) for m in (re.fullmatch(_LETTER, t.strip()) for t in tokens) if m]


def valid(found: Sequence[str], valid: str) -> frozenset[str] | None:
    letters = frozenset(letter.upper() for letter in found if letter)
    if not letters or any(letter not in valid for letter in letters):
        return None
    return letters


def _echo_index(rest: str, ctx: Context) -> int | None:
    """The option whose text ``rest`` (what follows a letter) repeats, if it repeats one."""
    said = _norm(rest)
    for index, option in enumerate(_norm(o) for o in ctx.options):
        if option and (said == option or said.startswith(option + " ")):
            return index
    return None


def _agrees(letter: str, rest: str | None, ctx: Context) -> bool:
    """False when the text after ``letter`` is another option's text (``B. drink from cup`` for C's text)."""
    index = _echo_index(rest or "", ctx)
    return index is None or ctx.valid[index] == letter.upper()


def _letter_list(span: str, ctx: Context) -> ParsedAnswer | None:
    """``A, C`` / ``AC`` / ``A and C``: the letters, or a letter out of range; None when it is no such list."""
    if not (_LIST.match(span) or _RUN.match(span) or _JOINED.match(span)):
        return None
    raw = _split_letters(span)
    letters = valid(raw, ctx.valid)
    if letters:
        return ParsedAnswer("ok", letters, how="letters")
    if raw and all(len(x) == 1 and x.isupper() for x in raw):
        return ParsedAnswer("unparsed", how="letter out of range")
    return None


def _leading_letter(leading: re.Match[str], span: str, ctx: Context) -> ParsedAnswer:
    """A letter in front (``B. drink from the cup``): read when in range and its text is its own option's."""
    letters = valid([leading.group(1)], ctx.valid)
    if letters is None:
        return ParsedAnswer("unparsed", how="letter out of range")
    if not _agrees(leading.group(1), span[leading.end() :], ctx):
        return ParsedAnswer("unparsed", how="letter and option text disagree")
    return ParsedAnswer("ok", letters, how="leading letter")


def read_span(span: str, ctx: Context) -> ParsedAnswer | None:
    """A short answer on its own (inside a marker, or the whole output): letters, letter + text, or text."""
    span = _latex_free(span).strip("\"'").strip()
    span = re.sub(r"^(?:the\s+)?(?:answer|correct\s+option)\s*(?:is|:)\s*", "", span, flags=re.I).strip()
    if not span:
        return None
    if NONE_ANSWER.match(span) or REFUSAL.search(span):
        return ParsedAnswer("refusal", how="refusal")
    listed = _letter_list(span, ctx)
    if listed is not None:
        return listed
    leading = _LEADING.match(span) or _LEADING_SPAN.match(span)
    if leading:
        return _leading_letter(leading, span, ctx)
    if ctx.options:
        letters = echoed(span, ctx)
        if letters:
            return ParsedAnswer("ok", letters, how="option text")
    return None


def _latex_free(span: str) -> str:
    """``$\\text{C}$`` -> ``C``: math delimiters and ``\\text{}`` removed."""
    return re.sub(r"\\[\[\]()]|\$", "", re.sub(r"\\text\{([^{}]*)\}", r"\1", span)).strip()


def markers(text: str) -> list[str]:
    spans = [m.group(1) for m in _ANSWER_TAG.finditer(text)]
    spans += [m.group(1) for m in _BOXED.finditer(text)]
    for match in _FINAL.finditer(text):
        rest = text[match.end() :]
        line = next((candidate for candidate in rest.splitlines() if _latex_free(candidate)), "")
        if not _BOXED.search(line):  # a boxed answer is read once, as the box
            spans.append(line)
    return spans


def _line_list(text: str, ctx: Context, after_cue: bool) -> ParsedAnswer | None:
    """One letter per line (``- A`` / ``- C``): every line when the list is the whole answer; after a cue
    line (``Answers:``) the lines up to the first that is not an item, each letter with its own option text.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found: list[str] = []
    for line in lines:
        match = _LINE_ITEM.match(line)
        letter, rest = (match.group(1), match.group("rest")) if match else ("", None)
        bad_rest = rest and (
            not after_cue or not letter.isupper() or _echo_index(rest, ctx) is None or not _agrees(letter, rest, ctx)
        )
        if match is None or bad_rest:
            if after_cue and found:
                break
            return None
        found.append(letter)
    if len(found) < (1 if after_cue else 2):
        return None
    letters = valid(found, ctx.valid)
    if letters is None:
        return ParsedAnswer("unparsed", how="letter out of range")
    return ParsedAnswer("ok", letters, how="list across lines")


def whole_list(text: str, ctx: Context) -> ParsedAnswer | None:
    """Rule 2: the whole answer is a letter list, on one line or one letter per line."""
    first_line = text.splitlines()[0].strip()
    if len(text.splitlines()) == 1 or len(first_line) <= 3:
        if _LIST.match(first_line) or _RUN.match(first_line) or _JOINED.match(first_line):
            raw_letters = _split_letters(first_line)
            letters = valid(raw_letters, ctx.valid)
            if letters and (len(text.splitlines()) == 1 or _line_list(text, ctx, False) is None):
                return ParsedAnswer("ok", letters, how="letters")
            if raw_letters and not letters and all(len(x) == 1 and x.isupper() for x in raw_letters):
                return ParsedAnswer("unparsed", how="letter out of range")
    return _line_list(text, ctx, False)


#: what :func:`_after_cue` answers when a cue is followed by no letters
_NOTHING = frozenset({"-"})


def _after_cue(text: str, cue: re.Match[str], ctx: Context) -> frozenset[str] | ParsedAnswer | None:
    """The letters after one answer cue (None: out of range), ``_NOTHING`` when none follow it, or the reading
    that settles it at once (a letter whose text is another option's)."""
    if "\n" in cue.group(0):
        listed = _line_list(text[cue.end() :], ctx, True)
        if listed is not None:
            return listed.letters or None
    match = _AFTER_CUE_LIST.match(text, cue.end())
    if match is None:
        return _NOTHING
    raw = _split_letters(match.group(0))
    if not raw:  # capitals that are a word ("CLEARLY"), not distinct letters
        return _NOTHING
    if len(raw) == 1 and _ARTICLE.match(match.group(0) + text[match.end() :]):
        return _NOTHING
    if len(raw) == 1 and not _agrees(raw[0], text[match.end() :].split("\n")[0].lstrip(".:) "), ctx):
        return ParsedAnswer("unparsed", how="letter and option text disagree")
    return valid(raw, ctx.valid)


def cue_reading(text: str, ctx: Context) -> ParsedAnswer | None:
    """Rule 3: letters after answer cues; all cues must agree."""
    answers: list[frozenset[str] | None] = []
    for cue in CUE.finditer(text):
        found = _after_cue(text, cue, ctx)
        if isinstance(found, ParsedAnswer):
            return found
        if found is not _NOTHING:
            answers.append(found)
    if not answers:
        return None
    distinct = set(answers)
    if len(distinct) == 1 and answers[0]:
        return ParsedAnswer("ok", answers[0], how="cue")
    if len(distinct) == 1:
        return ParsedAnswer("unparsed", how="letter out of range")
    return ParsedAnswer("unparsed", how="conflicting cues")


def hedged(text: str, ctx: Context) -> ParsedAnswer | None:
    """Rule 4: sentences that hedge but name one option (``I think ... option (F) ...``)."""
    named: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
        if not _HEDGED_SENTENCE.search(sentence):
            continue
        mentions = list(_NAMED_OPTION.finditer(sentence))
        letters = {next(g for g in m.groups() if g).upper() for m in mentions}
        if not letters:
            continue
        before, after = sentence[: mentions[0].start()], sentence[mentions[-1].end() :]
        if len(letters) > 1 or _NEGATION.search(before) or _REJECTED.search(after):
            return ParsedAnswer("unparsed", how="hedged sentence names several options or rejects one")
        named |= letters
    if not named:
        return None
    chosen = valid(sorted(named), ctx.valid)
    if len(named) > 1 or chosen is None:
        return ParsedAnswer("unparsed", how="hedged sentences disagree" if len(named) > 1 else "letter out of range")
    return ParsedAnswer("ok", chosen, how="hedged sentence")


_ANSWER_PREFIX = re.compile(r"^(?:the\s+)?(?:answer|correct\s+option)\s*(?:is|:)\s*", re.I)
_TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
# words that may follow an option's text named in a sentence ("... a football, because", "... a book and ...");
# any other word makes it part of a longer phrase ("a football field" is not the option "a football")
_PHRASE_END = frozenset(
    "and or nor then but because since as so which that who while when where also both is are was were be "
    "in on at of from with to for by here there now too".split()
)


def _named(option_words: list[str], tokens: list[str]) -> bool:
    """Whether ``tokens`` (words and punctuation) name the option whose words are ``option_words`` as a phrase
    of its own: followed by the end, punctuation (not ``-`` or an apostrophe) or a word of :data:`_PHRASE_END`.

    >>> _named(["a", "football"], _TOKEN.findall("it looks like a football field"))
    False
    >>> _named(["a", "football"], _TOKEN.findall("it looks like a football, i think"))
    True
    """
    positions = [i for i, token in enumerate(tokens) if token[0].isalnum()]
    words = [tokens[i] for i in positions]
    size = len(option_words)
    for start in range(len(words) - size + 1):
        if words[start : start + size] != option_words:
            continue
        after = positions[start + size - 1] + 1
        following = tokens[after] if after < len(tokens) else None
        if following is None or following in _PHRASE_END or not (following[0].isalnum() or following in "-'’"):
            return True
    return False


def echoed(text: str, ctx: Context) -> frozenset[str] | None:
    said = _norm(_ANSWER_PREFIX.sub("", text))
    if not said:
        return None
    normed = [_norm(option) for option in ctx.options]
    for index, option in enumerate(normed):
        if option and said == option:
            return frozenset(ctx.valid[index])
    if _NEGATION.search(text):
        return None
    tokens = _TOKEN.findall(_ANSWER_PREFIX.sub("", text).lower())
    found = [i for i, option in enumerate(normed) if option and _named(option.split(), tokens)]
    found = [i for i in found if not any(i != j and normed[i] in normed[j] for j in found)]
    if not found or (len(found) > 1 and not ctx.multi):
        return None
    leftover = said
    for i in found:
        leftover = leftover.replace(normed[i], " ")
    if ctx.multi and len(leftover.split()) > 4:
        return None
    return frozenset(ctx.valid[i] for i in found)


def after_reasoning(raw: str) -> str | None:
    """The text after the last ``</think>``; None when a trace was opened and never closed."""
    lowered = raw.lower()
    if "</think>" in lowered:
        return raw[lowered.rindex("</think>") + len("</think>") :]
    if "<think>" in lowered:
        return None
    return raw


def letter_layout(text: str, ctx: Context) -> ParsedAnswer | None:
    """Rule 5 and "B is the correct answer": a leading ``C.`` or ``(B)`` whose text agrees with its option."""
    after = {m.group(1) for m in _LETTER_THEN_CUE.finditer(text)}
    letters = valid(list(after), ctx.valid) if len(after) == 1 else None
    if letters:
        return ParsedAnswer("ok", letters, how="letter is correct")
    leading = _LEADING.match(text)
    letters = valid([leading.group(1)], ctx.valid) if leading else None
    if leading and letters and len(set(_ITEM_LINE.findall(text))) > 1:
        return ParsedAnswer("unparsed", how="options listed, none chosen")
    if leading and letters:
        if not _agrees(leading.group(1), text[leading.end() :].split("\n")[0], ctx):
            return ParsedAnswer("unparsed", how="letter and option text disagree")
        return ParsedAnswer("ok", letters, how="leading letter")
    return None


RULES: tuple[tuple[str, Callable[[str, Context], ParsedAnswer | None]], ...] = (
    ("letter list", whole_list),
    ("answer cue", cue_reading),
    ("hedged sentence", hedged),
    ("letter layout", letter_layout),
)
