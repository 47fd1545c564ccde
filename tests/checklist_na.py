"""Checklist items of ``api-behaviour-checklist.md`` that cannot apply to nnc.

Each entry says why.  Everything not listed here must have a test marked
``@pytest.mark.checklist(N)``; the conftest prints the coverage line.
"""

from __future__ import annotations

#: item number -> reason it does not apply on Linux / to a Python binding
NOT_APPLICABLE: dict[int, str] = {}
