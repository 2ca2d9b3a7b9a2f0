"""Inference backends. Each module is imported lazily, by :mod:`backend.inference.registry`, when a model
that uses it is first loaded (so importing ``backend`` never imports torch, transformers or httpx)."""
