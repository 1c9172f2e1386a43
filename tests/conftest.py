"""Shared test fixtures: where the read-only shared material lives (``../shared`` next to the checkout)."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
WORKLOADS = SHARED / "workloads"
GOLDEN = SHARED / "batsim-golden"
SEEDS = SHARED / "seeds"


#: Madon et al. 2024, Fig. 1, as a hand-made trace of one user (job, user, submission, wait, run time; seconds):
#: session a60-0 = j1 (0..100 min), j2 (30, waits 10, runs 150 -> 190); j3 (100..300); j4 (250..270);
#: j5 (400..410) and j6 (420..430). The figure gives no numbers: these fit its description.
FIG1_ROWS = [
    (1, 7, 0.0, 0.0, 6000.0),
    (2, 7, 1800.0, 600.0, 9000.0),
    (3, 7, 6000.0, 0.0, 12000.0),
    (4, 7, 15000.0, 0.0, 1200.0),
    (5, 7, 24000.0, 0.0, 600.0),
    (6, 7, 25200.0, 0.0, 600.0),
]


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
