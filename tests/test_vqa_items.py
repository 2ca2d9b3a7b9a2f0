"""VQA items: validation messages, the composite and probing builders, import/export round trips and
malformed imports that import nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from backend.errors import ImportFileError, MediaError, ValidationError
from backend.vqa.demo import DEMO_FILE, ensure_vqa_demo
from backend.vqa.images import build_composite, compose_images, media_path, store_image
from backend.vqa.io import export_items, import_items
from backend.vqa.items import list_items, make_item
from backend.vqa.probing import build_probing

ASSET_IMAGES = DEMO_FILE.parent / "images"


def _problems(**changes):
    fields = (
        dict(
            category="Object Perception",
            question="What is it?",
            options=["a cat", "a dog"],
            answer="A",
            choice_type="single",
            images=["x.png"],
        )
        | changes
    )
    with pytest.raises(ValidationError) as err:
        make_item(**fields)
    return err.value.problems


def test_validation_names_each_problem():
    assert _problems(options=["only one"]) == ["an item needs at least two options; it has 1"]
    assert _problems(options=["a cat", "a cat"]) == ['option texts must be unique: "a cat" appears 2 times']
    assert _problems(answer="") == ["mark at least one option as correct"]
    assert _problems(answer="AB") == ["a single-choice question has exactly one correct option; 2 are marked (A, B)"]
    assert _problems(answer="C") == ["correct letter(s) C are not among the options (A, B)"]
    assert "unknown category 'Colours'" in _problems(category="Colours")[0]
    assert len(_problems(question="", options=[], answer="")) == 3
    assert make_item(
        category="Prob", question="q", options=["a", "b", "c"], answer="c,a", choice_type="indefinite", images=["x.png"]
    ).answer == ("A", "C")


def test_composite_two_side_by_side_and_four_in_a_grid():
    red, blue = Image.new("RGB", (60, 40), "red"), Image.new("RGB", (40, 60), "blue")
    two = compose_images([red, blue], cell=100)
    assert two.width > 2 * 100 and two.height < 200  # one row: Left | Right
    assert two.getpixel((50, 50))[0] > 200 and two.getpixel((150, 50))[2] > 200
    four = compose_images([red, blue, red, blue], cell=100)
    assert four.width == two.width and four.height > 2 * 100  # two rows of two
    label_strip = four.crop((8, 108, 108, 152)).convert("L")
    assert min(label_strip.getdata()) < 100  # a dark label is drawn beneath the first image


def test_build_composite_is_stored_under_media_and_refuses_escapes(settings):
    first = store_image(settings, ASSET_IMAGES / "coffee.jpg")
    second = store_image(settings, ASSET_IMAGES / "chelsea.jpg")
    assert store_image(settings, ASSET_IMAGES / "coffee.jpg") == first
    composite = build_composite(settings, [first, second])
    assert media_path(settings, composite).is_file()
    assert build_composite(settings, [first]) is None
    with pytest.raises(MediaError):
        media_path(settings, "../compstudio.db")


def test_store_image_rejects_a_non_image(settings, tmp_path):
    bogus = tmp_path / "notes.png"
    bogus.write_text("not an image")
    with pytest.raises(MediaError, match="not a readable image"):
        store_image(settings, bogus)


def test_probing_builder_keys_the_true_captions():
    true, conflict = ["t1", "t2", "t3", "t4"], ["c1", "c2", "c3", "c4"]
    for x in (1, 2, 3, 4):
        draft = build_probing(true, conflict, true_count=x, seed=x)
        assert len(draft.options) == 4 and len(set(draft.options)) == 4
        keyed = {draft.options["ABCD".index(letter)] for letter in draft.answer}
        assert len(keyed) == x and keyed <= set(true)
        assert set(draft.options) - keyed <= set(conflict)
    assert 1 <= build_probing(true, conflict, seed=5).true_count <= 4
    with pytest.raises(ValidationError, match="needs 3 conflicting"):
        build_probing(true, ["c1"], true_count=1)


def test_demo_items_cover_every_category(ctx):
    assert ensure_vqa_demo(ctx) >= 13 and ensure_vqa_demo(ctx) == 0
    items = list_items(ctx.database)
    from backend.vqa.categories import CATEGORIES

    assert {i.category for i in items} == set(CATEGORIES)
    assert {len(i.images) for i in items} >= {1, 2, 4}
    assert any(i.choice_type == "indefinite" for i in items)


@pytest.mark.parametrize("fmt", ["released", "jsonl"])
def test_export_then_import_reproduces_the_items(ctx, tmp_path, fmt):
    ensure_vqa_demo(ctx)
    before = list_items(ctx.database)
    export_items(ctx.database, ctx.settings, tmp_path / "out", fmt)
    from backend.context import build_context

    other = build_context(ctx.settings.replace(data_dir=tmp_path / "other"))
    source = tmp_path / "out" if fmt == "released" else tmp_path / "out" / "items.jsonl"
    assert import_items(other.database, other.settings, source, fmt)["imported"] == len(before)
    after = list_items(other.database)
    fields = ("id", "category", "question", "options", "answer", "choice_type", "provenance", "status")
    assert [[getattr(i, f) for f in fields] for i in after] == [[getattr(i, f) for f in fields] for i in before]
    assert [len(i.images) for i in after] == [len(i.images) for i in before]
    assert [i.composite is None for i in after] == [i.composite is None for i in before]


def _released(tmp_path: Path, records: list[dict], images: int | None = None) -> Path:
    folder = tmp_path / "rel"
    (folder / "images").mkdir(parents=True)
    (folder / "questions.json").write_text(json.dumps(records))
    for index in range(len(records) if images is None else images):
        shutil.copyfile(ASSET_IMAGES / "coffee.jpg", folder / "images" / f"{index + 1:03d}.jpg")
    return folder


GOOD = {
    "question": "What is on the saucer?",
    "options": {"A": "a spoon", "B": "a fork"},
    "answer": "A",
    "category": "Obj-P",
}


@pytest.mark.parametrize(
    "records, images, message",
    [
        ([GOOD, GOOD | {"answer": "C"}], None, "question 2: correct letter(s) C are not among the options (A, B)"),
        ([GOOD | {"options": {}}], None, "question 1: an item needs at least two options; it has 0"),
        ([GOOD | {"id": "x1"}, GOOD | {"id": "x1"}], None, "question 2: duplicate id 'x1' (also question 1)"),
        ([GOOD, GOOD], 1, "2 questions but 1 images in images/"),
        ([GOOD | {"source_images": ["gone.jpg"]}], None, "question 1: image gone.jpg is missing"),
    ],
)
def test_malformed_released_import_names_the_problem_and_imports_nothing(ctx, tmp_path, records, images, message):
    with pytest.raises(ImportFileError) as err:
        import_items(ctx.database, ctx.settings, _released(tmp_path, records, images), "released")
    assert message in str(err.value) and "Nothing was imported" in str(err.value)
    assert list_items(ctx.database) == []
    assert not (ctx.settings.media_dir / "vqa").exists()


def test_malformed_jsonl_import_names_the_line(ctx, tmp_path):
    path = tmp_path / "items.jsonl"
    good = {"category": "Prob", "question": "q", "options": ["a", "b"], "answer": "A", "images": ["missing.jpg"]}
    path.write_text(json.dumps(good) + "\nnot json\n")
    with pytest.raises(ImportFileError, match="line 2: not valid JSON"):
        import_items(ctx.database, ctx.settings, path, "jsonl")
    path.write_text(json.dumps(good) + "\n")
    with pytest.raises(ImportFileError, match="line 1: image missing.jpg is missing"):
        import_items(ctx.database, ctx.settings, path, "jsonl")
    assert list_items(ctx.database) == []


def test_import_refuses_ids_that_already_exist(ctx, tmp_path):
    ensure_vqa_demo(ctx)
    with pytest.raises(ImportFileError, match="an item with id 'demo-obj-p' already exists"):
        import_items(ctx.database, ctx.settings, DEMO_FILE, "jsonl")
