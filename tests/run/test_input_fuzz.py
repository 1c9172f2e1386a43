"""Fuzzing the inputs of ``batreplay run`` (issue 9, item 19).

Lines of a real log (the first 60 jobs of KTH-SP2 with its header) and of a Batsim JSON workload are mutated:
field values replaced by arbitrary numbers or text, characters and bytes inserted anywhere (carriage returns,
NUL, byte order marks, line separators...), lines joined, split, deleted or repeated, JSON values replaced or
removed. Whatever the input, ``batreplay run`` must either

- succeed (exit 0) with an ``out_jobs.csv`` that has one row per job of the simulated workload, no resource
  used by two jobs at once, no start before submission, ``finish_time = starting_time + execution_time``, times
  below 2**53 s (exact to the second), and each execution time equal to the job's work (or its walltime when
  shorter) at the resolution of the printed times;
- or fail with exit status 2 and exactly one line on stderr, starting with ``batreplay: error:`` (no traceback).

Either way no warning may reach the user (numpy's "invalid value encountered in cast" was the only sign that an
id beyond 64 bits had wrapped around).

The examples are derandomized (the same ones on every run, no example database), and bounded to about a minute
of CI time in all.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.cli import main
from batreplay.platforms.generate import write_platform
from batreplay.workloads.batsim_workload import swf_to_workload
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
N_JOBS = 60
#: Slack for Batsim's printed times (six decimals).
TOLERANCE = 2e-6
#: Node speed of the fuzz platform, flop/s: the recorded speed assumed by the SWF conversion (no scaling).
SPEED = 1e9
FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")


def _kth_lines() -> list[str]:
    """The header lines and the first N_JOBS job lines of KTH-SP2, in file order."""
    if not KTH.is_file():
        return []
    lines = gzip.decompress(KTH.read_bytes()).decode().split("\n")
    header = [t for t in lines if t.startswith(";")]
    jobs = [t for t in lines if t.strip() and not t.startswith(";")][:N_JOBS]
    return header + jobs


BASE_LINES = _kth_lines()


@pytest.fixture(scope="module")
def platform(tmp_path_factory) -> Path:
    """A 64-node cluster: narrower than KTH-SP2's widest jobs, so rejections are exercised too."""
    return write_platform(tmp_path_factory.mktemp("platform") / "p64.xml", 64, SPEED)


@pytest.fixture(scope="module")
def base_json(tmp_path_factory) -> dict:
    """The 60-job slice as a Batsim workload, plus jobs using parallel_homogeneous and parallel profiles."""
    path = tmp_path_factory.mktemp("json") / "slice.swf"
    path.write_text("\n".join(BASE_LINES) + "\n")
    document = swf_to_workload(path, nb_res=64, oversized="keep").to_json_dict()
    document["profiles"]["ph"] = {"type": "parallel_homogeneous", "cpu": 3e11, "com": 0}
    document["profiles"]["par"] = {"type": "parallel", "cpu": [1e11, 2e11], "com": [0, 0, 0, 0]}
    document["jobs"].append({"id": "ph1", "subtime": 10, "walltime": 1000, "res": 8, "profile": "ph"})
    document["jobs"].append({"id": "par1", "subtime": 20, "walltime": -1, "res": 2, "profile": "par"})
    return document


# ---------------------------------------------------------------- strategies

#: Characters that mean something to line splitters, CSV readers or decoders.
SPECIAL_TEXT = st.sampled_from(["\r", "\n", "\r\n", "\x00", "\ufeff", "\t", " ", ";", "\x0b", "\x0c", "\x1c", "\x85",
                                "\u2028", '"', ",", "-", ".", "e", "#"])
