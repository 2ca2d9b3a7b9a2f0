"""Write ``tests/data/charades/Charades_v1_fixture.csv``: the check set of the sequence extraction (issue 30 §4)
for every 10th released ViLPAct sequence (292 videos), built by ``backend/vilpact/fixture.py`` from
``assets/vilpact`` (ViLPAct's release, Apache-2.0). The sequences it should give back are those released rows
(``assets/vilpact/gt_act_seq/all_gt_seq.csv``, the same ids).

``.venv/bin/python scripts/build_charades_fixture.py``; rerun it when the task map or the fixture rules change
(``tests/test_charades_fixture.py`` checks the committed files are what this writes).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.vilpact.charades import CHARADES_COLUMNS, CharadesFiles, read_classes  # noqa: E402
from backend.vilpact.fixture import check_set  # noqa: E402
from backend.vilpact.tasks import BUNDLED_TASKS, load_task_map  # noqa: E402

RELEASE = ROOT / "assets" / "vilpact" / "gt_act_seq" / "all_gt_seq.csv"
FIXTURE = ROOT / "tests" / "data" / "charades"
EVERY = 10


def fixture_files() -> CharadesFiles:
    return CharadesFiles(
        (FIXTURE / "Charades_v1_fixture.csv",),
        FIXTURE / "Charades_v1_classes.txt",
        FIXTURE / "Charades_v1_objectclasses.txt",
        FIXTURE / "Charades_v1_verbclasses.txt",
        FIXTURE / "Charades_v1_mapping.txt",
    )


def released_sample() -> list[dict[str, str]]:
    with RELEASE.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))[::EVERY]


def fixture_texts() -> dict[str, str]:
    """File name -> the text this script writes."""
    import io

    classes = read_classes(fixture_files())
    sample = released_sample()
    checks = check_set(sample, classes.names, load_task_map(str(BUNDLED_TASKS)), classes.objects)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(CHARADES_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(c.row for c in checks)
    return {"Charades_v1_fixture.csv": buffer.getvalue()}


def main() -> None:
    for name, text in fixture_texts().items():
        (FIXTURE / name).write_text(text, encoding="utf-8")
        print(f"{FIXTURE.relative_to(ROOT) / name}: {text.count(chr(10)) - 1} rows, {len(text) / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
