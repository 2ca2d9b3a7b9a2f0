"""The report's charts, drawn by hand: one layout of plain shapes, rendered twice, as SVG text and as a PNG
through Pillow (matplotlib is not a dependency; docs/decisions.md, "Report charts without matplotlib").

Two kinds of chart:

* :class:`BarChart`: grouped bars, one group per category and one bar per series inside it (per-category
  scores of several runs beside the random row; option-count distributions);
* :class:`IntervalChart`: one row per label, a dot at the value and a whisker from the low to the high end
  of its 95% interval, one dot per series (plain and circular accuracy).

Every bar is an SVG ``<rect class="bar" data-series=".." data-category=".." data-value="..">`` and every
interval a ``<g class="interval" ...>``, so a test (or a script) can read the figures back from the SVG.

>>> chart = BarChart("Scores", ("a", "b"), (("run", (50.0, 25.0)),))
>>> svg = to_svg(layout_bars(chart))
>>> svg.count('class="bar"'), svg.startswith("<svg")
(2, True)
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#9d755d", "#bab0ac")
PNG_SCALE = 2  # a PNG is drawn at twice the SVG's size, so its text stays sharp
FONT = "DejaVu Sans, Arial, sans-serif"
AXIS, GRID, INK = "#444444", "#dddddd", "#222222"


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    data: tuple[tuple[str, str], ...] = ()  # data-* attributes: marks a bar when not empty


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = AXIS
    width: float = 1.0


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    size: float = 11
    anchor: str = "middle"  # start | middle | end (vertically always centred)
    bold: bool = False


@dataclass(frozen=True)
class Interval:
    """A dot at ``x`` with a whisker from ``low`` to ``high`` (all in pixels) at height ``y``."""

    x: float
    low: float
    high: float
    y: float
    fill: str
    data: tuple[tuple[str, str], ...] = ()


Shape = Rect | Line | Label | Interval


@dataclass(frozen=True)
class Figure:
    width: int
    height: int
    title: str
    shapes: tuple[Shape, ...]


@dataclass(frozen=True)
class BarChart:
    title: str
    categories: Sequence[str]
    series: Sequence[tuple[str, Sequence[float | None]]]  # (name, one value per category; None: no bar)
    y_max: float = 100.0
    y_label: str = "%"


@dataclass(frozen=True)
class IntervalPoint:
    label: str
    series: str
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class IntervalChart:
    title: str
    points: Sequence[IntervalPoint]
    x_max: float = 100.0
    x_label: str = "accuracy (%), 95% interval"


def _legend(names: Sequence[str], left: float, top: float, width: float) -> tuple[list[Shape], float]:
    """Swatches and names in rows across ``width``; returns the shapes and the height used."""
    shapes: list[Shape] = []
    x, y = left, top + 8
    for index, name in enumerate(names):
        item = 22 + 6.5 * len(name) + 16
        if x + item > left + width and x > left:
            x, y = left, y + 18
        shapes.append(Rect(x, y - 6, 12, 12, PALETTE[index % len(PALETTE)]))
        shapes.append(Label(x + 17, y, name, 11, "start"))
        x += item
    return shapes, (y - top) + 14 if names else 0.0


def _ticks(top: float, bottom: float, left: float, right: float, y_max: float) -> list[Shape]:
    shapes: list[Shape] = []
    for step in range(5):
        value = y_max * step / 4
        y = bottom - (bottom - top) * step / 4
        shapes.append(Line(left, y, right, y, GRID if step else AXIS))
        shapes.append(Label(left - 6, y, f"{value:g}", 10, "end"))
    return shapes


def layout_bars(chart: BarChart) -> Figure:
    """Grouped bars on a 0..``y_max`` axis; a value above ``y_max`` is drawn at the top."""
    series = list(chart.series)
    longest = max((len(c) for c in chart.categories), default=4)
    group = max(16.0 * len(series) + 14, 6.5 * longest + 10, 40.0)
    left, right = 56.0, 16.0
    width = int(max(480.0, left + group * len(chart.categories) + right))
    legend, legend_h = _legend([name for name, _ in series], left, 30, width - left - right)
    top = 34 + legend_h + 8
    bottom = top + 220
    shapes: list[Shape] = [*legend, *_ticks(top, bottom, left, width - right, chart.y_max)]
    shapes.append(Label(left - 6, top - 12, chart.y_label, 10, "end"))
    bar_w = (group - 12) / max(len(series), 1)
    for c_index, category in enumerate(chart.categories):
        x0 = left + group * c_index + 6
        shapes.append(Label(x0 + (group - 12) / 2, bottom + 14, category, 10))
        for s_index, (name, values) in enumerate(series):
            value = values[c_index]
            if value is None:
                continue
            h = (bottom - top) * min(max(value, 0.0), chart.y_max) / chart.y_max
            data = (("series", name), ("category", category), ("value", f"{value:g}"))
            shapes.append(Rect(x0 + s_index * bar_w, bottom - h, bar_w - 1, h, PALETTE[s_index % len(PALETTE)], data))
    shapes.append(Line(left, bottom, width - right, bottom))
    return Figure(width, int(bottom + 32), chart.title, tuple(shapes))


def layout_intervals(chart: IntervalChart) -> Figure:
    """One row per label (in first-seen order), its series' dots stacked inside the row."""
    labels = list(dict.fromkeys(p.label for p in chart.points))
    names = list(dict.fromkeys(p.series for p in chart.points))
    left = 14 + 6.5 * max((len(label) for label in labels), default=4)
    width, right = int(max(560.0, left + 420)), 20.0
    legend, legend_h = _legend(names, left, 30, width - left - right)
    top = 34 + legend_h + 10
    row = 10.0 + 12 * len(names)
    bottom = top + row * len(labels)
    scale = (width - right - left) / chart.x_max
    shapes: list[Shape] = [*legend]
    for step in range(5):
        x = left + (width - right - left) * step / 4
        shapes += [
            Line(x, top, x, bottom, GRID if step else AXIS),
            Label(x, bottom + 12, f"{chart.x_max * step / 4:g}", 10),
        ]
    shapes.append(Label((left + width - right) / 2, bottom + 28, chart.x_label, 10))

    def at(value: float) -> float:
        return left + scale * min(max(value, 0.0), chart.x_max)

    for r_index, label in enumerate(labels):
        y0 = top + row * r_index
        shapes.append(Label(left - 6, y0 + row / 2, label, 10, "end"))
        for point in (p for p in chart.points if p.label == label):
            s_index = names.index(point.series)
            data: tuple[tuple[str, str], ...] = (("label", label), ("series", point.series))
            data += (("value", f"{point.value:g}"), ("low", f"{point.low:g}"), ("high", f"{point.high:g}"))
            fill = PALETTE[s_index % len(PALETTE)]
            y = y0 + 11 + 12 * s_index
            shapes.append(Interval(at(point.value), at(point.low), at(point.high), y, fill, data))
    return Figure(width, int(bottom + 40), chart.title, tuple(shapes))