NUMBER_TEXT = st.one_of(
    st.integers(-5, 5).map(str),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats().map(repr),  # also nan, inf, -0.0, 1e+308
    st.from_regex(r"-?[0-9]{0,22}(\.[0-9]{0,5})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
)
FIELD_TEXT = st.one_of(NUMBER_TEXT, st.text(max_size=4), SPECIAL_TEXT)
INSERTED_TEXT = st.one_of(SPECIAL_TEXT, st.text(st.characters(max_codepoint=0x7F), min_size=1, max_size=3),
                          st.text(max_size=3))
LINE = st.integers(0, 10**6)  # a line number, taken modulo the number of lines
COLUMN = st.integers(0, 200)  # a character position, taken modulo the line's length + 1
LINE_MUTATION = st.one_of(
    # field values most often: they carry the meaning of a job
    st.tuples(st.just("field"), LINE, st.integers(0, 19), FIELD_TEXT),
    st.tuples(st.just("field"), LINE, st.integers(0, 19), NUMBER_TEXT),
    st.tuples(st.just("insert"), LINE, COLUMN, INSERTED_TEXT),
    st.tuples(st.sampled_from(["join", "delete", "repeat"]), LINE),
    st.tuples(st.just("split"), LINE, COLUMN),
)
BYTE_MUTATION = st.one_of(
    st.tuples(st.just("bytes"), st.integers(0, 10**7), st.binary(min_size=1, max_size=4)),
    st.tuples(st.just("truncate"), st.integers(0, 10**7)),
    st.tuples(st.just("bom"),),
)


def mutate_lines(lines: list[str], mutations: list[tuple]) -> list[str]:
    """Apply line-level mutations; line and column numbers are taken modulo the current sizes."""
    lines = list(lines)
    for kind, *args in mutations:
        if not lines:
            break
        i = args[0] % len(lines)
        if kind == "field":
            fields = lines[i].split()
            if fields:
                fields[args[1] % len(fields)] = args[2]
                lines[i] = " ".join(fields)
        elif kind == "insert":
            at = args[1] % (len(lines[i]) + 1)
            lines[i] = lines[i][:at] + args[2] + lines[i][at:]
        elif kind == "join" and i + 1 < len(lines):
            lines[i : i + 2] = [lines[i] + " " + lines[i + 1]]
        elif kind == "split":
            at = args[1] % (len(lines[i]) + 1)
            lines[i : i + 1] = [lines[i][:at], lines[i][at:]]
        elif kind == "delete":
            del lines[i]
        elif kind == "repeat":
            lines.insert(i, lines[i])
    return lines


def mutate_bytes(data: bytes, mutations: list[tuple]) -> bytes:
    """Apply byte-level mutations; positions are taken modulo the current size."""
    for kind, *args in mutations:
        if kind == "bytes":
            at = args[0] % (len(data) + 1)
            data = data[:at] + args[1] + data[at:]
        elif kind == "truncate" and data:
            data = data[: args[0] % len(data)]
        elif kind == "bom":
            data = b"\xef\xbb\xbf" + data
    return data


JSON_VALUE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 100),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.text(max_size=5),
        st.sampled_from(["delay", "parallel", "parallel_homogeneous", "composed", "ph", "par", "-1"]),
    ),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)
JOB_KEYS = st.sampled_from(["id", "subtime", "walltime", "res", "profile", "extra"])
PROFILE_KEYS = st.sampled_from(["type", "delay", "cpu", "com", "seq"])
DOCUMENT_MUTATION = st.one_of(
    st.tuples(st.just("job"), st.integers(0, 10**6), JOB_KEYS, JSON_VALUE),
    st.tuples(st.just("job-delete"), st.integers(0, 10**6), JOB_KEYS),
    st.tuples(st.just("profile"), st.integers(0, 10**6), PROFILE_KEYS, JSON_VALUE),
    st.tuples(st.just("profile-delete"), st.integers(0, 10**6), PROFILE_KEYS),
    st.tuples(st.just("top"), st.sampled_from(["nb_res", "jobs", "profiles"]), JSON_VALUE),
)


