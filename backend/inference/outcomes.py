"""The outcomes of reading a model's answer, counted the same way in every report.

Each prediction ends in one of four outcomes: **answered** (the parser read letters or text; status ``ok``),
**refused** (the model declined; ``refusal``), **unparsed** (no reading without guessing; ``unparsed``) or a
failed call (``error``). Refused and unparsed answers count wrong; every report (a run's summary, the
planning and VQA leaderboards, in-context exact match) shows the three apart, with their rates, under
the same names: ``answered``, ``refusals``, ``parse_failures`` (unparsed only), ``errors``, and
``answered_rate``, ``refusal_rate``, ``parse_failure_rate``, ``error_rate``.
"""

from __future__ import annotations

from collections.abc import Iterable

OUTCOME_OF_STATUS = {"ok": "answered", "refusal": "refusals", "unparsed": "parse_failures", "error": "errors"}
RATE_OF = {
    "answered": "answered_rate",
    "refusals": "refusal_rate",
    "parse_failures": "parse_failure_rate",
    "errors": "error_rate",
}


def outcome_counts(statuses: Iterable[str], total: int | None = None) -> dict[str, int | float]:
    """Counts of each outcome among ``statuses`` and their rates: the share of ``total`` (default: the
    number of statuses; pass the number of items when some have no prediction yet), rounded to 4 places.

    >>> outcome_counts(["ok", "ok", "refusal", "unparsed"])  # doctest: +NORMALIZE_WHITESPACE
    {'answered': 2, 'refusals': 1, 'parse_failures': 1, 'errors': 0,
     'answered_rate': 0.5, 'refusal_rate': 0.25, 'parse_failure_rate': 0.25, 'error_rate': 0.0}
    >>> outcome_counts(["ok"], total=4)["answered_rate"]
    0.25
    """
    counts = dict.fromkeys(RATE_OF, 0)
    seen = 0
    for status in statuses:
        counts[OUTCOME_OF_STATUS[status]] += 1
        seen += 1
    denominator = seen if total is None else total
    rates = {RATE_OF[k]: round(v / denominator, 4) if denominator else 0.0 for k, v in counts.items()}
    return {**counts, **rates}


def run_status(items: int, errors: int) -> str:
    """``failed`` when every item failed, ``finished with errors`` when some did, else ``finished``.

    >>> run_status(5, 5), run_status(5, 2), run_status(5, 0), run_status(0, 0)
    ('failed', 'finished with errors', 'finished', 'finished')
    """
    if items and errors >= items:
        return "failed"
    return "finished with errors" if errors else "finished"
