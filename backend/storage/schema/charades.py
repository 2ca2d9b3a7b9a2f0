"""Charades-format videos (issue 30): the raw annotations of each video, imported from ``Charades_v1_*.csv``-shaped
files, from which ViLPAct's Algorithm 1 extracts sequences (backend/vilpact/extraction.py). An accepted
extraction becomes a row of ``sequences`` (source ``charades``) in the intent pool."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "charades_0001_videos",
        (
            # ``actions``: JSON list of [class_id, start_text, end_text] in the file's order (times as written, so
            # the released layout keeps their spelling). The other Charades columns are kept as the file has them.
            """CREATE TABLE charades_videos (
                id TEXT PRIMARY KEY,
                subject TEXT,
                scene TEXT,
                quality TEXT,
                relevance TEXT,
                verified TEXT,
                script TEXT,
                objects TEXT,
                descriptions TEXT,
                actions TEXT NOT NULL,
                length REAL,
                video_path TEXT,
                source_file TEXT NOT NULL,
                imported_at TEXT NOT NULL
            )""",
        ),
    ),
]
