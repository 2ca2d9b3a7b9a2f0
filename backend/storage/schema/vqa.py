"""MMComposition-style compositional VQA: items, the author permission, verifications, human answers,
runs with their predictions (models, blind models, imported), and difficulty votes."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "vqa_0001_items",
        (
            # options: JSON list of option texts, lettered A, B, ... in order; answer: JSON sorted letters.
            # images: JSON list of paths relative to settings.media_dir; composite: the one image shown to models.
            """CREATE TABLE vqa_items (
                id TEXT PRIMARY KEY,
                category TEXT NOT NULL,
                question TEXT NOT NULL,
                options TEXT NOT NULL,
                answer TEXT NOT NULL,
                choice_type TEXT NOT NULL CHECK (choice_type IN ('single', 'indefinite')),
                images TEXT NOT NULL,
                composite TEXT,
                provenance TEXT NOT NULL CHECK (provenance IN ('written', 'synthesized', 'imported')),
                status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'verified', 'rejected')),
                disputed INTEGER NOT NULL DEFAULT 0,
                difficulty_level TEXT CHECK (difficulty_level IN ('super_hard', 'hard', 'medium', 'easy')),
                author TEXT NOT NULL,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL
            )""",
            "CREATE INDEX vqa_items_category ON vqa_items (category, status)",
            # Extra rights beside the role: 'author' lets an annotator write and edit draft items.
            """CREATE TABLE vqa_permissions (
                username TEXT NOT NULL,
                permission TEXT NOT NULL CHECK (permission IN ('author')),
                granted_by TEXT NOT NULL,
                granted_at TEXT NOT NULL,
                PRIMARY KEY (username, permission)
            )""",
            """CREATE TABLE vqa_verifications (
                id INTEGER PRIMARY KEY,
                item_id TEXT NOT NULL REFERENCES vqa_items (id),
                verifier TEXT NOT NULL,
                decision TEXT NOT NULL CHECK (decision IN ('accept', 'edit', 'reject', 'resolve_accept',
                                                           'resolve_reject')),
                compositional INTEGER,
                key_correct INTEGER,
                note TEXT,
                changes TEXT,
                submitted_at TEXT NOT NULL,
                UNIQUE (item_id, verifier, decision)
            )""",
            """CREATE TABLE vqa_answers (
                id INTEGER PRIMARY KEY,
                item_id TEXT NOT NULL REFERENCES vqa_items (id),
                annotator TEXT NOT NULL,
                answer TEXT NOT NULL,
                submitted_at TEXT NOT NULL,
                UNIQUE (item_id, annotator)
            )""",
            # kind: 'model' (images given), 'blind' (question and options only), 'imported' (a predictions file).
            """CREATE TABLE vqa_runs (
                id TEXT PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN ('model', 'blind', 'imported')),
                model TEXT,
                image_mode TEXT,
                created_by TEXT NOT NULL,
                created_at TEXT NOT NULL
            )""",
            """CREATE TABLE vqa_predictions (
                run_id TEXT NOT NULL REFERENCES vqa_runs (id),
                item_id TEXT NOT NULL REFERENCES vqa_items (id),
                answer TEXT NOT NULL,
                raw TEXT,
                answered_at TEXT NOT NULL,
                PRIMARY KEY (run_id, item_id)
            )""",
            # One vote per (item, panel model): did the model answer the item fully correctly (score 1)?
            """CREATE TABLE vqa_votes (
                item_id TEXT NOT NULL REFERENCES vqa_items (id),
                model TEXT NOT NULL,
                answer TEXT NOT NULL,
                fully_correct INTEGER NOT NULL,
                voted_at TEXT NOT NULL,
                PRIMARY KEY (item_id, model)
            )""",
        ),
    ),
    Migration(
        "vqa_0002_prediction_status",
        (
            # How a run's answer was read (backend/inference/outcomes.py): ok | refusal | unparsed | error.
            # NULL for rows saved before this column and for imported files (ok when letters were given).
            """ALTER TABLE vqa_predictions ADD COLUMN status TEXT
                CHECK (status IN ('ok', 'refusal', 'unparsed', 'error'))""",
        ),
    ),
    Migration(
        "vqa_0003_run_manifest",
        # The run manifest (backend/inference/manifest.py) of the run's latest batch; the leaderboard CSV names it.
        ("ALTER TABLE vqa_runs ADD COLUMN manifest TEXT",),
    ),
]
