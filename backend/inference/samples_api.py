"""What the Samples view and its JSON endpoints call: each function checks the caller's role (reviewers and up,
as Results) and returns plain JSON (:mod:`backend.inference.samples`, :mod:`backend.inference.samples_detail`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backend.accounts.auth import require_role
from backend.errors import ValidationError
from backend.inference import samples
from backend.inference.samples_detail import compare_runs, detail

if TYPE_CHECKING:
    from backend.context import AppContext

VIEW_ROLE = "reviewer"


def resolve_run(
    ctx: AppContext,
    run_id: int | str | None = None,
    model: str | None = None,
    benchmark: str | None = None,
    load_options: dict[str, Any] | None = None,
) -> samples.SampleRun:
    """A run by its id, else the newest finished run of ``model`` on ``benchmark`` (with exactly ``load_options``
    when given; None: any)."""
    if run_id not in (None, ""):
        try:
            return samples.get_run(ctx.database, int(str(run_id)))
        except ValueError:
            raise ValidationError(f"a run id is a number, not {run_id!r}") from None
    if model and benchmark:
        return samples.find_run(ctx.database, model, ctx.benchmarks.canonical(benchmark), load_options)
    raise ValidationError("choose a run (or name a model and a benchmark)")


def runs(ctx: AppContext, username: str | None, model: str | None = None, benchmark: str | None = None) -> list[dict]:
    """The stored runs, newest first."""
    require_role(ctx.database, username, VIEW_ROLE)
    return [r.as_dict() for r in samples.list_runs(ctx.database, model or None, ctx.benchmarks.canonical(benchmark))]


def samples_page(
    ctx: AppContext,
    username: str | None,
    run_id: int | str | None = None,
    *,
    model: str | None = None,
    benchmark: str | None = None,
    load_options: dict[str, Any] | None = None,
    filter: str = "all",  # noqa: A002 (the endpoint's parameter name)
    category: str = "",
    search: str = "",
    page: int = 1,
    page_size: int = 50,
    with_counts: bool = True,
) -> dict[str, Any]:
    """One page of a run's samples, with the counts of every filter unless ``with_counts`` is False
    (:func:`backend.inference.samples.page`)."""
    from backend.humans.samples import people_on_items

    user = require_role(ctx.database, username, VIEW_ROLE)
    run = resolve_run(ctx, run_id, model, benchmark, load_options)
    query = samples.SampleQuery(filter or "all", category or "", search or "", int(page or 1), int(page_size or 50))
    people = people_on_items(ctx.database, run.benchmark, user.username)  # never the items they wrote or verified
    return samples.page(ctx, run.run_id, query, with_counts, people).as_dict()


def sample(ctx: AppContext, username: str | None, run_id: int | str | None, item_id: str) -> dict[str, Any]:
    """One sample as the model saw it (:func:`backend.inference.samples_detail.detail`)."""
    from backend.humans.samples import people_on_items

    user = require_role(ctx.database, username, VIEW_ROLE)
    if not item_id:
        raise ValidationError("choose an item")
    run = resolve_run(ctx, run_id)
    found = detail(ctx, run.run_id, item_id).as_dict()
    on = people_on_items(ctx.database, run.benchmark, user.username).get(found["sample"]["base_id"])
    return found | {"people": on.as_dict() if on is not None else None}


def samples_vs(
    ctx: AppContext,
    username: str | None,
    run_id: int | str | None,
    other: int | str | None = None,
    *,
    vs_model: str | None = None,
    page: int = 1,
    page_size: int = 50,
) -> dict[str, Any]:
    """Two runs item by item: the items only one got right, with the counts (``other`` a run id, or
    ``vs_model``: that model's newest finished run with the same benchmark and load options)."""
    require_role(ctx.database, username, VIEW_ROLE)
    run = resolve_run(ctx, run_id)
    if other in (None, "") and not vs_model:
        raise ValidationError("choose the run to compare with")
    second = (
        resolve_run(ctx, other)
        if other not in (None, "")
        else resolve_run(ctx, None, vs_model, run.benchmark, run.load_options or {})
    )
    return compare_runs(ctx, run.run_id, second.run_id, int(page or 1), int(page_size or 50)).as_dict()
