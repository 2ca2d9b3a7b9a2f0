"""Images of VQA items: storing uploads under ``settings.media_dir`` and the composite builder of paper
section 3.1.

The paper shows multi-image samples to models as ONE image: two images "side by side" labelled "Left" and
"Right" beneath each sub-image; more than two in a grid labelled "Image 1" ... "Image n". Stored paths are
relative to the media folder, the only folder the web server serves; :func:`media_path` refuses any path
that would leave it.
"""

from __future__ import annotations

import hashlib
import math
import shutil
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, UnidentifiedImageError

from backend.errors import MediaError
from backend.settings import Settings

IMAGE_FORMATS = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "GIF": ".gif", "BMP": ".bmp"}
UPLOAD_DIR = "vqa/images"
COMPOSITE_DIR = "vqa/composites"
LABEL_HEIGHT = 44
CELL = 384
GAP = 8


def media_path(settings: Settings, relative: str) -> Path:
    """The absolute path of a stored media path, refusing anything outside the media folder."""
    root = settings.media_dir.resolve()
    path = (root / relative).resolve()
    if root not in path.parents:
        raise MediaError(f"image path {relative!r} is outside the media folder")
    return path


def image_format(path: Path) -> str:
    """The Pillow format name of a readable image file, else MediaError."""
    try:
        with Image.open(path) as image:
            image.verify()
            fmt = image.format or ""
    except Image.DecompressionBombError:
        raise MediaError(
            f"{Path(path).name} has too many pixels (over {Image.MAX_IMAGE_PIXELS:,}); resize it"
        ) from None
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as exc:  # PIL reports a broken PNG as SyntaxError
        raise MediaError(f"{Path(path).name} is not a readable image ({exc})") from None
    if fmt not in IMAGE_FORMATS:
        raise MediaError(f"{Path(path).name} is a {fmt} image; use {', '.join(IMAGE_FORMATS)}")
    return fmt


def store_image(settings: Settings, source: Path | str) -> str:
    """Copy an uploaded image into the media folder, named by its content hash (storing twice is a no-op).

    Returns the path relative to the media folder.
    """
    source = Path(source)
    if not source.is_file():
        raise MediaError(f"image file {source} does not exist")
    fmt = image_format(source)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:20]
    relative = f"{UPLOAD_DIR}/{digest}{IMAGE_FORMATS[fmt]}"
    target = media_path(settings, relative)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return relative


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _fit(image: Image.Image, width: int, height: int) -> Image.Image:
    """The image scaled to fit ``width`` x ``height`` (aspect kept), centred on white."""
    image = image.convert("RGB")
    scale = min(width / image.width, height / image.height)
    resized = image.resize(
        (max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.Resampling.LANCZOS
    )
    canvas = Image.new("RGB", (width, height), "white")
    canvas.paste(resized, ((width - resized.width) // 2, (height - resized.height) // 2))
    return canvas


def composite_labels(count: int) -> list[str]:
    """The labels beneath the sub-images (paper section 3.1).

    >>> composite_labels(2), composite_labels(3)
    (['Left', 'Right'], ['Image 1', 'Image 2', 'Image 3'])
    """
    if count < 2:
        raise MediaError("a composite needs at least two images")
    return ["Left", "Right"] if count == 2 else [f"Image {i}" for i in range(1, count + 1)]


def grid_shape(count: int) -> tuple[int, int]:
    """(columns, rows): two images side by side; more in a near-square grid.

    >>> grid_shape(2), grid_shape(3), grid_shape(4), grid_shape(5)
    ((2, 1), (2, 2), (2, 2), (3, 2))
    """
    if count == 2:
        return 2, 1
    columns = math.ceil(math.sqrt(count))
    return columns, math.ceil(count / columns)


def compose_images(images: Sequence[Image.Image], cell: int = CELL) -> Image.Image:
    """One labelled composite of two or more images (each fitted into a ``cell`` x ``cell`` box)."""
    labels = composite_labels(len(images))
    columns, rows = grid_shape(len(images))
    width = columns * cell + (columns + 1) * GAP
    height = rows * (cell + LABEL_HEIGHT) + (rows + 1) * GAP
    canvas = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(canvas)
    font = _font(LABEL_HEIGHT * 2 // 3)
    for index, (image, label) in enumerate(zip(images, labels, strict=True)):
        x = GAP + (index % columns) * (cell + GAP)
        y = GAP + (index // columns) * (cell + LABEL_HEIGHT + GAP)
        canvas.paste(_fit(image, cell, cell), (x, y))
        draw.text((x + cell / 2, y + cell + LABEL_HEIGHT / 2), label, fill="black", font=font, anchor="mm")
    return canvas


def build_composite(settings: Settings, images: Sequence[str]) -> str | None:
    """The composite for stored images (None for a single image), saved under the media folder.

    Named by the hash of its inputs, so rebuilding the same composite reuses the file.
    """
    if len(images) < 2:
        return None
    digest = hashlib.sha256("\n".join(images).encode()).hexdigest()[:20]
    relative = f"{COMPOSITE_DIR}/{digest}.jpg"
    target = media_path(settings, relative)
    if not target.exists():
        opened = []
        for rel in images:
            try:
                opened.append(Image.open(media_path(settings, rel)))
            except (OSError, UnidentifiedImageError) as exc:
                raise MediaError(f"cannot read image {rel!r} for the composite ({exc})") from None
        target.parent.mkdir(parents=True, exist_ok=True)
        compose_images(opened).save(target, "JPEG", quality=90)
        for image in opened:
            image.close()
    return relative
