"""What a run was asked and what its model saw, for the Samples view (backend/inference/samples.py, seen.py).

The prediction store keys an answer by content (model, benchmark, item, prompt hash, settings hash); these
tables add what the store alone cannot say: which items a run covered (in order, with what the view filters on)
and, per prompt hash, the request as the model got it."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "samples_0001_run_items_prompts",
        (
            # One row per item of an evaluation run, in the run's order: the key of its prediction (with the run's
            # model, benchmark and settings hash), the item across rotations (base_id: a planning question, a VQA
            # item, an in-context test case across settings), the original option shown at each letter
            # (option_order, JSON; NULL: the options as authored), and what the view shows and filters on.
            """CREATE TABLE run_items (
                run_id INTEGER NOT NULL REFERENCES eval_runs (id),
                position INTEGER NOT NULL,
                item_id TEXT NOT NULL,
                prompt_hash TEXT NOT NULL,
                base_id TEXT NOT NULL,
                rotation INTEGER NOT NULL DEFAULT 0,
                rotations INTEGER NOT NULL DEFAULT 1,
                option_order TEXT,
                options TEXT NOT NULL DEFAULT '[]',
                multi INTEGER NOT NULL DEFAULT 0,
                category TEXT NOT NULL DEFAULT '',
                facets TEXT NOT NULL DEFAULT '{}',
                answer_key TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (run_id, position)
            ) WITHOUT ROWID""",
            "CREATE UNIQUE INDEX run_items_item ON run_items (run_id, item_id)",
            "CREATE INDEX run_items_base ON run_items (run_id, base_id)",
            "CREATE INDEX run_items_category ON run_items (run_id, category)",
            # How a run's items were recorded: by the run itself ('run'), or rebuilt later from its options for a
            # run made before runs recorded them ('rebuilt': the items as the benchmark gives them then).
            """CREATE TABLE run_item_sets (
                run_id INTEGER PRIMARY KEY REFERENCES eval_runs (id),
                items INTEGER NOT NULL,
                source TEXT NOT NULL CHECK (source IN ('run', 'rebuilt')),
                recorded_at TEXT NOT NULL
            )""",
            # A request as the model got it, by its prompt hash: ``fingerprint`` is exactly what the hash hashes
            # (texts, media digests, video sampling; backend.inference.request.request_fingerprint), so a record
            # proves itself; prompt_sha256 is that fingerprint's full SHA-256 (the prompt hash is its first 16
            # digits); ``extras`` holds what is shown but not hashed (frame times, file names); media files
            # are kept content-addressed under <media>/seen/ (backend/inference/seen.py).
            # (a rowid table with the small columns first: its rows are large, and a page of samples reads only
            # prompt_sha256, from the covering index)
            """CREATE TABLE prompt_records (
                prompt_hash TEXT NOT NULL UNIQUE,
                prompt_sha256 TEXT NOT NULL,
                created_at TEXT NOT NULL,
                prompt_text TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                extras TEXT NOT NULL DEFAULT '[]'
            )""",
            "CREATE INDEX prompt_records_sha ON prompt_records (prompt_hash, prompt_sha256)",
        ),
    ),
]
