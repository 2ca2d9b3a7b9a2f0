"""The settings registry (backend/settings.py): every default as the code has it, and the reference table in
docs/settings.md generated from it."""

from __future__ import annotations

from conftest import ROOT


def test_settings_table_in_the_docs_matches_the_code():
    from backend.settings import SETTINGS, Settings, settings_markdown

    defaults = Settings()
    for spec in SETTINGS:
        assert getattr(defaults, spec.name) == spec.default, spec.name
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert settings_markdown() in page, "regenerate the table: python -m backend settings --update-docs"