def mutate_document(document: dict, mutations: list[tuple]) -> object:
    """Apply value-level mutations to a copy of a Batsim workload document (which may stop being one)."""
    document = json.loads(json.dumps(document))
    for kind, *args in mutations:
        jobs = document.get("jobs") if isinstance(document, dict) else None
        profiles = document.get("profiles") if isinstance(document, dict) else None
        if kind.startswith("job") and isinstance(jobs, list) and jobs:
            job = jobs[args[0] % len(jobs)]
            if isinstance(job, dict):
                if kind == "job":
                    job[args[1]] = args[2]
                else:
                    job.pop(args[1], None)
        elif kind.startswith("profile") and isinstance(profiles, dict) and profiles:
            profile = profiles[sorted(profiles)[args[0] % len(profiles)]]
            if isinstance(profile, dict):
                if kind == "profile":
                    profile[args[1]] = args[2]
                else:
                    profile.pop(args[1], None)
        elif kind == "top" and isinstance(document, dict):
            document[args[0]] = args[1]
    return document


# ---------------------------------------------------------------- the check


def _work_seconds(profile: dict, res: int) -> float | None:
    """Seconds a job of ``profile`` computes on ``res`` hosts of the fuzz platform (1e9 flop/s), or None."""
    kind = profile.get("type")
    if kind == "delay":
        return float(profile["delay"])
    if kind == "parallel_homogeneous":
        return float(profile["cpu"]) / SPEED
    if kind == "parallel_homogeneous_total":
        return float(profile["cpu"]) / res / SPEED
    if kind == "parallel":
        return max(float(c) for c in profile["cpu"]) / SPEED
    return None


def check_out_jobs(run_dir: Path) -> None:
    """The invariants of a finished run's out_jobs.csv, against the workload.json it simulated: one row per
    job; times below 2**53 s (exact to the second); no start before submission; finish = start + execution
    time; execution time = the job's work, or its walltime when shorter; no resource used twice at once."""
    workload = json.loads((run_dir / "workload.json").read_text())
    expected = sorted(str(job["id"]).split("!", 1)[-1] for job in workload["jobs"])
    out = pd.read_csv(run_dir / "out_jobs.csv", dtype={"job_id": str, "allocated_resources": str},
                      keep_default_na=False)
    assert sorted(out["job_id"]) == expected, "not one row per job of the workload"
    assert (out["submission_time"].to_numpy(dtype=float) < 2.0**53).all(), "a submission time beyond 2**53 s"
    ran = out[out["final_state"] != "REJECTED"]
    start = ran["starting_time"].to_numpy(dtype=float)
    finish = ran["finish_time"].to_numpy(dtype=float)
    assert (finish < 2.0**53).all(), "a finish time beyond 2**53 s"
    jobs = {str(job["id"]).split("!", 1)[-1]: job for job in workload["jobs"]}
    for job_id, execution, end in zip(ran["job_id"], ran["execution_time"].to_numpy(dtype=float), finish):
        job = jobs[job_id]
        work = _work_seconds(workload["profiles"][job["profile"]], job["res"])
        if work is not None:
            walltime = job.get("walltime", -1)
            if walltime is not None and walltime > 0:
                work = min(work, walltime)
            slack = TOLERANCE + 4 * np.spacing(abs(end))  # the printed times' resolution at that date
            # Batsim gives a job that ends at its start (no time left at that date) a run time of 1e-5 s.
            instantaneous = execution == 1e-5 and work <= 1e-5 + slack
            assert instantaneous or abs(execution - work) <= slack, (
                f"job {job_id}: execution time {execution} s, not {work} s"
            )
    assert (start >= ran["submission_time"].to_numpy(dtype=float) - TOLERANCE).all(), "start before submission"
    assert (np.abs(finish - (start + ran["execution_time"].to_numpy(dtype=float))) <= TOLERANCE).all(), (
        "finish_time != starting_time + execution_time"
    )
    busy: dict[int, list[tuple[float, float, str]]] = {}
    for job_id, text, begin, end in zip(ran["job_id"], ran["allocated_resources"], start, finish):
        for resource in ProcSet.from_str(text):
            busy.setdefault(resource, []).append((begin, end, job_id))
    for resource, spans in busy.items():
        spans.sort()
        for (_, end, first), (begin, _, second) in zip(spans, spans[1:]):
            assert begin >= end - TOLERANCE, f"resource {resource} used by jobs {first} and {second} at once"


