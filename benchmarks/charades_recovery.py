"""The extraction checked against ViLPAct's release.

On the real Charades annotations (issue 39): Algorithm 1 runs on every annotated action of ViLPAct's 1,919
training videos, and exact recovery, action precision and action recall are printed in 5-fold cross-validation
(the task map refitted on the other four folds, backend/vilpact/task_fit.py) and on all of them (the bundled map,
fitted on all of them), with what each setting contributes (the chosen reading with one setting changed, in
cross-validation), and the released layout (times, observed window) of every recovered video:

    .venv/bin/python benchmarks/charades_recovery.py --charades ../shared/data/charades/Charades_v1_actions.csv

Without ``--charades`` (issue 30 §4): every released sequence becomes a Charades-format row with synthetic
distractor actions (backend/vilpact/fixture.py). ``--every 10`` takes every 10th released row, as
tests/data/charades/ does. Settings (``COMPSTUDIO_EXTRACT_*``) apply, so the same command measures another
reading of Algorithm 1.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dataclasses import replace  # noqa: E402

from backend.settings import Settings, load_settings  # noqa: E402
from backend.vilpact.charades import CharadesFiles, CharadesVideo, read_classes, read_videos  # noqa: E402
from backend.vilpact.charades_pool import Extractor, build_extractor  # noqa: E402
from backend.vilpact.extraction import ExtractionConfig, Relevance, extract_sequence  # noqa: E402
from backend.vilpact.fixture import check_set, recovery  # noqa: E402
from backend.vilpact.layout import LAYOUT_COLUMNS, release_agreement  # noqa: E402
from backend.vilpact.release_check import Measure, ReleasedVideo, folds, measure, read_rows, released_videos  # noqa: E402
from backend.vilpact.task_fit import FitConfig, fit_task_map  # noqa: E402
from backend.vilpact.tasks import BUNDLED_TASKS, load_task_map  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "vilpact" / "data"
MAPPING = ROOT / "tests" / "data" / "charades"  # Charades' object, verb and mapping files (from ViLPAct's utils.py)


def default_release() -> Path:
    for candidate in (SHARED, Path("/work/shared/data/vilpact/data"), ROOT / "assets" / "vilpact"):
        if (candidate / "gt_act_seq" / "all_gt_seq.csv").is_file():
            return candidate
    raise SystemExit("no ViLPAct release found: pass --release DIR")


#: What each setting contributes: the chosen reading with one setting changed (name, settings changed).
ABLATIONS: tuple[tuple[str, dict[str, object]], ...] = (
    ("hand-authored task map (no fit)", {"task_map": "hand"}),
    ("fitted map: task merges only (no class moves)", {"task_map": "merges"}),
    ("no same-class merge (extract_same_class_merge = none)", {"extract_same_class_merge": "none"}),
    ("no top-up (extract_fill_min_coherence = 1)", {"extract_fill_min_coherence": 1.0}),
    ("repeated classes searched like any action (extract_repeated_class = count)", {"extract_repeated_class": "count"}),
    ("no related tasks (extract_related_task_score = 0)", {"extract_related_task_score": 0.0}),
    ("semantic weight 1 (extract_semantic_weight)", {"extract_semantic_weight": 1.0}),
    ("temporal weight 1 (extract_temporal_weight)", {"extract_temporal_weight": 1.0}),
    ("max gap 10 s (extract_max_gap_s)", {"extract_max_gap_s": 10.0}),
    ("time-order search (extract_greedy_order = time)", {"extract_greedy_order": "time"}),
    (
        "issue 30's reading: weights 1/1/1, coherence 0.6, gap 20 s, hand map, no merge, no top-up, repeats counted",
        {
            "task_map": "hand",
            "extract_semantic_weight": 1.0,
            "extract_temporal_weight": 1.0,
            "extract_min_coherence": 0.6,
            "extract_max_gap_s": 20.0,
            "extract_same_class_merge": "none",
            "extract_fill_min_coherence": 1.0,
            "extract_repeated_class": "count",
        },
    ),
)


def real_report(charades: Path, release: Path, settings: Settings, k: int) -> dict[str, object]:
    """Algorithm 1 on the real annotations of the training videos: cross-validated, on all, and ablated."""
    started = time.perf_counter()
    classes = read_classes(
        CharadesFiles(
            (),
            release / "Charades_v1_classes.txt",
            MAPPING / "Charades_v1_objectclasses.txt",
            MAPPING / "Charades_v1_verbclasses.txt",
            MAPPING / "Charades_v1_mapping.txt",
        )
    )
    train = {r["video_id"] for r in read_rows(release / "dataset-split" / "train.csv")}
    rows = read_rows(release / "gt_act_seq" / "all_gt_seq.csv")
    videos = released_videos(read_videos([charades], classes.names), rows, train)
    extractor = build_extractor(settings, classes.names, classes.objects)
    semantic = extractor.relevance.semantic
    hand = load_task_map(str(BUNDLED_TASKS))
    parts = folds(videos, k)
    labelled = [[v.labelled() for v in part] for part in parts]
    fitted = {
        kind: [
            fit_task_map([v for g, part in enumerate(labelled) if g != f for v in part], hand, config) for f in range(k)
        ]
        for kind, config in (("fitted", FitConfig()), ("merges", replace(FitConfig(), rounds=0)))
    }
    fit_s = time.perf_counter() - started

    def cross_validated(changes: dict[str, object]) -> Measure:
        config = ExtractionConfig.from_settings(
            replace(settings, **{n: v for n, v in changes.items() if n != "task_map"})
        )
        total = Measure(0, 0, 0, 0, 0)
        for f, part in enumerate(parts):
            tasks = hand if changes.get("task_map") == "hand" else fitted[str(changes.get("task_map", "fitted"))][f]
            relevance = Relevance(semantic, tasks, {c: tasks.task(c) for c in classes.names})
            total += measure(part, lambda vid, acts, r=relevance: extract_sequence(vid, acts, r, config).chosen)
        return total

    chosen = cross_validated({})
    run = extractor.run
    on_all = measure(videos, lambda vid, acts: run(CharadesVideo(vid, tuple(acts), "", None, {}, 0)).chosen)
    ablation = {}
    for name, changes in ABLATIONS:
        changed = cross_validated(changes)
        ablation[name] = {**changed.as_dict(), "exact_change": changed.exact - chosen.exact}
    by_id = {v.video_id: v for v in videos}
    recovered = [by_id[vid] for vid in sorted(set(by_id) - set(on_all.failures))]
    return {
        "charades": str(charades),
        "training_videos": len(videos),
        "cross_validated": {"folds": k, **chosen.as_dict()},
        "all_training_videos": on_all.as_dict(),
        "ablation_cross_validated": ablation,
        "released_layout_of_recovered": layout_agreement(recovered, extractor),
        "first_failures": list(on_all.failures[:12]),
        "fit_s": round(fit_s, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }


def layout_agreement(recovered: list[ReleasedVideo], extractor: Extractor) -> dict[str, int]:
    """For each recovered video, whether the extraction's released-layout row equals the release's (times of
    merged actions, observed window), column by column."""
    counts = {"videos": len(recovered), "rows_equal": 0}
    for video in recovered:
        extraction = extractor.run(CharadesVideo(video.video_id, video.actions, "", None, {}, 0))
        row = extractor.row(extraction, video.row["scene"])
        same = [c for c in LAYOUT_COLUMNS if row[c] == video.row[c]]
        counts["rows_equal"] += len(same) == len(LAYOUT_COLUMNS)
        for column in LAYOUT_COLUMNS:
            counts[column] = counts.get(column, 0) + (column in same)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", type=Path, default=None, help="ViLPAct's data/ folder")
    parser.add_argument("--every", type=int, default=1, help="take every n-th released row")
    parser.add_argument("--charades", type=Path, default=None, help="a Charades-format CSV of all annotated actions")
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    release = args.release or default_release()
    if args.charades is not None:
        print(json.dumps(real_report(args.charades, release, load_settings(), args.folds), indent=2))
        return 0
    settings = load_settings()
    files = CharadesFiles(
        (),
        release / "Charades_v1_classes.txt",
        MAPPING / "Charades_v1_objectclasses.txt",
        MAPPING / "Charades_v1_verbclasses.txt",
        MAPPING / "Charades_v1_mapping.txt",
    )
    classes = read_classes(files)
    with (release / "gt_act_seq" / "all_gt_seq.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    agreement = release_agreement(rows, classes.names)
    checks = check_set(
        rows[:: args.every], classes.names, load_task_map(settings.extract_task_map or None), classes.objects
    )
    extractor = build_extractor(settings, classes.names, classes.objects)
    started = time.perf_counter()
    found = recovery(
        checks, lambda vid, acts: extract_sequence(vid, acts, extractor.relevance, extractor.config).chosen
    )
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "release": str(release),
                "check_videos": found.videos,
                "recovered_exactly": found.exact,
                "share": round(found.share, 4),
                "extraction_s": round(seconds, 2),
                "first_failures": found.failures[:12],
                "released_layout": agreement,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
