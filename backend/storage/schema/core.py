"""Core tables: accounts, audit log, the annotation pool (tasks, leases, drafts), ViLPAct sequences
and intent annotations."""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "core_0001_accounts_audit",
        (
            """CREATE TABLE users (
                username TEXT PRIMARY KEY,
                role TEXT NOT NULL CHECK (role IN ('annotator', 'reviewer', 'admin')),
                password_hash TEXT,
                disabled INTEGER NOT NULL DEFAULT 0,
                source TEXT NOT NULL DEFAULT 'local',
                created_at TEXT NOT NULL
            )""",
            """CREATE TABLE audit_log (
                id INTEGER PRIMARY KEY,
                at TEXT NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                target TEXT NOT NULL,
                detail TEXT
            )""",
            "CREATE INDEX audit_log_actor ON audit_log (actor, at)",
        ),
    ),
    Migration(
        "core_0002_pool",
        (
            # One row per thing that needs N distinct annotators (kind: 'intent', later 'planning', ...).
            """CREATE TABLE tasks (
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL,
                round INTEGER NOT NULL DEFAULT 1,
                status TEXT NOT NULL DEFAULT 'open',
                needed INTEGER NOT NULL,
                guidance TEXT,
                created_at TEXT NOT NULL,
                PRIMARY KEY (kind, item_id)
            )""",
            "CREATE INDEX tasks_open ON tasks (kind, status)",
            # A lease or its outcome. One row per (task, annotator): nobody gets a task twice.
            """CREATE TABLE assignments (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL,
                round INTEGER NOT NULL,
                annotator TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('leased', 'submitted', 'skipped')),
                leased_at TEXT NOT NULL,
                expires_at TEXT NOT NULL,
                viewed_at TEXT,
                finished_at TEXT,
                skip_reason TEXT,
                UNIQUE (kind, item_id, annotator)
            )""",
            "CREATE INDEX assignments_item ON assignments (kind, item_id, round, status)",
            "CREATE INDEX assignments_annotator ON assignments (annotator, kind, status, finished_at)",
            """CREATE TABLE drafts (
                annotator TEXT NOT NULL,
                kind TEXT NOT NULL,
                item_id TEXT NOT NULL,
                payload TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (annotator, kind, item_id)
            )""",
        ),
    ),
    Migration(
        "core_0003_vilpact",
        (
            """CREATE TABLE action_classes (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                verb TEXT,
                object TEXT,
                strips_action TEXT,
                pre TEXT,
                post_add TEXT,
                post_del TEXT,
                args TEXT,
                pre_acts TEXT,
                nxt_acts TEXT
            )""",
            """CREATE TABLE sequences (
                id TEXT PRIMARY KEY,
                video_id TEXT NOT NULL,
                actions TEXT NOT NULL,
                scene TEXT,
                split TEXT,
                act_seq_start REAL,
                act_seq_end REAL,
                ob_start_frame INTEGER,
                ob_end_frame INTEGER,
                video_path TEXT,
                source TEXT NOT NULL,
                imported_at TEXT NOT NULL
            )""",
            """CREATE TABLE annotations (
                id INTEGER PRIMARY KEY,
                sequence_id TEXT NOT NULL REFERENCES sequences (id),
                annotator TEXT NOT NULL,
                concrete_intent TEXT NOT NULL,
                high_level_intent TEXT NOT NULL,
                round INTEGER NOT NULL DEFAULT 1,
                source TEXT NOT NULL CHECK (source IN ('live', 'imported')),
                submitted_at TEXT NOT NULL,
                seconds_spent REAL,
                UNIQUE (sequence_id, annotator, source)
            )""",
            "CREATE INDEX annotations_annotator ON annotations (annotator, submitted_at)",
        ),
    ),
    Migration(
        "core_0004_task_touched",
        (
            # 1 once a task has been handed out: next_task ranks only these by progress, and takes
            # untouched tasks in order, so choosing a task costs O(tasks in progress), not O(pool).
            "ALTER TABLE tasks ADD COLUMN touched INTEGER NOT NULL DEFAULT 0",
            "UPDATE tasks SET touched = 1 WHERE EXISTS (SELECT 1 FROM assignments a "
            "WHERE a.kind = tasks.kind AND a.item_id = tasks.item_id)",
            "CREATE INDEX tasks_touched ON tasks (kind, status, touched)",
        ),
    ),
    Migration(
        "core_0005_task_counts",
        (
            # Tasks per (kind, status), kept by triggers in the same transaction as every change to tasks:
            # "left in the pool" is read on every submit, and counting 3,000 index entries cost ~0.2 ms.
            """CREATE TABLE task_counts (
                kind TEXT NOT NULL,
                status TEXT NOT NULL,
                n INTEGER NOT NULL,
                PRIMARY KEY (kind, status)
            ) WITHOUT ROWID""",
            "INSERT INTO task_counts (kind, status, n) SELECT kind, status, count(*) FROM tasks GROUP BY kind, status",
            """CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
                INSERT INTO task_counts (kind, status, n) VALUES (NEW.kind, NEW.status, 1)
                    ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
            END""",
            """CREATE TRIGGER task_counts_update AFTER UPDATE OF kind, status ON tasks
            WHEN OLD.kind IS NOT NEW.kind OR OLD.status IS NOT NEW.status BEGIN
                UPDATE task_counts SET n = n - 1 WHERE kind = OLD.kind AND status = OLD.status;
                INSERT INTO task_counts (kind, status, n) VALUES (NEW.kind, NEW.status, 1)
                    ON CONFLICT (kind, status) DO UPDATE SET n = n + 1;
            END""",
            """CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
                UPDATE task_counts SET n = n - 1 WHERE kind = OLD.kind AND status = OLD.status;
            END""",
        ),
    ),
    Migration(
        "core_0006_draft_clock",
        (
            # The browser's clock (ms) when the text was typed: a save that arrives late (one queued while the
            # page's closing flush already landed) must not overwrite newer text. NULL: unknown, always written.
            "ALTER TABLE drafts ADD COLUMN client_ms INTEGER",
        ),
    ),
    Migration(
        "core_0007_draft_played",
        (
            # The parts of the video the annotator has played (JSON [[start, end], ...], media seconds), kept with
            # the lease like the draft, so a reload or a crash does not throw the watching away (issue 44 §3).
            "ALTER TABLE drafts ADD COLUMN played TEXT",
        ),
    ),
]
