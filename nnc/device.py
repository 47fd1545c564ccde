"""Devices and global runtime queries (ANeuralNetworks_getDevice*, ANeuralNetworksDevice_*).

Skeleton: filled in by the issue-6 work on devices.
"""

from __future__ import annotations


class Device:
    """ANeuralNetworksDevice: one back-end nnc can compile for."""
