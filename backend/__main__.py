import os

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from backend.cli import main  # noqa: E402

raise SystemExit(main())
