"""People as runs: their answers read and scored like a model run (backend/humans/runs.py)."""
