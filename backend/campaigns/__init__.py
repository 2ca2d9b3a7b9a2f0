"""Crowd campaigns: studies, qualification, gold items, quality checks, worker reports."""