_ANCHOR_SVG = {"start": "start", "middle": "middle", "end": "end"}
_ANCHOR_PIL = {"start": "lm", "middle": "mm", "end": "rm"}


def _data_attrs(data: tuple[tuple[str, str], ...]) -> str:
    return "".join(f" data-{key}={quoteattr(value)}" for key, value in data)


def _svg_shape(shape: Shape) -> str:
    if isinstance(shape, Rect):
        kind = ' class="bar"' if shape.data else ""
        return (
            f'<rect{kind} x="{shape.x:.1f}" y="{shape.y:.1f}" width="{shape.w:.1f}" height="{shape.h:.1f}" '
            f'fill="{shape.fill}"{_data_attrs(shape.data)}/>'
        )
    if isinstance(shape, Line):
        return (
            f'<line x1="{shape.x1:.1f}" y1="{shape.y1:.1f}" x2="{shape.x2:.1f}" y2="{shape.y2:.1f}" '
            f'stroke="{shape.stroke}" stroke-width="{shape.width:g}"/>'
        )
    if isinstance(shape, Label):
        weight = ' font-weight="bold"' if shape.bold else ""
        return (
            f'<text x="{shape.x:.1f}" y="{shape.y:.1f}" font-size="{shape.size:g}" text-anchor="'
            f'{_ANCHOR_SVG[shape.anchor]}" dominant-baseline="central"{weight}>{escape(shape.text)}</text>'
        )
    return (
        f'<g class="interval"{_data_attrs(shape.data)}><line x1="{shape.low:.1f}" y1="{shape.y:.1f}" '
        f'x2="{shape.high:.1f}" y2="{shape.y:.1f}" stroke="{shape.fill}" stroke-width="2"/>'
        f'<circle cx="{shape.x:.1f}" cy="{shape.y:.1f}" r="4" fill="{shape.fill}"/></g>'
    )


def to_svg(figure: Figure) -> str:
    """A standalone SVG document (UTF-8 text)."""
    body = "\n".join(_svg_shape(s) for s in figure.shapes)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{figure.width}" height="{figure.height}" '
        f'viewBox="0 0 {figure.width} {figure.height}" font-family="{FONT}" fill="{INK}">\n'
        f"<title>{escape(figure.title)}</title>\n"
        f'<rect x="0" y="0" width="{figure.width}" height="{figure.height}" fill="#ffffff"/>\n'
        f'<text x="{figure.width / 2:.1f}" y="16" font-size="14" font-weight="bold" text-anchor="middle" '
        f'dominant-baseline="central">{escape(figure.title)}</text>\n{body}\n</svg>\n'
    )


def to_png(figure: Figure, scale: int = PNG_SCALE) -> bytes:
    """The same figure as PNG bytes, ``scale`` times the SVG's size (Pillow's bundled font)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (figure.width * scale, figure.height * scale), "white")
    draw = ImageDraw.Draw(image)
    fonts: dict[float, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}

    def font(size: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        if size not in fonts:
            fonts[size] = ImageFont.load_default(size=size * scale)
        return fonts[size]

    s = scale
    draw.text((figure.width * s / 2, 16 * s), figure.title, fill=INK, font=font(14), anchor="mm")
    for shape in figure.shapes:
        if isinstance(shape, Rect):
            draw.rectangle(
                [shape.x * s, shape.y * s, (shape.x + shape.w) * s, (shape.y + shape.h) * s], fill=shape.fill
            )
        elif isinstance(shape, Line):
            draw.line(
                [shape.x1 * s, shape.y1 * s, shape.x2 * s, shape.y2 * s], fill=shape.stroke, width=int(shape.width * s)
            )
        elif isinstance(shape, Label):
            draw.text(
                (shape.x * s, shape.y * s),
                shape.text,
                fill=INK,
                font=font(shape.size),
                anchor=_ANCHOR_PIL[shape.anchor],
            )
        else:
            draw.line([shape.low * s, shape.y * s, shape.high * s, shape.y * s], fill=shape.fill, width=2 * s)
            r = 4 * s
            draw.ellipse([shape.x * s - r, shape.y * s - r, shape.x * s + r, shape.y * s + r], fill=shape.fill)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


Chart = BarChart | IntervalChart


def layout(chart: Chart) -> Figure:
    return layout_bars(chart) if isinstance(chart, BarChart) else layout_intervals(chart)
