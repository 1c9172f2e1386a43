"""Flop amounts on which a real Batsim 4.2.1 and the embedded engine agree (issue 25, item 7).

What was observed on a real Batsim 4.2.1 (built from ``../shared/batsim``) against the embedded engine, on the
first 20 jobs of KTH-SP2 and on one-job JSON workloads:

- below 1 flop per host, SimGrid's rate (host speed / flop) overflows to infinity on fast enough hosts: with
  ``--recorded-speed 1e-300`` (4e-300 flop for a 4 s job on 1 Gflop/s hosts) Batsim stops answering after 22
  messages, while the embedded engine ends every job at once; 0 flop (nothing to compute) agrees;
- Batsim writes every JSON number it re-sends as a float with printf's ``%f`` into a 32-byte buffer and aborts
  from 1e23 on (``--recorded-speed 1e20``); an amount that overflows to infinity is not JSON at all;
- Batsim parses JSON numbers with rapidjson without its full-precision option, which reads some numbers of 16 or
  more significant digits as a neighbouring double (:func:`batsim_double` replays it): the job then lasts another
  time on Batsim than on the embedded engine.
"""

from __future__ import annotations

import json
import math
import sys

import pytest
from batreplay.workloads.batsim_workload import (
    FLOP_LIMIT,
    WorkloadFormatError,
    batsim_double,
    json_flop,
    read_workload_json,
    swf_to_workload,
    validate_workload,
)
from batreplay.workloads.swf import read_swf
from hypothesis import given
from hypothesis import strategies as st

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"

#: Read off real Batsim 4.2.1 runs: one job of ``cpu`` flop (the text Batsim was given) on one host of ``speed``
#: flop/s, and the execution time Batsim wrote in out_jobs.csv; with the correctly rounded double, the time that
#: the embedded engine writes. Where the two differ, Batsim read another number than the one written.
BATSIM_READS = [
    # cpu text, host speed, execution time written by Batsim, by the embedded engine
    ("1469.0277942690748", 1e-10, "14690277942690.748047", "14690277942690.748047"),
    ("1654095108859759.5", 100.0, "16540951088597.595703", "16540951088597.595703"),
    ("1.1509808760042815", 1e-13, "11509808760042.816406", "11509808760042.814453"),
    ("2024463097.2535074", 1e-4, "20244630972535.070312", "20244630972535.074219"),
    ("209062631331493.22", 10.0, "20906263133149.316406", "20906263133149.320312"),
    ("7563925325274631.0", 100.0, "75639253252746.296875", "75639253252746.312500"),
    ("3.2358589280888826e+22", 1e9, "32358589280888.820312", "32358589280888.824219"),
    ("1.0000000000000001e+23", 1e9, "99999999999999.984375", "100000000000000.015625"),
]


def _execution_time(cpu: float, speed: float) -> str:
    """The execution time SimGrid's arithmetic gives a lone task of ``cpu`` flop on a host of ``speed`` flop/s (one
    unit of work at the rate speed / cpu), as Batsim writes it."""
    return "%.6f" % (1.0 / (speed / cpu))


@pytest.mark.parametrize("text, speed, batsim, embedded", BATSIM_READS, ids=[case[0] for case in BATSIM_READS])
def test_batsim_double_is_the_number_batsim_reads(text, speed, batsim, embedded):
    assert _execution_time(batsim_double(text), speed) == batsim
    assert _execution_time(float(text), speed) == embedded
    # the workload checks refuse exactly the amounts read otherwise (the last one is also beyond 2**64)
    document = {"nb_res": 1, "jobs": [], "profiles": {"p": {"type": "parallel_homogeneous", "cpu": float(text),
                                                            "com": 0}}}
    if batsim == embedded:
        validate_workload(document)
    else:
        with pytest.raises(WorkloadFormatError, match=r"field 'profiles\.p\.cpu'"):
            validate_workload(document)


