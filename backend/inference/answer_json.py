"""Answers a model gave as JSON: where they are in its output and which field holds the answer.

Models asked for structured output, or trained on it, answer ``{"answer": "D"}``, ``{"answers": ["A", "C"]}``,
a bare list ``["A", "C"]``, the same inside a Markdown code block (```` ```json ... ``` ````), or after some
reasoning text. :func:`json_answers` finds them without guessing:

* a code block is read whole (``json``, ``JSON`` or no language tag); elsewhere each ``{`` or ``[`` is tried
  as the start of a JSON document (:meth:`json.JSONDecoder.raw_decode`, strict JSON only);
* an object counts when it has an answer field (:data:`ANSWER_KEYS`, case and ``-``/space insensitive), at
  the top level or one object down (``{"response": {"answer": "B"}}``);
* a bare list counts only when it is the whole answer, a whole code block, or ends the output (a list
  quoted in the middle of a sentence is not an answer).

What the value means (letters, option text, a refusal) is decided by :mod:`backend.inference.parsing`, with
the same rules as any other answer: this module only finds the values.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: fields that hold the answer, in order of preference when an object has several
ANSWER_KEYS: tuple[str, ...] = (
    "answer",
    "answers",
    "final_answer",
    "correct_answer",
    "correct_answers",
    "correct_option",
    "correct_options",
    "choice",
    "choices",
    "selected_option",
    "selected_options",
    "selected",
    "selection",
    "option",
    "letter",
    "letters",
    "prediction",
)
_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON)?[ \t]*\n?(.*?)```", re.S)
_DECODER = json.JSONDecoder()
_TRAILING = re.compile(r"[\s.!]*")


@dataclass(frozen=True)
class JsonAnswer:
    """One answer found: its ``value``, the ``key`` it was under (None for a bare list), ``where`` it was
    (``code block``, ``whole answer`` or ``in text``) and its ``span`` in the text searched."""

    value: Any
    key: str | None
    where: str
    span: tuple[int, int]


@dataclass(frozen=True)
class JsonFound:
    """The JSON answers of an output, the spans of all its JSON documents, and the text around them."""

    answers: tuple[JsonAnswer, ...]
    documents: tuple[tuple[int, int], ...]
    rest: str

    @property
    def only_json(self) -> bool:
        """True when nothing but JSON documents (in code blocks or not) was written."""
        return bool(self.documents) and not re.sub(r"[\s`.]", "", self.rest)


def _key(name: str) -> str:
    return re.sub(r"[\s-]+", "_", name.strip().lower())


def answer_field(document: Any) -> tuple[str, Any] | None:
    """The answer field of a decoded document: ``(key, value)``, or None when it has none.

    >>> answer_field({"reasoning": "...", "Final Answer": "B"})
    ('final_answer', 'B')
    >>> answer_field({"response": {"answer": ["A", "C"]}})
    ('answer', ['A', 'C'])
    >>> answer_field({"colour": "red"}) is None
    True
    """
    if not isinstance(document, dict):
        return None
    fields = {_key(str(name)): value for name, value in document.items()}
    for key in ANSWER_KEYS:
        if key in fields:
            return key, fields[key]
    for value in document.values():
        if isinstance(value, dict):
            inner = answer_field(value)
            if inner is not None:
                return inner
    return None


def _documents(text: str, offset: int = 0) -> list[tuple[Any, int, int]]:
    """Every JSON object or list in ``text`` (decoded, start, end), left to right, none inside another."""
    found: list[tuple[Any, int, int]] = []
    index = 0
    while True:
        starts = [p for p in (text.find("{", index), text.find("[", index)) if p >= 0]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        if isinstance(value, (dict, list)):
            found.append((value, offset + start, offset + end))
        index = end


def json_answers(text: str) -> JsonFound:
    """The JSON answers in ``text`` (see the module docstring), with the spans of all its JSON documents.

    >>> [a.value for a in json_answers('The cup is red, so: {"answer": "C"}').answers]
    ['C']
    >>> found = json_answers('```json\\n["A", "C"]\\n```')
    >>> [(a.value, a.where) for a in found.answers], found.only_json
    ([(['A', 'C'], 'code block')], True)
    >>> json_answers('Both ["A"] and ["B"] look right, I pick C.').answers
    ()
    """
    answers: list[JsonAnswer] = []
    documents: list[tuple[int, int]] = []
    for fence in _FENCE.finditer(text):
        try:
            value = json.loads(fence.group(1))
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            documents.append((fence.start(), fence.end()))
            answers += _as_answers(value, "code block", (fence.start(), fence.end()), whole=True)
            continue
        for doc, start, end in _documents(fence.group(1), fence.start(1)):  # not one document: each inside
            documents.append((start, end))
            answers += _as_answers(doc, "code block", (start, end), whole=False)
    outside = _FENCE.sub(lambda m: " " * len(m.group(0)), text)  # the same length: spans index ``text``
    for doc, start, end in _documents(outside):
        documents.append((start, end))
        last = _TRAILING.fullmatch(outside[end:]) is not None
        where = "whole answer" if last and not outside[:start].strip() else "in text"
        answers += _as_answers(doc, where, (start, end), whole=last)
    documents.sort()
    pieces, position = [], 0
    for start, end in documents:
        pieces.append(text[position:start])
        position = end
    pieces.append(text[position:])
    answers.sort(key=lambda a: a.span)
    return JsonFound(tuple(answers), tuple(documents), " ".join(pieces))


def _as_answers(document: Any, where: str, span: tuple[int, int], whole: bool) -> list[JsonAnswer]:
    field = answer_field(document)
    if field is not None:
        return [JsonAnswer(field[1], field[0], where, span)]
    if isinstance(document, list) and whole:
        return [JsonAnswer(document, None, where, span)]
    return []
