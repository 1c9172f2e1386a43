"""Shared test fixtures: where the read-only shared material lives (``../shared`` next to the checkout)."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
WORKLOADS = SHARED / "workloads"
GOLDEN = SHARED / "batsim-golden"
SEEDS = SHARED / "seeds"


def golden_cases() -> list[str]:
    """Names of the golden Batsim recordings (one folder each)."""
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "transcript.jsonl").exists())


@pytest.fixture(scope="session")
def workloads_dir() -> Path:
    if not WORKLOADS.is_dir():
        pytest.skip(f"shared workloads not found at {WORKLOADS}")
    return WORKLOADS


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    if not GOLDEN.is_dir():
        pytest.skip(f"golden Batsim recordings not found at {GOLDEN}")
    return GOLDEN