def test_batsim_double_on_real_batsim(real_batsim, tmp_path):
    """The same reads, live: each case a one-job workload on a real Batsim (the workload checks bypassed)."""
    from batreplay.engine.simulate import EngineSpec, simulate
    from batreplay.platforms.generate import platform_command
    from batreplay.schedulers.registry import load_scheduler

    limit = sys.getrecursionlimit()  # pybatsim's Batsim object raises it for the whole process: put it back
    try:
        for k, (text, speed, _, _) in enumerate(BATSIM_READS[1:]):
            (platform,) = platform_command(1, speed, tmp_path / f"host-{k}.xml")
            document = {"nb_res": 1, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": -1}],
                        "profiles": {"p": {"type": "parallel_homogeneous", "cpu": float(text), "com": 0}}}
            out = tmp_path / f"run-{k}"
            simulate(platform, document, load_scheduler("fcfs"), out,
                     engine=EngineSpec("batsim", batsim=real_batsim))
            row = (out / "out_jobs.csv").read_text().splitlines()[1].split(",")
            assert row[9] == _execution_time(batsim_double(json.dumps(float(text))), speed), text
    finally:
        sys.setrecursionlimit(limit)


#: Amounts both engines read alike, next to each refused one: the checks refuse no more than they must.
AGREED = [0, 1, 1.0, 1.5, 3e11, 1333333333.3333333, 2**64 - 1, 1.8446744073709550e19]


@pytest.mark.parametrize("cpu, fragment", [
    (1e-300, "1e-300 flop is below 1 flop: SimGrid's rate (host speed / flop) can overflow to infinity"),
    (0.5, "0.5 flop is below 1 flop"),
    (2**64, "18446744073709551616 flop is 2**64 flop or more"),
    (1e23, "1e+23 flop is 2**64 flop or more: a real Batsim 4.2.1 no longer reads it exactly (and aborts from 1e23"),
    (2024463097.2535074, "2024463097.2535074 flop is read as 2024463097.2535071 by Batsim 4.2.1 (rapidjson"),
])
@pytest.mark.parametrize("kind", ["parallel_homogeneous", "parallel_homogeneous_total", "parallel"])
def test_json_flop_amounts_the_engines_disagree_on_are_refused(tmp_path, cpu, fragment, kind):
    def document(value: float) -> dict:
        values = [1e9, value] if kind == "parallel" else value
        return {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 2, "profile": "p"}],
                "profiles": {"p": {"type": kind, "cpu": values, "com": [0] * 4 if kind == "parallel" else 0}}}

    path = tmp_path / "w.json"
    path.write_text(json.dumps(document(cpu)))
    with pytest.raises(WorkloadFormatError) as info:
        read_workload_json(path)
    field = "profiles.p.cpu[1]" if kind == "parallel" else "profiles.p.cpu"
    assert str(info.value).startswith(f"{path}, field '{field}': {fragment}")
    for agreed in AGREED:
        assert validate_workload(document(agreed)) == document(agreed)


@given(st.floats(min_value=1.0, max_value=FLOP_LIMIT, exclude_max=True))
def test_json_flop_writes_what_batsim_reads_exactly(value):
    written = json_flop(value)
    assert batsim_double(json.dumps(written)) == float(written)
    if value == math.floor(value):
        assert isinstance(written, int) and written == value
    else:
        assert abs(written - value) <= 5e-15 * value and float(f"{written:.15g}") == written  # 15 digits at most


@pytest.mark.parametrize("speed", [1e10 / 3, 1e9 / 7, 2**0.5 * 1e9])
def test_converted_flop_amounts_are_read_by_batsim_as_written(workloads_dir, speed):
    # KTH-SP2's 9,926 run times x these speeds give amounts with a fraction; written with 17 digits, Batsim read
    # 376, 442 and 932 of them as a neighbouring double. Integral amounts (every run time x 1 Gflop/s) stay the
    # same integers, so the comparisons with the golden runs hold.
    log = read_swf(workloads_dir / KTH)
    profiles = swf_to_workload(log, profile="parallel_homogeneous", node_speed=speed).profiles
    amounts = [profile["cpu"] for profile in profiles.values()]
    assert amounts and all(batsim_double(json.dumps(cpu)) == cpu for cpu in amounts)
    for name, profile in profiles.items():  # within 15 significant digits of run time x speed
        run_time = float(name.removeprefix("ph_"))
        assert math.isclose(profile["cpu"], run_time * speed, rel_tol=5e-15)
    at_default = swf_to_workload(log, profile="parallel_homogeneous", node_speed=1e9).profiles
    assert {name: p["cpu"] for name, p in at_default.items()} == {
        name: int(float(name.removeprefix("ph_")) * 1e9) for name in at_default}
    assert all(isinstance(p["cpu"], int) for p in at_default.values())
