"""Bursts (ANeuralNetworksBurst_*): a compilation's fast path for repeated executions.

Skeleton: filled in by the issue-6 work on executions.
"""

from __future__ import annotations


class Burst:
    """ANeuralNetworksBurst."""
