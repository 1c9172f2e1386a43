"""Shared test fixtures: where the read-only shared material lives (``../shared`` next to the checkout)."""

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
WORKLOADS = SHARED / "workloads"
GOLDEN = SHARED / "batsim-golden"
#: The same kind of recordings, with Batsim's --enable-compute-sharing (several jobs on one host).
GOLDEN_SHARING = SHARED / "batsim-golden-sharing"
SEEDS = SHARED / "seeds"

#: Names of a Chromium binary, in the order looked for (Debian's package is ``chromium``).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Flags of every Chromium the tests start. This machine's network is closed: Chromium must not try to reach
#: Google's services at start.
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


def chromium_path() -> str | None:
    """The first Chromium binary on PATH (:data:`CHROMIUM_NAMES`), or None."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None

# `python -m pytest` puts the current directory first on sys.path. From the checkout, the top-level source folders
# (`schedulers/`, `engine/`, ...) would then shadow installed packages of the same name: pybatsim's `schedulers`,
# from which its launcher imports `easyBackfill`, above all. Plain `pytest` does not have the checkout on sys.path
# (batreplay is installed): remove it, so that both ways of running the tests import the same code.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != REPO_ROOT]
if Path(getattr(sys.modules.get("schedulers"), "__file__", None) or "/").resolve().parent == REPO_ROOT / "schedulers":
    del sys.modules["schedulers"]  # imported from the checkout before this file ran


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


def golden_cases(sharing: bool = False) -> list[str]:
    """Names of the golden Batsim recordings (one folder each): those of ``batsim-golden``, followed, with
    ``sharing``, by those of ``batsim-golden-sharing`` (compute sharing on). Names are unique over both folders;
    :func:`golden_folder` finds a case's folder."""
    folders = [GOLDEN, GOLDEN_SHARING] if sharing else [GOLDEN]
    return [name for folder in folders if folder.is_dir()
            for name in sorted(p.name for p in folder.iterdir() if (p / "transcript.jsonl").exists())]


def golden_shares_hosts(case: str) -> bool:
    """True when golden case ``case`` was recorded with Batsim's ``--enable-compute-sharing``."""
    return "--enable-compute-sharing" in (golden_folder(case) / "batsim_args.txt").read_text().split()


def golden_folder(case: str) -> Path:
    """The folder of golden case ``case``, in ``batsim-golden`` or ``batsim-golden-sharing``."""
    folder = GOLDEN / case
    return folder if folder.is_dir() else GOLDEN_SHARING / case


#: Golden recordings large enough (2,000 jobs) that a test running them over a process boundary is slow.
LARGE_GOLDEN_CASES = frozenset({"kth2000"})


def slow_when_large(cases: list[str]) -> list:
    """``cases`` for ``pytest.mark.parametrize``, the large recordings marked slow."""
    return [pytest.param(case, marks=pytest.mark.slow) if case in LARGE_GOLDEN_CASES else case for case in cases]


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


#: Set by CI (``.ci/run``): a missing real Batsim fails the real-Batsim tests instead of skipping them.
REQUIRE_BATSIM = os.environ.get("BATREPLAY_REQUIRE_BATSIM", "") not in ("", "0")


def find_real_batsim() -> str:
    """The ``batsim`` 4.2.x on PATH, for tests that run a real Batsim.

    Skips the calling test when there is none (or it is another version), with how to get one; fails it
    instead when ``BATREPLAY_REQUIRE_BATSIM=1`` (CI builds Batsim, so a skip there would hide a broken build).
    """
    import shutil

    from batreplay.realbatsim.errors import BatsimLaunchError
    from batreplay.realbatsim.process import check_batsim_version

    path = shutil.which("batsim")
    problem = None
    if path is None:
        problem = ("batsim 4.2.x not on PATH: build it with `SKIP_PYBATSIM=1 bash ../shared/batsim/build.sh` "
                   "(see docs/real-batsim.md)")
    else:
        try:
            check_batsim_version(path)
        except BatsimLaunchError as error:
            problem = f"the batsim on PATH is not usable: {error}"
    if problem is not None:
        if REQUIRE_BATSIM:
            pytest.fail(f"BATREPLAY_REQUIRE_BATSIM is set but {problem}")
        pytest.skip(problem)
    return path


@pytest.fixture(scope="session")
def real_batsim() -> str:
    """Path of a real Batsim 4.2.x (see :func:`find_real_batsim`)."""
    return find_real_batsim()
