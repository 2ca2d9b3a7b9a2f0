"""Write ``assets/charades/tasks_fitted.json``: the hand-authored task map (``assets/charades/tasks.json``) fitted to
ViLPAct's released sequences of its 1,919 training videos (backend/vilpact/task_fit.py, docs/decisions.md).

    .venv/bin/python scripts/fit_charades_tasks.py --charades ../shared/data/charades/Charades_v1_actions.csv \\
        [--release ../shared/data/vilpact/data]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.vilpact.charades import read_class_names, read_videos  # noqa: E402
from backend.vilpact.release_check import read_rows, released_videos  # noqa: E402
from backend.vilpact.task_fit import FitConfig, fit_task_map  # noqa: E402
from backend.vilpact.tasks import BUNDLED_TASKS, FITTED_TASKS, load_task_map, task_map_json  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--charades", type=Path, required=True)
    parser.add_argument("--release", type=Path, default=ROOT.parent / "shared" / "data" / "vilpact" / "data")
    args = parser.parse_args()
    names = read_class_names(args.release / "Charades_v1_classes.txt")
    train = {r["video_id"] for r in read_rows(args.release / "dataset-split" / "train.csv")}
    rows = read_rows(args.release / "gt_act_seq" / "all_gt_seq.csv")
    videos = released_videos(read_videos([args.charades], names), rows, train)
    config = FitConfig()
    fitted = fit_task_map([v.labelled() for v in videos], load_task_map(str(BUNDLED_TASKS)), config)
    about = {
        "_about": "ViLPAct's task map for Algorithm 1: CompStudio's hand-authored map (tasks.json) fitted to the "
        f"released sequences of the {len(videos)} training videos of ViLPAct's split, on the real Charades "
        "annotations (backend/vilpact/task_fit.py; scripts/fit_charades_tasks.py wrote it).",
        "_fit": json.dumps(config.__dict__),
        "_licence": "CC0 (CompStudio); the class ids are Charades' (ViLPAct release, Apache-2.0).",
    }
    FITTED_TASKS.write_text(json.dumps(task_map_json(fitted, about), indent=1) + "\n", encoding="utf-8")
    changed = {
        c: (t, fitted.task_of[c])
        for c, t in load_task_map(str(BUNDLED_TASKS)).task_of.items()
        if fitted.task_of[c] != t
    }
    print(json.dumps({"videos": len(videos), "tasks": len(set(fitted.task_of.values())), "moved": changed}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
