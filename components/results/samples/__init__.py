"""The Samples view of the Results tab (reviewers and admins): any stored run item by item (pages.py), one item as
the model saw it (item.py), and two runs side by side (compare.py); their text in text.py.

Handlers are thin over :mod:`backend.inference.samples_api` (which checks the caller's role). Everything a model
said or a person wrote reaches the page as plain text (text boxes, table cells) or escaped Markdown
(:func:`components.common.esc`). The JSON endpoints (``results_sample_runs``, ``results_samples``,
``results_sample``, ``results_samples_vs``) are in components/results/api.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from components.events import wire
from components.results.samples import compare, item, pages

INTRO = (
    "Any stored run item by item: what each item's model answered, how that was read, and its score. "
    "Filter the wrong, unparsed, refused or inconsistent items, search the outputs, open one to see the "
    "prompt, the images or frames the model got, and the parse trace; compare two runs item by item."
)


@dataclass(frozen=True)
class SamplesPanel:
    tab: gr.Tab
    page: pages.PagePanel
    item: item.ItemPanel
    vs: compare.VsPanel


def build_samples_panel(ctx: AppContext) -> SamplesPanel:
    """The Samples sub-tab (call inside the Results tab's ``gr.Tabs``)."""
    with gr.Tab("Samples", id="results-samples") as tab:
        gr.Markdown(INTRO)
        page = pages.layout()
        one = item.layout()
        vs = compare.layout()
    wire(
        ctx, [*pages.events(ctx, page, tab, vs.other), *item.events(ctx, one, page), *compare.events(ctx, vs, page.run)]
    )
    return SamplesPanel(tab, page, one, vs)
