"""Expert review of intent annotations (rounds, judgments, final intents) and action-sequence inspection."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "review_0001_reviews",
        (
            # One review of one sequence round by one reviewer. The first is the 'decision' (it sets the
            # outcome); later independent ones are 'check' reviews, kept only for reviewer agreement.
            """CREATE TABLE reviews (
                id INTEGER PRIMARY KEY,
                sequence_id TEXT NOT NULL REFERENCES sequences (id),
                round INTEGER NOT NULL,
                reviewer TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('decision', 'check')),
                outcome TEXT CHECK (outcome IN ('accepted', 'returned', 'discarded')),
                note TEXT,
                submitted_at TEXT NOT NULL,
                seconds_spent REAL,
                UNIQUE (sequence_id, round, reviewer)
            )""",
            "CREATE UNIQUE INDEX reviews_one_decision ON reviews (sequence_id, round) WHERE role = 'decision'",
            """CREATE TABLE review_judgments (
                review_id INTEGER NOT NULL REFERENCES reviews (id),
                annotation_id INTEGER NOT NULL REFERENCES annotations (id),
                reasonable INTEGER NOT NULL CHECK (reasonable IN (0, 1)),
                comment TEXT,
                PRIMARY KEY (review_id, annotation_id)
            )""",
            "CREATE INDEX review_judgments_annotation ON review_judgments (annotation_id)",
            # The final dataset: position 1 is the reviewer's selection (maybe edited, originals kept),
            # then the other annotations judged reasonable. origin: 'review' or 'released' (imported dataset).
            """CREATE TABLE final_intents (
                sequence_id TEXT NOT NULL REFERENCES sequences (id),
                position INTEGER NOT NULL,
                concrete_intent TEXT NOT NULL,
                high_level_intent TEXT NOT NULL,
                edited INTEGER NOT NULL DEFAULT 0,
                original_concrete_intent TEXT,
                original_high_level_intent TEXT,
                concrete_from INTEGER REFERENCES annotations (id),
                high_level_from INTEGER REFERENCES annotations (id),
                origin TEXT NOT NULL,
                review_round INTEGER,
                review_id INTEGER REFERENCES reviews (id),
                decided_at TEXT NOT NULL,
                PRIMARY KEY (sequence_id, position)
            )""",
        ),
    ),
    Migration(
        "review_0002_inspection",
        (
            """CREATE TABLE inspections (
                id INTEGER PRIMARY KEY,
                split TEXT,
                size INTEGER NOT NULL,
                seed INTEGER NOT NULL,
                created_by TEXT NOT NULL,
                created_at TEXT NOT NULL
            )""",
            """CREATE TABLE inspection_items (
                inspection_id INTEGER NOT NULL REFERENCES inspections (id),
                position INTEGER NOT NULL,
                sequence_id TEXT NOT NULL REFERENCES sequences (id),
                PRIMARY KEY (inspection_id, sequence_id)
            )""",
            """CREATE TABLE inspection_judgments (
                inspection_id INTEGER NOT NULL REFERENCES inspections (id),
                sequence_id TEXT NOT NULL,
                reviewer TEXT NOT NULL,
                all_occur INTEGER NOT NULL CHECK (all_occur IN (0, 1)),
                in_order INTEGER NOT NULL CHECK (in_order IN (0, 1)),
                none_missing INTEGER NOT NULL CHECK (none_missing IN (0, 1)),
                comment TEXT,
                judged_at TEXT NOT NULL,
                PRIMARY KEY (inspection_id, sequence_id, reviewer)
            )""",
        ),
    ),
    Migration(
        "review_0003_released_rows",
        (
            # Each released all_gt_seq.csv row exactly as the file has it (line end included): the vilpact
            # export writes an unchanged row back byte for byte (backend/vilpact/released_rows.py).
            """CREATE TABLE vilpact_released_rows (
                sequence_id TEXT PRIMARY KEY REFERENCES sequences (id),
                raw TEXT NOT NULL
            )""",
        ),
    ),
    Migration(
        "review_0004_inspection_marks",
        (
            # the reviewer's marks from the player's timeline (issue 27 §5), JSON: {"not_in_video": [i, ...],
            # "out_of_order": [i, ...], "missing_between": bool}, action positions counted from 0
            "ALTER TABLE inspection_judgments ADD COLUMN marks TEXT",
        ),
    ),
]
