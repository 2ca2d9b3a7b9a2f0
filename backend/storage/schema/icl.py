"""In-context example sets (CoFe): example banks and test sets, one row per JSONL line."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "icl_0001_sets_items",
        (
            # A named set of input/output pairs: ``kind`` bank (examples to choose from) or tests (test cases).
            """CREATE TABLE icl_sets (
                name TEXT PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN ('bank', 'tests')),
                source TEXT,
                items INTEGER NOT NULL,
                fingerprint TEXT NOT NULL,
                created_by TEXT NOT NULL,
                created_at TEXT NOT NULL
            )""",
            # ``line`` is the 0-based line number in the imported file: the ids that ``selected`` refers to.
            # Trees are the JSON supplied in the file (NULL: parsed with the COGS grammars).
            """CREATE TABLE icl_items (
                set_name TEXT NOT NULL REFERENCES icl_sets (name) ON DELETE CASCADE,
                line INTEGER NOT NULL,
                input TEXT NOT NULL,
                output TEXT NOT NULL,
                category TEXT NOT NULL DEFAULT '',
                input_tree TEXT,
                output_tree TEXT,
                PRIMARY KEY (set_name, line)
            )""",
            "CREATE INDEX icl_items_category ON icl_items (set_name, category)",
        ),
    ),
]
