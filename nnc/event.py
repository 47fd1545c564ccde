"""Events (ANeuralNetworksEvent_*): completion of an asynchronous computation.

Skeleton: filled in by the issue-6 work on executions.
"""

from __future__ import annotations


class Event:
    """ANeuralNetworksEvent."""
