"""The inference layer every benchmark tab uses: one request format, model backends behind one registry,
answer parsing, a prediction store and a resumable runner.

* :mod:`.request`: interleaved request parts and :class:`~.request.GenerationParams`.
* :mod:`.registry`: :class:`~.registry.ModelSpec`, ``<data_dir>/models.json``, :func:`~.registry.get_model`,
  the app's :class:`~.registry.ModelRegistry` (``ctx.models``) and :class:`~.registry.ModelPool` (``ctx.pool``).
* :mod:`.base`: the backend contract (``generate``, ``score_options`` -> :class:`~.base.OptionScore`).
* :mod:`.benchmarks`: :class:`~.benchmarks.BenchmarkSpec`, :class:`~.benchmarks.EvalItem`, the benchmark registry.
* :mod:`.parsing`: answer letters from model text, never guessed.
* :mod:`.store`, :mod:`.runner`, :mod:`.service`: the prediction store, batch runs, role-checked entry points.
* :mod:`.hardware`: ``cpu``/``gpu``/``zerogpu`` and the ``spaces.GPU`` wrapper; :mod:`.embeddings`: sentence
  embeddings shared by planning, review and in-context selection.

Importing this package imports no heavy library (torch, transformers, httpx load inside the backends).
"""
