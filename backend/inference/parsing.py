"""Turning a model's answer text into option letters, without ever guessing.

Letters run over as many options as the item has (ViLPAct: six, A-F). Single choice gives one letter,
indefinite choice (``multi``) a set of letters. Three outcomes are kept apart everywhere: ``ok`` (answered),
``refusal`` (the model declined) and ``unparsed`` (no reading without guessing); the last two count wrong.

Before any rule: a reasoning trace is dropped, i.e. only the text after the last ``</think>`` is read (a
trace opened with ``<think>`` and never closed is unparsed: the model did not get to its answer), and
Markdown emphasis is removed. Then the rules, in order of precedence; the first that gives a reading wins:

1. explicit answers: JSON answer fields (``{"answer": "D"}``, ``{"answers": ["A", "C"]}``, a bare ``["A", "C"]``,
   in a code block or after reasoning text; :mod:`backend.inference.answer_json` finds them, and their values are
   read by these same rules: a letter, a letter list, an option's text; a number is never taken for a letter), and
   answer markers: ``<answer>C</answer>``, ``\\boxed{C}``, ``Final answer: C`` (the rest of that line, or the
   next line when it is empty). Every JSON answer and marker must give the same reading, else unparsed;
2. the whole answer is a letter list: ``C``, ``(b)``, ``[D].``, ``A, C``, ``A and C``, ``Both B & D``,
   ``AC`` (distinct capitals), ``(B)(D)``, or one letter per line (``- A`` / ``- C``);
3. an answer cue: ``The answer is (C).``, ``Answer: b``, ``Correct options: A, C``, ``I choose D``,
   ``B is the correct answer``; a cue followed by one lettered option per line (``Answers:`` ``(A) ...``
   ``(C) ...``); cues that disagree leave the answer unparsed;
4. a hedged sentence naming one option: ``I think the most plausible future is option (F) because ...``
   (``think``, ``believe``, ``most plausible``, ``best fits`` ... in the sentence, one letter named as
   ``option F`` or ``(F)``, no negation); sentences naming different letters leave it unparsed;
5. a leading letter followed by ``.``, ``)`` or ``:``: ``C. Opening a book``, ``(B) ...``;
6. exactly one bold letter: ``**B**`` (several, for indefinite choice);
7. the option text echoed back (exactly, or as the only option named, without negation, as a phrase of its own:
   "It looks like a football field" does not name the option "a football");
8. otherwise a refusal (``I cannot determine ...``, ``None of the options``) or unparsed.

Wherever a letter comes with option text (``B. drink from cup``), the text must not be another option's
text: a letter and an echoed option that disagree are unparsed. Hedges (``A or C``), letters beyond the
item's options and two different letters both asserted are unparsed. Lower-case letters are accepted only
where they cannot be the article "a" (alone, after a cue, or before punctuation). The table of outputs in
``tests/data/answer_parsing.jsonl`` pins every rule to realistic model outputs.

:func:`trace_choice` and :func:`trace_text` return the reading with its trace: every rule tried, in order, and
what it saw, for the Samples view. The rule that gave a reading is stored with each prediction (``how``); the
steps are derived again from the raw output when shown (the parser is deterministic).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from backend.inference.answer_json import ANSWER_KEYS, JsonFound, json_answers
from backend.inference.answer_rules import (
    BOLD,
    CUE,
    HEDGE,
    LETTERS,
    MARKDOWN,
    NONE_ANSWER,
    REFUSAL,
    RULES,
    Context,
    ParsedAnswer,
    after_reasoning,
    cue_reading,
    echoed,
    letters_for,
    markers,
    read_span,
    valid,
)

__all__ = ["LETTERS", "ParseTrace", "ParsedAnswer", "TraceStep", "letters_for", "parse_choice", "parse_text"]


@dataclass(frozen=True)
class TraceStep:
    """One step of reading an answer: the ``rule`` tried, its ``outcome`` (``read``: it gave the reading;
    ``nothing``: it did not apply; ``note``: something done to the text first) and what it saw (``detail``)."""

    rule: str
    outcome: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "outcome": self.outcome, "detail": self.detail}


@dataclass(frozen=True)
class ParseTrace:
    """How :func:`trace_choice` read an answer: the reading and the steps, in the order the rules ran."""

    result: ParsedAnswer
    steps: tuple[TraceStep, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"result": self.result.as_dict(), "steps": [step.as_dict() for step in self.steps]}


def parse_choice(raw: str, num_options: int, options: Sequence[str] = (), multi: bool = False) -> ParsedAnswer:
    """Parse a multiple-choice answer. Never guesses.

    >>> parse_choice("The answer is (C).", 6).letters
    frozenset({'C'})
    >>> sorted(parse_choice("A, C", 4, multi=True).letters)
    ['A', 'C']
    >>> sorted(parse_choice("(B)(D)", 4, multi=True).letters)
    ['B', 'D']
    >>> parse_choice("<think>A or B? B fits.</think> <answer>B</answer>", 4).letters
    frozenset({'B'})
    >>> parse_choice('```json\\n{"answer": "D"}\\n```', 4).letters
    frozenset({'D'})
    >>> parse_choice("A or C", 4).status
    'unparsed'
    >>> parse_choice("I cannot determine this from the video.", 4).status
    'refusal'
    """
    return trace_choice(raw, num_options, options, multi).result


def trace_choice(raw: str, num_options: int, options: Sequence[str] = (), multi: bool = False) -> ParseTrace:
    """:func:`parse_choice` with its trace: which rule read the answer, or why none could.

    >>> trace = trace_choice("I think option B fits.", 6)
    >>> [(step.rule, step.outcome) for step in trace.steps][-2:], trace.result.how
    ([('answer cue', 'nothing'), ('hedged sentence', 'read')], 'hedged sentence')
    """
    steps: list[TraceStep] = []

    def done(result: ParsedAnswer, rule: str | None = None, detail: str = "") -> ParseTrace:
        if rule is not None:
            steps.append(TraceStep(rule, "read", detail or result.how))
        return ParseTrace(result, tuple(steps))

    answer = after_reasoning(raw or "")
    if answer is None:
        return done(ParsedAnswer("unparsed", how="reasoning never finished"), "reasoning trace", _UNFINISHED)
    if len(answer) != len(raw or ""):
        dropped = len(raw) - len(answer)
        steps.append(TraceStep("reasoning trace", "note", f"only the text after the last </think> is read ({dropped} characters before it)"))  # fmt: skip
    ctx = Context(letters_for(num_options), tuple(options), multi)
    found_json = json_answers(answer)
    marked = _strip_markdown(answer, found_json.documents).strip()
    if not marked:
        return done(ParsedAnswer("unparsed", how="empty"), "empty", "nothing was written")
    explicit = _explicit_readings(found_json, marked, ctx, steps)
    if explicit is not None:
        return done(explicit)
    if found_json.only_json:
        return done(ParsedAnswer("unparsed", how="JSON without an answer field"), "JSON", _fields(found_json))
    text = MARKDOWN.sub("", found_json.rest).strip() if found_json.documents else marked
    if found_json.documents:
        steps.append(TraceStep("JSON", "note", "JSON without an answer field left out: " + _fields(found_json)))
    found = _read_by_rules(answer, text, ctx, steps)
    if found is not None:
        return done(*found)
    return done(ParsedAnswer("unparsed", how="no rule matched"))


def _read_by_rules(
    answer: str, text: str, ctx: Context, steps: list[TraceStep]
) -> tuple[ParsedAnswer, str, str] | None:
    """The rules in order (``RULES``, then a bold letter, the option's text, a refusal): the first reading with
    its rule and detail, or None; each rule that read nothing is added to ``steps``. A hedge between two options
    with no answer cue is read as no answer."""
    if HEDGE.search(text) and not CUE.search(text):
        return ParsedAnswer("unparsed", how="hedge"), "hedge", "two options joined by 'or', and no answer cue"
    for name, rule in RULES:
        found = rule(text, ctx)
        if found is not None:
            return found, name, ""
        steps.append(TraceStep(name, "nothing"))
    bold = {b.upper() for b in BOLD.findall(answer)}
    letters = valid(list(bold), ctx.valid) if len(bold) == 1 or (ctx.multi and bold) else None
    if letters:
        return ParsedAnswer("ok", letters, how="bold"), "bold", f"bold letter(s): {', '.join(sorted(bold))}"
    steps.append(TraceStep("bold", "nothing", f"bold letters: {', '.join(sorted(bold))}" if bold else ""))
    letters = echoed(text, ctx) if ctx.options else None
    if letters:
        return ParsedAnswer("ok", letters, how="option text"), "option text", ""
    steps.append(TraceStep("option text", "nothing", "" if ctx.options else "the item's options were not given"))
    if REFUSAL.search(text) or NONE_ANSWER.match(text):
        return ParsedAnswer("refusal", how="refusal"), "refusal", ""
    steps.append(TraceStep("refusal", "nothing"))
    return None


_UNFINISHED = "a reasoning trace was opened with <think> and never closed: the model did not reach its answer"


def _strip_markdown(answer: str, keep: Sequence[tuple[int, int]]) -> str:
    """Markdown emphasis removed outside the spans in ``keep`` (JSON documents, read verbatim)."""
    pieces, position = [], 0
    for start, end in keep:
        pieces += [MARKDOWN.sub("", answer[position:start]), answer[start:end]]
        position = end
    return "".join([*pieces, MARKDOWN.sub("", answer[position:])])


def _fields(found: JsonFound) -> str:
    return f"{len(found.documents)} JSON document(s), none with a field named {', '.join(ANSWER_KEYS[:3])}, ..."


def _json_value(value: Any, ctx: Context) -> ParsedAnswer:
    """What an answer field holds: a string read like any short answer; a list of them (each a letter or an
    option's text); ``[]`` chose nothing (a refusal). Numbers and other values are not letters: unparsed."""
    if isinstance(value, str):
        reading = read_span(value, ctx) or cue_reading(value, ctx) or read_span(value.split(".")[0], ctx)
        return reading or ParsedAnswer("unparsed", how="unreadable value")
    if isinstance(value, list) and not value:
        return ParsedAnswer("refusal", how="empty list")
    if isinstance(value, list):
        letters: set[str] = set()
        for element in value:
            reading = read_span(element, ctx) if isinstance(element, str) else None
            if reading is None or not reading.ok or not reading.letters:
                return ParsedAnswer("unparsed", how=f"list element {element!r} is not an option")
            letters |= reading.letters
        return ParsedAnswer("ok", frozenset(letters), how="letter list")
    return ParsedAnswer("unparsed", how=f"{type(value).__name__} value, not a letter")


_DISAGREE = {frozenset({"JSON"}): "JSON answers disagree", frozenset({"marker"}): "answer markers disagree"}


def _explicit_readings(found: JsonFound, marked: str, ctx: Context, steps: list[TraceStep]) -> ParsedAnswer | None:
    """Rule 1: JSON answer fields, answer tags, ``\\boxed{}``, ``Final answer:``; every one must agree."""
    readings: list[tuple[str, ParsedAnswer]] = []
    for answer in found.answers:
        reading = _json_value(answer.value, ctx)
        field = f"field {answer.key!r}" if answer.key else "a list"
        readings.append((f"JSON ({answer.where})", reading))
        steps.append(TraceStep("JSON", "note", f"{answer.where}, {field}: {json.dumps(answer.value)[:200]} -> {reading.display()}"))  # fmt: skip
    for span in markers(marked):
        if json_answers(span).answers:  # a marker around JSON: the JSON's reading, already counted above
            continue
        read = read_span(span, ctx) or cue_reading(span, ctx) or read_span(span.split(".")[0], ctx)
        marked_reading = read or ParsedAnswer("unparsed", how="unreadable answer marker")
        readings.append(("answer marker", marked_reading))
        steps.append(TraceStep("answer marker", "note", f"{span.strip()[:200]!r} -> {marked_reading.display()}"))
    if not readings:
        steps.append(TraceStep("JSON and answer markers", "nothing"))
        return None
    if len({(r.status, r.letters) for _, r in readings}) > 1:
        sources = frozenset("JSON" if kind.startswith("JSON") else "marker" for kind, _ in readings)
        how = _DISAGREE.get(sources, "JSON and answer markers disagree")
        steps.append(TraceStep("JSON and answer markers", "read", how))
        return ParsedAnswer("unparsed", how=how)
    kind, reading = readings[0]
    result = ParsedAnswer(reading.status, reading.letters, how=f"{kind}: {reading.how}")
    steps.append(TraceStep("JSON and answer markers", "read", result.how))
    return result


def parse_text(raw: str) -> ParsedAnswer:
    """A free-text answer: the first non-empty line after any reasoning trace, without an ``Answer:``
    prefix or surrounding quotes; a refusal (``I cannot answer this.``) is kept apart. An answer given as JSON
    (``{"answer": "..."}``, :mod:`backend.inference.answer_json`) is that field's text.

    >>> parse_text("Answer: DUST ( SAILOR , BOY , NONE )\\nbecause ...").text
    'DUST ( SAILOR , BOY , NONE )'
    >>> parse_text('{"answer": "EAT ( GIRL , CAKE , NONE )"}').text
    'EAT ( GIRL , CAKE , NONE )'
    >>> parse_text("Sorry, I cannot answer that.").status
    'refusal'
    """
    return trace_text(raw).result


def trace_text(raw: str) -> ParseTrace:
    """:func:`parse_text` with its trace."""
    steps: list[TraceStep] = []
    answer = after_reasoning(raw or "")
    if answer is None:
        steps.append(TraceStep("reasoning trace", "read", _UNFINISHED))
        return ParseTrace(ParsedAnswer("unparsed", how="reasoning never finished"), tuple(steps))
    if len(answer) != len(raw or ""):
        steps.append(TraceStep("reasoning trace", "note", "only the text after the last </think> is read"))
    values = [a.value for a in json_answers(answer).answers]
    if values:
        texts = {v.strip() for v in values if isinstance(v, str)}
        agreed = len(texts) == 1 and all(isinstance(v, str) for v in values) and "" not in texts
        result = (
            ParsedAnswer("ok", text=texts.pop(), how="JSON field")
            if agreed
            else ParsedAnswer("unparsed", how="JSON answers disagree or are not text")
        )
        steps.append(TraceStep("JSON", "read", result.how))
        return ParseTrace(result, tuple(steps))
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    first = (
        re.sub(r"^(?:final\s+)?(?:answer|output)\s*:\s*", "", lines[0], flags=re.I).strip().strip("\"'`")
        if lines
        else ""
    )
    if not first:
        steps.append(TraceStep("first line", "read", "nothing was written"))
        return ParseTrace(ParsedAnswer("unparsed", how="empty"), tuple(steps))
    if REFUSAL.search(first) and not re.search(r"[()=]", first):
        steps.append(TraceStep("refusal", "read", "the first line declines to answer"))
        return ParseTrace(ParsedAnswer("refusal", how="refusal"), tuple(steps))
    steps.append(TraceStep("first line", "read", "the first non-empty line, without an 'Answer:' prefix or quotes"))
    return ParseTrace(ParsedAnswer("ok", text=first, how="first line"), tuple(steps))
