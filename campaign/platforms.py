"""Platform files of a campaign: each log's recorded machine and its scaled variants.

The recorded machine of a log is a shipped platform (used in place), a platform file (used in place), or a
homogeneous cluster of ``nodes`` hosts generated with :func:`batreplay.platforms.generate.cluster_platform`.
A variant (node count and/or node speed scaled, Madon et al. 2024, Sect. 5.2: "infra x2", "perf /2") is generated with
:func:`batreplay.platforms.generate.scale_platform`. Generated files go to ``<output_root>/platforms/``, named
``<log>.xml`` and ``<log>__<variant>.xml``, written atomically and only when their text changed, before any
instance starts (the run directories then point at them in ``run.json``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from batreplay.platforms.generate import cluster_platform, scale_platform, write_platform_text
from batreplay.platforms.shipped import SHIPPED_PLATFORMS

PLATFORMS_FOLDER = "platforms"


def recorded_platform_path(campaign, log) -> Path:
    """Path of the recorded machine of ``log`` (a :class:`batreplay.campaign.spec.LogSpec`) in ``campaign``."""
    if log.platform is None:
        return campaign.output_root / PLATFORMS_FOLDER / f"{log.name}.xml"
    if log.platform in SHIPPED_PLATFORMS:
        return SHIPPED_PLATFORMS[log.platform]
    return campaign.resolve(log.platform)


def platform_for(campaign, instance) -> Path:
    """Path of the platform file an instance runs on (recorded machine, or its generated variant)."""
    variant = instance.experiment.variant
    if variant.is_recorded:
        return recorded_platform_path(campaign, instance.log)
    return campaign.output_root / PLATFORMS_FOLDER / f"{instance.log.name}__{variant.label}.xml"


def _write_if_changed(path: Path, text: str) -> Path:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return path
    return write_platform_text(path, text)


def prepare_platforms(campaign, instances: Iterable) -> list[Path]:
    """Write the generated platform files the instances need; returns every platform path they use.

    Raises:
        ValueError, PlatformError: a platform that cannot be generated or read (message names it).
        OSError: the output folder cannot be written.
    """
    used: dict[Path, None] = {}
    for instance in instances:
        log = instance.log
        recorded = recorded_platform_path(campaign, log)
        if log.platform is None:
            _write_if_changed(recorded, cluster_platform(log.nodes, log.node_speed))
        target = platform_for(campaign, instance)
        if not instance.experiment.variant.is_recorded:
            variant = instance.experiment.variant
            _write_if_changed(target, scale_platform(recorded, variant.nodes_factor, variant.speed_factor,
                                                     exact=True))
        used[target] = None
    return list(used)
