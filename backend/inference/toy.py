"""``toy-colors``: a tiny self-contained benchmark (generated images, no files) for tests, demos and
``benchmarks/inference.py``. Single-choice colour questions on one image, an indefinite-choice question on
two images, a question on video frames, and free-text items."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.request import image, text, video

if TYPE_CHECKING:
    from PIL import Image

    from backend.context import AppContext

COLOURS = {
    "red": (220, 30, 30),
    "green": (30, 180, 60),
    "blue": (40, 60, 220),
    "yellow": (230, 210, 40),
    "black": (10, 10, 10),
    "white": (245, 245, 245),
}
NAMES = tuple(COLOURS)


def _square(colour: str, size: int = 48) -> Image.Image:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (size, size), (128, 128, 128))
    ImageDraw.Draw(img).rectangle([size // 4, size // 4, 3 * size // 4, 3 * size // 4], fill=COLOURS[colour])
    return img


def load_toy_items(ctx: AppContext | None = None, count: int = 24) -> list[EvalItem]:
    """``count`` items, cycling through four kinds; deterministic."""
    items = []
    for index in range(count):
        first, second = NAMES[index % 6], NAMES[(index * 5 + 3) % 6]
        kind = index % 4
        if kind == 0:
            items.append(
                EvalItem(
                    f"toy-{index:03d}",
                    [image(_square(first)), text("What colour is the square?")],
                    NAMES[:4] if first in NAMES[:4] else (*NAMES[:3], first),
                    frozenset("ABCD"[NAMES.index(first)] if first in NAMES[:4] else "D"),
                    meta={"kind": "single"},
                )
            )
        elif kind == 1:
            options = tuple(NAMES)
            answer = frozenset({"ABCDEF"[NAMES.index(first)], "ABCDEF"[NAMES.index(second)]})
            items.append(
                EvalItem(
                    f"toy-{index:03d}",
                    [
                        text("First image:"),
                        image(_square(first)),
                        text("Second image:"),
                        image(_square(second)),
                        text("Which colours appear in the images?"),
                    ],
                    options,
                    answer,
                    multi=True,
                    meta={"kind": "multi"},
                )
            )
        elif kind == 2:
            frames = [_square(first), _square(first), _square(second), _square(second)]
            options = tuple(f"{a} then {b}" for a, b in ((first, second), (second, first), (first, first)))
            items.append(
                EvalItem(
                    f"toy-{index:03d}",
                    [video(frames=frames), text("What happens to the square?")],
                    options,
                    frozenset("A"),
                    meta={"kind": "video"},
                )
            )
        else:
            items.append(
                EvalItem(
                    f"toy-{index:03d}",
                    [text(f"Write the word {first} in capitals.")],
                    answer=first.upper(),
                    meta={"kind": "text"},
                )
            )
    return items


TOY = BenchmarkSpec(
    name="toy-colors",
    description="24 generated colour questions (single, indefinite, video frames, free text). For tests and demos.",
    load_items=load_toy_items,
)
BENCHMARKS = (TOY,)
