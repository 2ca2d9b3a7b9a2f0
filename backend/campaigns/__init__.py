"""Crowd campaigns (issue 16): studies, signed study links, the qualification, study workers, gold items,
quality checks and worker reports."""
