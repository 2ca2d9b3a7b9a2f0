"""Expert review of intent annotations in rounds, quality inspection, agreement and publishing.

Modules: ``service`` (queue, judgments, rounds), ``dashboard``, ``inspection``, ``stats`` (pure statistics),
``agreement``, ``dataset`` (final dataset export/import), ``card``, ``publish``, ``cli``.
"""
