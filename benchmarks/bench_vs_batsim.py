"""batreplay's embedded engine against a real Batsim 4.2.1, side by side: now part of ``bench_performance.py``.

This runs ``bench_performance.py`` without AccaSim and ``batreplay --help``: ``batreplay run`` (EASY), a real
Batsim with pybatsim's own ``easyBackfill``, and the same Batsim with batreplay's ``schedulers/easy.py``
(checked to write the embedded ``out_jobs.csv``), interleaved, medians. Other options pass through::

    uv run python benchmarks/bench_vs_batsim.py                                  # full KTH-SP2, 3 repetitions
    uv run python benchmarks/bench_vs_batsim.py --logs sdsc --batsim-logs sdsc --repeat 1

Needs ``batsim`` 4.2.x on PATH (``SKIP_PYBATSIM=1 bash ../shared/batsim/build.sh``); see benchmarks/README.md.
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    script = str(Path(__file__).resolve().with_name("bench_performance.py"))
    os.execv(sys.executable, [sys.executable, script, "--no-accasim", "--help-runs", "0", *sys.argv[1:]])
