"""The extraction checked against ViLPAct's release (issue 30 §4): every released sequence becomes a Charades-format
row with distractor actions (backend/vilpact/fixture.py), Algorithm 1 runs on it, and the share of videos whose
released sequence comes back exactly is printed, with the released layout's agreement (which released rows
follow the observed-window rule).

    .venv/bin/python benchmarks/charades_recovery.py [--release ../shared/data/vilpact/data] [--every 1]

``--every 10`` takes every 10th released row, as tests/data/charades/ does. Settings (``COMPSTUDIO_EXTRACT_*``)
apply, so the same command measures another reading of Algorithm 1.
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

from backend.settings import load_settings  # noqa: E402
from backend.vilpact.charades import CharadesFiles, read_classes  # noqa: E402
from backend.vilpact.charades_pool import build_extractor  # noqa: E402
from backend.vilpact.extraction import extract_sequence  # noqa: E402
from backend.vilpact.fixture import check_set, recovery  # noqa: E402
from backend.vilpact.layout import release_agreement  # noqa: E402
from backend.vilpact.tasks import load_task_map  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "vilpact" / "data"
MAPPING = ROOT / "tests" / "data" / "charades"  # Charades' object, verb and mapping files (from ViLPAct's utils.py)


def default_release() -> Path:
    for candidate in (SHARED, Path("/work/shared/data/vilpact/data"), ROOT / "assets" / "vilpact"):
        if (candidate / "gt_act_seq" / "all_gt_seq.csv").is_file():
            return candidate
    raise SystemExit("no ViLPAct release found: pass --release DIR")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", type=Path, default=None, help="ViLPAct's data/ folder")
    parser.add_argument("--every", type=int, default=1, help="take every n-th released row")
    args = parser.parse_args()
    release = args.release or default_release()
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
