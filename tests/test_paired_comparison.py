"""`python -m backend compare` for a benchmark without its own reader (in-context, from the prediction store):
paired on the items both models answered, a partial run reported as partial (issue 14, part 3)."""

from __future__ import annotations

from backend.icl.store import import_set
from backend.inference.registry import ModelSpec
from tests.test_icl_build import small_files  # noqa: F401  (the fixture)


def test_in_context_models_compare_on_the_items_both_answered(ctx, small_files, monkeypatch):  # noqa: F811
    from backend.icl.evaluation import evaluate_by_category, load_items
    from backend.inference.paired import compare_stored

    bank, tests = small_files
    import_set(ctx.database, "cli", bank, "bank", "bank")
    import_set(ctx.database, "cli", tests, "phrareco", "tests")
    first = load_items(ctx, n=2)[0]
    for name in ("icl-echo", "icl-refuser"):
        ctx.models.register_model(ModelSpec(name, "python", "inference_helpers:echo_factory"))
    monkeypatch.setenv("ECHO_ANSWER", first.answer)  # right on the first test case only
    evaluate_by_category(ctx, "icl-echo", {"n": 2}, limit=3)
    monkeypatch.setenv("ECHO_ANSWER", "I'm sorry, I cannot answer that.")
    evaluate_by_category(ctx, "icl-refuser", {"n": 2}, limit=2)
    table = compare_stored(ctx, "icl", ["icl-echo", "icl-refuser"], {"n": 2}, samples=100)
    # by hand: echo is right on 1 of its 3; refusals count wrong; on the 2 common items echo is right once,
    # the refuser never: one discordant pair, exact McNemar p = 2 * 0.5 = 1, difference 0.5
    assert table["runs"]["icl-echo"] == {"run": "3 of 5", "n": 3, "accuracy": 0.3333}
    assert table["runs"]["icl-refuser"]["run"] == "2 of 5"
    pair = table["comparison"]["pairs"][0]
    assert table["comparison"]["common_items"] == 2
    assert (pair["a_only_right"], pair["b_only_right"], pair["p_value"], pair["difference"]) == (1, 0, 1.0, 0.5)
