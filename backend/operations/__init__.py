"""Operations: database snapshots and restore (:mod:`.backup`), Hub backup and restore (:mod:`.hub`), the
backup service the app runs (:mod:`.service`), Space detection (:mod:`.space`), what happens before the
context is built (:mod:`.start`), and ``python -m backend backup|restore`` (:mod:`.cli`).

Imports go one way: ``backup`` <- ``hub`` <- ``service``, ``start``; nothing here is imported by ``backup``.
``huggingface_hub`` is imported inside functions only.
"""
