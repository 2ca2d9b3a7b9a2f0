"""Speed of the Charades extraction (issue 30 §6: 10,000 videos' annotations in at most 60 s on this machine).

10,000 Charades-format videos are built from ViLPAct's released sequences with distractors (backend/vilpact/
fixture.py, four seeds over the 2,912 sequences) and written as one CSV. Then, in this process:

* **ours**: ``compstudio vilpact extract`` end to end (``extract_files``: read and check the CSV and the class
  files, Algorithm 1 on every video, write the released layout);
* **plain**: the same greedy search written the obvious way (every candidate's three scores recomputed from its
  class pairs at every step, nothing kept between steps), on the first ``--plain-videos`` videos; it must choose
  the same sequences, and the ratio is per video.

    .venv/bin/python benchmarks/charades_extraction.py [--videos 10000] [--plain-videos 1000]

Wall and CPU seconds are printed with the load average (the machine is shared; CPU seconds are what this
process used).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.settings import load_settings  # noqa: E402
from backend.vilpact.charades import CHARADES_COLUMNS, CharadesFiles, read_classes  # noqa: E402
from backend.vilpact.charades_pool import build_extractor, extract_files  # noqa: E402
from backend.vilpact.extraction import (  # noqa: E402
    ExtractionConfig,
    Relevance,
    TimedAction,
    coherence,
    gap_to_span,
    merge_same_class,
    release_order,
    temporal_relevance,
)
from backend.vilpact.fixture import check_set  # noqa: E402
from backend.vilpact.layout import parse_items  # noqa: E402
from backend.vilpact.tasks import load_task_map  # noqa: E402

FIXTURE = ROOT / "tests" / "data" / "charades"
RELEASE = ROOT / "assets" / "vilpact" / "gt_act_seq" / "all_gt_seq.csv"


def plain_chosen(actions: list[TimedAction], relevance: Relevance, config: ExtractionConfig) -> list[TimedAction]:
    """Algorithm 1 (greedy order ``coherence``) with every score recomputed from scratch: the same-class merge,
    the release's order, and the top-up when the longest sequence is shorter than ``min_actions``."""
    if config.same_class_merge == "pairs":
        actions = merge_same_class(actions)
    ordered = sorted(actions, key=release_order)
    twice = [j for j in range(len(ordered)) if sum(a.class_id == ordered[j].class_id for a in ordered) == 2]
    held = set(twice) if config.repeated_class == "follow" and len(twice) < len(ordered) else set()

    def score_of(j: int, members: list[int]) -> tuple[float, float]:
        start = min(ordered[m].start for m in members)
        end = max(ordered[m].end for m in members)
        temporal = temporal_relevance(gap_to_span(ordered[j], start, end), config.max_gap_s)
        sims = [relevance.semantic.of(ordered[j].class_id, ordered[m].class_id) for m in members]
        semantic = max(sims) if config.semantic_aggregate == "max" else sum(sims) / len(sims)
        task = max(
            relevance.task_relevance(ordered[j].class_id, ordered[m].class_id, config.related_task_score)
            for m in members
        )
        return coherence(semantic, temporal, task, config).coherence, temporal

    def grow(seed: int, top_up: bool) -> tuple[list[int], list[float]]:
        members, joined = [seed], []
        while True:
            short = top_up and len(members) < config.min_actions
            floor = min(config.min_coherence, config.fill_min_coherence) if short else config.min_coherence
            pick: tuple[float, int] | None = None
            for j in range(len(ordered)):
                if j in members or j in held:
                    continue
                score, temporal = score_of(j, members)
                if temporal > 0 and score >= floor - 1e-9 and (pick is None or score > pick[0]):
                    pick = (score, j)
            if pick is None:
                return members, joined
            members.append(pick[1])
            joined.append(pick[0])

    def longest(top_up: bool) -> list[int]:
        best: tuple[tuple[int, float, int], list[int]] | None = None
        for seed in range(len(ordered)):
            if seed in held:
                continue
            members, joined = grow(seed, top_up)
            rank = (len(members), sum(joined) / len(joined) if joined else 0.0, -seed)
            if best is None or rank > best[0]:
                best = (rank, members)
        return best[1] if best else []

    chosen = longest(False)
    if ordered and len(chosen) < config.min_actions and config.fill_min_coherence < config.min_coherence:
        chosen = longest(True)
    if chosen:  # a repeated class joins the finished sequence when coherent with it
        passes = [score_of(j, chosen) for j in sorted(held)]
        chosen = chosen + [
            j for j, (s, t) in zip(sorted(held), passes, strict=True) if t > 0 and s >= config.min_coherence - 1e-9
        ]
    return [ordered[i] for i in sorted(chosen)]


