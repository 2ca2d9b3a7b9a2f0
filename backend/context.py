"""AppContext: everything the process holds, built once at start-up by :func:`build_context` and handed to
every tab, command and service. There are no process globals beside it.

The services hold an ``AppContext`` and name its type only for the type checker (``if TYPE_CHECKING``), and this
module names theirs the same way: at run time it imports none of them until :func:`build_context` builds them, so
importing ``backend.context`` (as every tab and service does) loads no service, and no import runs in a circle
(docs/decisions.md, "Import circles"; tests/test_import_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from backend.inference.digests import FileDigests
from backend.settings import Settings
from backend.storage import Database

if TYPE_CHECKING:
    from backend.icl.service import IclWorkspace
    from backend.inference.benchmarks import BenchmarkRegistry
    from backend.inference.embeddings import EmbeddingModels
    from backend.inference.registry import ModelPool, ModelRegistry
    from backend.operations.service import BackupService
    from backend.webhooks.sender import WebhookSender


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    database: Database
    models: ModelRegistry  # backends and in-process models beside <data>/models.json
    pool: ModelPool  # the loaded models
    benchmarks: BenchmarkRegistry
    icl: IclWorkspace  # loaded in-context example sets and prepared selectors
    embeddings: EmbeddingModels  # sentence encoders shared by nsplan-lite, review agreement, the ICL selectors
    backup: BackupService  # snapshots (and Hub push); app.py starts it, commands leave it stopped
    webhooks: WebhookSender  # posts queued webhook deliveries; app.py starts it, commands leave it stopped
    notices: tuple[str, ...] = ()  # start-up notices for admins (ephemeral storage, what was restored)
    digests: FileDigests = field(default_factory=FileDigests)  # media and weights digests, once per file version


def build_context(settings: Settings, *, notices: tuple[str, ...] = (), hf_api: Any = None) -> AppContext:
    """Create the data folder, open the database, apply migrations and build the services.

    ``hf_api`` stands in for the Hugging Face Hub in the backup service (tests); ``notices`` are shown to
    admins.
    """
    from backend.filebench.benchmark import FileBenchmarks
    from backend.icl.service import IclWorkspace
    from backend.inference.benchmarks import BenchmarkRegistry
    from backend.inference.embeddings import EmbeddingModels
    from backend.inference.registry import ModelPool, ModelRegistry
    from backend.operations.service import BackupService
    from backend.webhooks.sender import WebhookSender

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    settings.media_dir.mkdir(parents=True, exist_ok=True)
    database = Database(settings.db_path, busy_timeout_ms=settings.busy_timeout_ms)
    database.migrate()
    embeddings = EmbeddingModels(settings.embedding_model)
    models = ModelRegistry(settings, embeddings=embeddings)
    return AppContext(
        settings=settings,
        database=database,
        models=models,
        pool=ModelPool(models),
        benchmarks=BenchmarkRegistry(discover=FileBenchmarks(settings.data_dir).specs),
        icl=IclWorkspace(settings.data_dir / "cache" / "icl", embeddings),
        embeddings=embeddings,
        backup=BackupService(settings, database, hf_api=hf_api),
        webhooks=WebhookSender(settings, database),
        notices=notices,
    )
