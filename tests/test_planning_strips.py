"""STRIPS parsing and open-world simulation on hand-made sequences and on the released questions."""

from __future__ import annotations

import pytest

from backend.planning.catalog import load_catalog
from backend.planning.questions import list_questions
from backend.planning.strips import check_candidate, distractor_report, simulate, strips_table
from tests.conftest import VILPACT_DATA
from tests.planning_helpers import planning_context


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return planning_context(tmp_path_factory.mktemp("strips"), VILPACT_DATA)


@pytest.fixture(scope="module")
def kb(ctx):
    catalog = load_catalog(ctx.database)
    return catalog, strips_table(catalog), {cid: c.object for cid, c in catalog.classes.items()}


def test_121_classes_carry_strips_and_quirks_parse(kb):
    catalog, table, _ = kb
    assert len(table) == 121
    assert table["c108"].add == (("CapacityIncreased", ("to",)),)  # leading '*' dropped
    assert table["c009"].bindings["to"] == "table"  # 'to=Table'
    assert table["c001"].bindings["x"] == "clothes"
    assert table["c150"].ground(table["c150"].pre) == [("Person", ("person",))]  # 'x' of Run(P,at) is unbound
    assert "x" not in table["c156"].bindings  # empty args


def test_a_valid_sequence(kb):
    _, table, objects = kb
    # take a book, open it, read it, close it, put it somewhere
    steps = simulate(["c030", "c027", "c032", "c025", "c028"], table, objects)
    assert [s.status for s in steps] == ["ok"] * 5


def test_a_sequence_that_violates_a_precondition(kb):
    catalog, table, objects = kb
    # put the book down, then throw it: InHand(person, book) was deleted by the put
    check = check_candidate(["c030", "c028"], ["c031"], table, objects)
    assert check.status == "violation" and check.first_violation == 0
    assert check.contradicted == ("InHand(person,book)",)
    assert "Throwing a book somewhere" in check.describe(catalog)
    # standing up twice: IsSitting(person) was deleted by the first
    assert check_candidate([], ["c154", "c154"], table, objects).first_violation == 1


def test_classes_without_strips_are_unknown_never_violations(kb):
    _, table, objects = kb
    # holding a book (no STRIPS) between putting it down and throwing it: the put's effect on the book is forgotten
    check = check_candidate(["c030", "c028"], ["c026", "c031"], table, objects)
    assert check.status == "unknown" and check.unknown_steps == 1
    assert [s.status for s in simulate(["c026", "c153"], table, objects)] == ["unknown", "unknown"]


def test_released_distractor_count(ctx):
    report = distractor_report(list_questions(ctx.database, ("released",)), load_catalog(ctx.database))
    assert report["distractors"] == 2550
    assert report["distractors_not_executable"] == 179
    assert report["answers_not_executable"] == 87
