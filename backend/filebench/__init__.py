"""Benchmarks from a file: multiple-choice items imported from JSONL, JSON, Parquet or a Hugging Face dataset,
evaluated and reported like the built-in benchmarks.

``compstudio benchmarks add NAME --from items.jsonl|items.parquet|hf:owner/dataset`` checks every row, copies the
media into the data folder and keeps the benchmark as ``<data_dir>/benchmarks/NAME/`` (``benchmark.json``,
``items.jsonl``, ``media/``) (:mod:`backend.filebench.importer`). From then on it is a registered benchmark
(:mod:`backend.filebench.benchmark`): ``eval --benchmark NAME`` (with ``--option circular=true`` for every
rotation of the options), ``compare --benchmark NAME [--circular]`` and ``report`` treat it as they treat the
built-in ones. A row (docs/file-benchmarks.md, example in docs/examples/)::

    {"id": "q1", "question": "What is on the table?", "options": ["a cup", "a book"], "answer": "A",
     "images": ["img/q1.png"], "video": "clips/q1.mp4", "category": "object"}

``images``, ``video`` and ``category`` are optional; media paths are relative to the file.
"""
