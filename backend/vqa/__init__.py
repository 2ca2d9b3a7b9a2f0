"""Compositional VQA (MMComposition): items, authoring, verification, answering, scoring, difficulty."""
