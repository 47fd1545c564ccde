"""Memory objects (ANeuralNetworksMemory_*, ANeuralNetworksMemoryDesc_*).

Skeleton: filled in by the issue-6 work on memories.
"""

from __future__ import annotations


class Memory:
    """ANeuralNetworksMemory: a region shared with the runtime."""


class MemoryDesc:
    """ANeuralNetworksMemoryDesc: describes a device memory by its roles."""
