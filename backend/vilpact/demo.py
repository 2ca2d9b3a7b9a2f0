"""Demo content for a fresh start: short generated videos with matching action sequences (source 'demo')
and the 157 Charades action classes (demo accounts: :mod:`backend.accounts.demo`). Idempotent: re-running changes nothing that exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend import assignment
from backend.context import AppContext
from backend.storage import audit, utcnow
from backend.vilpact.demo_video import write_demo_video
from backend.vilpact.sequences import insert_sequences

ASSETS = Path(__file__).resolve().parents[2] / "assets"

# (sequence id, scene, [(class id, start s, end s)]): real Charades classes, invented timings.
DEMO_SEQUENCES: tuple[tuple[str, str, tuple[tuple[str, float, float], ...]], ...] = (
    ("DEMO-WATER", "Kitchen", (("c107", 0.0, 3.0), ("c108", 0.6, 1.8), ("c106", 1.8, 3.4), ("c109", 3.0, 4.0))),
    ("DEMO-BOOK", "Living room", (("c030", 0.0, 1.0), ("c027", 0.8, 1.6), ("c032", 1.4, 3.4), ("c025", 3.2, 4.0))),
    ("DEMO-LIGHT", "Bedroom", (("c008", 0.0, 1.0), ("c097", 0.8, 1.8), ("c104", 1.6, 2.6), ("c006", 2.6, 4.0))),
    ("DEMO-SHOES", "Entryway", (("c056", 0.0, 1.2), ("c053", 0.6, 2.0), ("c055", 1.8, 3.4), ("c097", 3.2, 4.0))),
    ("DEMO-SANDWICH", "Kitchen", (("c069", 0.0, 1.2), ("c067", 0.8, 2.0), ("c065", 1.8, 3.6), ("c068", 3.4, 4.0))),
)
DEMO_DURATION = 4.0


VILPACT = ASSETS / "vilpact"  # ViLPAct's released data/ (Apache-2.0), without the prototype features


def load_classes(path: Path = VILPACT / "Charades_v1_classes.txt") -> dict[str, str]:
    pairs = (line.split(" ", 1) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {cid: name.strip() for cid, name in pairs}


def ensure_demo_content(ctx: AppContext) -> int:
    """Create demo classes, videos and sequences and put the sequences in the intent pool.

    Returns the number of demo sequences created now (0 when they all existed).
    """
    classes = load_classes()
    video_dir = ctx.settings.media_dir / "demo"
    rows = []
    for index, (seq_id, scene, items) in enumerate(DEMO_SEQUENCES):
        video = video_dir / f"{seq_id}.mp4"
        actions: list[dict[str, Any]] = [{"class_id": c, "name": classes[c], "start": s, "end": e} for c, s, e in items]
        if not video.exists():
            write_demo_video(
                video, [(a["name"], a["start"], a["end"]) for a in actions], DEMO_DURATION, 40 + 40 * index
            )
        rows.append((seq_id, json.dumps(actions), scene, str(video.resolve())))
    with ctx.database.write() as db:
        db.conn.executemany("INSERT OR IGNORE INTO action_classes (id, name) VALUES (?, ?)", list(classes.items()))
        created = insert_sequences(
            db.conn,
            [
                {
                    "id": sid,
                    "video_id": sid,
                    "actions": actions,
                    "scene": scene,
                    "split": "demo",
                    "act_seq_start": 0,
                    "act_seq_end": DEMO_DURATION,
                    "ob_start_frame": 0,
                    "ob_end_frame": int(DEMO_DURATION * 24 * 0.2),
                    "video_path": path,
                    "source": "demo",
                    "imported_at": utcnow(),
                }
                for sid, actions, scene, path in rows
            ],
        )
        assignment.add_tasks(db, "intent", [r[0] for r in rows], ctx.settings.annotators_per_sequence)
        if created:
            audit(db, "demo", "demo.create", "sequences", {"created": created})
    return created


def ensure_vilpact_demo(ctx: AppContext) -> dict[str, int]:
    """The released ViLPAct sequences (outside the annotation pool, so the demo pool stays the five demo
    videos) and the 510 planning questions (in the planning check pool), unless already imported."""
    from backend.planning.questions import import_planning
    from backend.vilpact.importer import import_vilpact

    done = {"sequences": 0, "planning_questions": 0}
    if not ctx.database.scalar("SELECT 1 FROM sequences WHERE source = 'vilpact' LIMIT 1"):
        done["sequences"] = import_vilpact(ctx.database, VILPACT, actor="demo", add_to_pool=False).sequences
    if not ctx.database.scalar("SELECT 1 FROM planning_questions LIMIT 1"):
        report = import_planning(
            ctx.database, VILPACT, actor="demo", annotators_per_question=ctx.settings.planning_annotators_per_question
        )
        done["planning_questions"] = report["questions"]
    return done