def build_videos(count: int, folder: Path) -> CharadesFiles:
    files = CharadesFiles(
        (folder / "Charades_v1_bench.csv",),
        FIXTURE / "Charades_v1_classes.txt",
        FIXTURE / "Charades_v1_objectclasses.txt",
        FIXTURE / "Charades_v1_verbclasses.txt",
        FIXTURE / "Charades_v1_mapping.txt",
    )
    classes = read_classes(files)
    with RELEASE.open(encoding="utf-8", newline="") as handle:
        released = list(csv.DictReader(handle))
    rows: list[dict[str, str]] = []
    seed = 0
    while len(rows) < count:
        for check in check_set(released, classes.names, load_task_map(), classes.objects, seed=f"bench{seed}"):
            rows.append({**check.row, "id": f"{check.row['id']}-{seed}"})
        seed += 1
    with files.videos[0].open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(CHARADES_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows[:count])
    return files


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--videos", type=int, default=10_000)
    parser.add_argument("--plain-videos", type=int, default=1_000)
    args = parser.parse_args()
    settings = load_settings()
    with tempfile.TemporaryDirectory(prefix="charades-bench-") as tmp:
        files = build_videos(args.videos, Path(tmp))
        load_before = os.getloadavg()
        wall, cpu = time.perf_counter(), time.process_time()
        summary = extract_files(files, Path(tmp) / "sequences.csv", settings)
        ours_wall, ours_cpu = time.perf_counter() - wall, time.process_time() - cpu

        with files.videos[0].open(encoding="utf-8", newline="") as handle:
            sample = [(r["id"], parse_items(r["actions"])) for r in list(csv.DictReader(handle))[: args.plain_videos]]
        classes = read_classes(files)
        extractor = build_extractor(settings, classes.names, classes.objects)
        from backend.vilpact.extraction import extract_sequence

        cpu = time.process_time()
        fast = [extract_sequence(v, a, extractor.relevance, extractor.config).chosen for v, a in sample]
        fast_cpu = time.process_time() - cpu
        cpu = time.process_time()
        plain = [plain_chosen(a, extractor.relevance, extractor.config) for _v, a in sample]
        plain_cpu = time.process_time() - cpu
        same = sum(1 for f, p in zip(fast, plain, strict=True) if list(f) == p)
    print(
        json.dumps(
            {
                "videos": summary["videos"],
                "kept": summary["kept"],
                "end_to_end_wall_s": round(ours_wall, 2),
                "end_to_end_cpu_s": round(ours_cpu, 2),
                "target_s": 60,
                "load_average_before": [round(x, 2) for x in load_before],
                "cores": os.cpu_count(),
                "plain_videos": len(sample),
                "plain_cpu_s": round(plain_cpu, 2),
                "ours_cpu_s_same_videos": round(fast_cpu, 2),
                "speedup": round(plain_cpu / fast_cpu, 1) if fast_cpu else None,
                "same_choices": f"{same}/{len(sample)}",
            },
            indent=2,
        )
    )
    return 0 if same == len(sample) else 1


if __name__ == "__main__":
    raise SystemExit(main())
