"""Crowd campaigns (issue 16): studies, signed study links, the qualification, and study workers."""
