"""Every importer, fed damaged files (hypothesis): it either imports or raises a named error a person can act
on, and an import that fails writes nothing (issue 15, part 3).

Each importer starts from a small valid file cut from what the repository ships (assets/), then one damage is
applied: the file cut short, bytes that are not UTF-8 (or a NUL) dropped in, a line replaced by other text,
a line duplicated (duplicate ids), a field made huge. The property: the import succeeds, or it raises a
:class:`~backend.errors.CompStudioError` whose message names the problem, and the tables it writes hold
exactly what they held before.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.context import build_context
from backend.errors import CompStudioError
from backend.settings import Settings

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


# -- damage -----------------------------------------------------------------------------------------------
@st.composite
def damage(draw) -> Callable[[bytes], bytes]:
    """One way a file arrives broken."""
    kind = draw(st.sampled_from(["truncate", "bytes", "line", "duplicate", "huge", "nul", "empty"]))
    position = draw(st.floats(0, 1))
    junk = draw(st.binary(min_size=1, max_size=12))
    text = draw(st.text(max_size=40))

    def apply(raw: bytes) -> bytes:
        at = int(position * len(raw))
        lines = raw.split(b"\n")
        row = min(int(position * len(lines)), len(lines) - 1)
        if kind == "truncate":
            return raw[:at]
        if kind == "bytes":
            return raw[:at] + b"\xff\xfe" + junk + raw[at:]
        if kind == "nul":
            return raw[:at] + b"\x00" + raw[at:]
        if kind == "line":
            lines[row] = text.encode("utf-8", "surrogatepass")
            return b"\n".join(lines)
        if kind == "duplicate":
            return b"\n".join(lines[: row + 1] + [lines[row]] + lines[row + 1 :])
        if kind == "huge":
            return raw[:at] + b"x" * 300_000 + raw[at:]
        return b""

    apply.__name__ = kind
    return apply


def check(run: Callable[[], object], counts: Callable[[], dict[str, int]]) -> None:
    """The property: success, or a named error with a message and nothing written."""
    before = counts()
    try:
        run()
    except CompStudioError as exc:
        assert str(exc).strip(), "a named error must say what is wrong"
        assert counts() == before, f"a failed import wrote rows: {before} -> {counts()}"


def fresh_ctx(folder: Path):
    return build_context(Settings(data_dir=folder / "data", demo_content=False))


def table_counts(ctx, *tables: str) -> Callable[[], dict[str, int]]:
    return lambda: {t: ctx.database.scalar(f"SELECT count(*) FROM {t}") for t in tables}


# -- ViLPAct release ------------------------------------------------------------------------------------------
def tiny_vilpact(folder: Path, rows: int = 6) -> Path:
    root = folder / "vilpact"
    (root / "gt_act_seq").mkdir(parents=True)
    (root / "dataset-split").mkdir()
    shutil.copy(ASSETS / "vilpact" / "Charades_v1_classes.txt", root)
    source = (ASSETS / "vilpact" / "gt_act_seq" / "all_gt_seq.csv").read_text(encoding="utf-8").splitlines()
    (root / "gt_act_seq" / "all_gt_seq.csv").write_text("\n".join(source[: rows + 1]) + "\n", encoding="utf-8")
    split = (ASSETS / "vilpact" / "dataset-split" / "test.csv").read_text(encoding="utf-8").splitlines()
    (root / "dataset-split" / "test.csv").write_text("\n".join(split[:5]) + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("target", ["gt_act_seq/all_gt_seq.csv", "Charades_v1_classes.txt", "dataset-split/test.csv"])
@FUZZ
@given(broken=damage())
def test_vilpact_release(target, broken):
    from backend.vilpact.importer import import_vilpact

    with tempfile.TemporaryDirectory() as tmp:
        root = tiny_vilpact(Path(tmp))
        path = root / target
        path.write_bytes(broken(path.read_bytes()))
        ctx = fresh_ctx(Path(tmp))
        check(lambda: import_vilpact(ctx.database, root), table_counts(ctx, "sequences", "annotations", "tasks"))


# -- Charades-format annotations -------------------------------------------------------------------------------------
def tiny_charades(folder: Path, rows: int = 6) -> Path:
    root = folder / "charades"
    root.mkdir(parents=True)
    fixture = ROOT / "tests" / "data" / "charades"
    for name in ("classes", "objectclasses", "verbclasses", "mapping"):
        shutil.copy(fixture / f"Charades_v1_{name}.txt", root)
    source = (fixture / "Charades_v1_fixture.csv").read_text(encoding="utf-8").splitlines()
    (root / "Charades_v1_train.csv").write_text("\n".join(source[: rows + 1]) + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "target",
    ["Charades_v1_train.csv", "Charades_v1_classes.txt", "Charades_v1_mapping.txt", "Charades_v1_verbclasses.txt"],
)
@FUZZ
@given(broken=damage())
def test_charades_annotations(target, broken):
    from backend.vilpact.charades import CharadesFiles, import_charades

    with tempfile.TemporaryDirectory() as tmp:
        root = tiny_charades(Path(tmp))
        path = root / target
        path.write_bytes(broken(path.read_bytes()))
        ctx = fresh_ctx(Path(tmp))
        check(
            lambda: import_charades(ctx.database, CharadesFiles.in_folder(root)),
            table_counts(ctx, "charades_videos", "action_classes"),
        )


# -- planning questions ---------------------------------------------------------------------------------------
@FUZZ
@given(broken=damage())
def test_planning_questions(broken):
    import json

    from backend.planning.questions import import_planning
    from backend.vilpact.importer import import_vilpact

    with tempfile.TemporaryDirectory() as tmp:
        ctx = fresh_ctx(Path(tmp))
        import_vilpact(ctx.database, tiny_vilpact(Path(tmp)))
        release = json.loads((ASSETS / "vilpact" / "qa_evaluation" / "planning_evaluate_data.json").read_text())
        root = Path(tmp) / "planning"
        (root / "qa_evaluation").mkdir(parents=True)
        path = root / "qa_evaluation" / "planning_evaluate_data.json"
        small = dict(list(release.items())[:3])
        path.write_bytes(broken(json.dumps(small, indent=1).encode()))
        check(lambda: import_planning(ctx.database, root), table_counts(ctx, "planning_questions", "tasks"))


# -- VQA items -------------------------------------------------------------------------------------------------
@FUZZ
@given(broken=damage())
def test_vqa_jsonl(broken):
    from backend.vqa.io import import_items

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "vqa"
        shutil.copytree(ASSETS / "vqa", folder)
        path = folder / "items.jsonl"
        lines = path.read_bytes().split(b"\n")[:4]
        path.write_bytes(broken(b"\n".join(lines) + b"\n"))
        ctx = fresh_ctx(Path(tmp))
        check(lambda: import_items(ctx.database, ctx.settings, path, "jsonl"), table_counts(ctx, "vqa_items", "tasks"))


# -- in-context banks and test sets ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["bank", "tests"])
@FUZZ
@given(broken=damage())
def test_icl_sets(kind, broken):
    from backend.icl.store import import_set

    source = "example_bank.jsonl" if kind == "bank" else "test_phrareco_like.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / source
        lines = (ASSETS / "icl" / source).read_bytes().split(b"\n")[:12]
        path.write_bytes(broken(b"\n".join(lines) + b"\n"))
        ctx = fresh_ctx(Path(tmp))
        check(
            lambda: import_set(ctx.database, "admin", path, "fuzzed", kind), table_counts(ctx, "icl_sets", "icl_items")
        )


# -- a dataset export, imported back ---------------------------------------------------------------------------------
@FUZZ
@given(broken=damage())
def test_dataset_export_import(broken):
    from backend.review.dataset import export_dataset, import_dataset
    from backend.vilpact.importer import import_vilpact

    with tempfile.TemporaryDirectory() as tmp:
        source = fresh_ctx(Path(tmp) / "source")
        import_vilpact(source.database, tiny_vilpact(Path(tmp)))
        out = Path(tmp) / "export"
        path = Path(export_dataset(source.database, "jsonl", out)["path"])
        path.write_bytes(broken(path.read_bytes()))
        ctx = fresh_ctx(Path(tmp) / "target")
        check(lambda: import_dataset(ctx.database, out), table_counts(ctx, "sequences", "final_intents"))


# -- uploads: paired scores (CSV) and images --------------------------------------------------------------------------
@FUZZ
@given(broken=damage())
def test_paired_scores_csv(broken):
    from backend.review.agreement import wilcoxon_from_csv

    check(lambda: wilcoxon_from_csv(broken(b"model_a,model_b\n0.5,0.4\n0.7,0.6\n0.2,0.3\n0.9,0.5\n0.6,0.6\n")), dict)


@FUZZ
@given(broken=damage())
def test_uploaded_image(broken):
    from PIL import Image

    from backend.vqa.images import store_image

    with tempfile.TemporaryDirectory() as tmp:
        buffer = io.BytesIO()
        Image.new("RGB", (32, 24), (200, 30, 30)).save(buffer, format="PNG")
        path = Path(tmp) / "upload.png"
        path.write_bytes(broken(buffer.getvalue()))
        settings_ = Settings(data_dir=Path(tmp) / "data")

        def stored() -> dict[str, int]:
            folder = settings_.media_dir
            return {"files": sum(1 for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0}

        check(lambda: store_image(settings_, path), stored)


def test_an_image_with_too_many_pixels_is_refused_by_name(tmp_path, monkeypatch):
    from PIL import Image

    from backend.errors import MediaError
    from backend.vqa.images import store_image

    path = tmp_path / "big.png"
    Image.new("RGB", (64, 48)).save(path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 3,072 pixels is over twice the limit: a bomb
    with pytest.raises(MediaError, match="too many pixels"):
        store_image(Settings(data_dir=tmp_path / "data"), path)
    assert not (tmp_path / "data" / "media").exists()
