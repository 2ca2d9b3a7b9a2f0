"""Planning tables: multiple-choice planning questions (ViLPAct) and annotators' checks of their choices.
Model answers live in the shared prediction store (backend/storage/schema/inference.py)."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "planning_0001_questions_checks",
        (
            # One multiple-choice question. ``choices`` is a JSON list of lists of class ids; the names are
            # joined from action_classes when read. ``status``: released (imported from the paper),
            # pending (authored, waiting for annotator validation), validated, rejected.
            """CREATE TABLE planning_questions (
                id TEXT PRIMARY KEY,
                sequence_id TEXT,
                video_id TEXT NOT NULL,
                ob_start_frame INTEGER NOT NULL,
                ob_end_frame INTEGER NOT NULL,
                observed TEXT NOT NULL,
                intent TEXT NOT NULL,
                choices TEXT NOT NULL,
                answer_index INTEGER NOT NULL,
                scene TEXT,
                source TEXT NOT NULL CHECK (source IN ('vilpact', 'authored')),
                status TEXT NOT NULL CHECK (status IN ('released', 'pending', 'validated', 'rejected')),
                created_by TEXT NOT NULL,
                created_at TEXT NOT NULL
            )""",
            "CREATE INDEX planning_questions_status ON planning_questions (status, source)",
            # One annotator's check of one question: the choice they find plausible (at most one),
            # or -1 for "none is plausible". Unique per (question, annotator): a repeated submit is a no-op.
            """CREATE TABLE planning_checks (
                id INTEGER PRIMARY KEY,
                question_id TEXT NOT NULL REFERENCES planning_questions (id),
                annotator TEXT NOT NULL,
                plausible_choice INTEGER NOT NULL CHECK (plausible_choice BETWEEN -1 AND 5),
                round INTEGER NOT NULL DEFAULT 1,
                seconds_spent REAL,
                submitted_at TEXT NOT NULL,
                UNIQUE (question_id, annotator)
            )""",
        ),
    ),
]