def run_cli(workload: Path, platform: Path, out: Path) -> tuple[int, str]:
    """``batreplay run`` with EASY; returns (exit status, stderr). Any other exception fails the test."""
    stderr = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                status = main(["run", "--workload", str(workload), "--platform", str(platform), "--scheduler",
                               "easy", "--out", str(out), "--quiet"])
            except SystemExit as exit_:
                status = exit_.code
    printed = [w for w in caught if not issubclass(w.category, DeprecationWarning)]
    assert not printed, f"warnings a user would see: {[str(w.message) for w in printed]}"
    return status, stderr.getvalue()


def check_outcome(status: int, stderr: str, out: Path) -> None:
    if status == 0:
        check_out_jobs(out)
    else:
        assert status == 2, f"exit status {status}: {stderr}"
        assert stderr.count("\n") == 1 and stderr.startswith("batreplay: error: "), stderr
        assert not out.exists()


# ---------------------------------------------------------------- the tests


@FUZZ
@given(
    lines=st.lists(LINE_MUTATION, min_size=1, max_size=4),
    raw=st.lists(BYTE_MUTATION, max_size=2),
    compress=st.booleans(),
)
def test_mutated_swf_log_runs_or_fails_in_one_line(tmp_path, platform, lines, raw, compress):
    data = mutate_bytes(("\n".join(mutate_lines(BASE_LINES, lines)) + "\n").encode(), raw)
    here = Path(tempfile.mkdtemp(dir=tmp_path))  # tmp_path is shared by the examples
    workload = here / "log.swf"
    workload.write_bytes(gzip.compress(data) if compress else data)
    out = here / "run"
    status, stderr = run_cli(workload, platform, out)
    check_outcome(status, stderr, out)


@FUZZ
@given(
    values=st.lists(DOCUMENT_MUTATION, max_size=3),
    lines=st.lists(LINE_MUTATION, max_size=2),
    raw=st.lists(BYTE_MUTATION, max_size=2),
)
def test_mutated_json_workload_runs_or_fails_in_one_line(tmp_path, platform, base_json, values, lines, raw):
    text = json.dumps(mutate_document(base_json, values), indent=1)
    data = mutate_bytes(("\n".join(mutate_lines(text.split("\n"), lines)) + "\n").encode(), raw)
    here = Path(tempfile.mkdtemp(dir=tmp_path))  # tmp_path is shared by the examples
    workload = here / "workload.json"
    workload.write_bytes(data)
    out = here / "run"
    status, stderr = run_cli(workload, platform, out)
    check_outcome(status, stderr, out)


def test_the_invariant_check_is_not_vacuous(tmp_path):
    """Caught: two jobs on resource 3 over [5, 10); a finish that is not start + execution time; an execution
    time that is not the job's work."""
    workload = {"jobs": [{"id": "1", "res": 2, "profile": "d", "walltime": -1}, {"id": "2", "res": 1, "profile": "d"}],
                "profiles": {"d": {"type": "delay", "delay": 10}}}
    (tmp_path / "workload.json").write_text(json.dumps(workload))
    header = "job_id,submission_time,final_state,starting_time,execution_time,finish_time,allocated_resources\n"
    cases = {
        "resource 3 used by jobs 1 and 2": "2,0,COMPLETED_SUCCESSFULLY,5,10,15,3",
        "finish_time": "2,0,COMPLETED_SUCCESSFULLY,10,10,21,3",
        "execution time 5.0 s, not 10.0 s": "2,0,COMPLETED_SUCCESSFULLY,10,5,15,3",
        "before submission": "2,11,COMPLETED_SUCCESSFULLY,10,10,20,3",
    }
    for message, second in cases.items():
        (tmp_path / "out_jobs.csv").write_text(header + "1,0,COMPLETED_SUCCESSFULLY,0,10,10,2-3\n" + second + "\n")
        with pytest.raises(AssertionError, match=message):
            check_out_jobs(tmp_path)
    (tmp_path / "out_jobs.csv").write_text(
        header + "1,0,COMPLETED_SUCCESSFULLY,0,10,10,2-3\n2,0,COMPLETED_SUCCESSFULLY,10,10,20,3\n"
    )
    check_out_jobs(tmp_path)
