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
import math
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batreplay.cli import main
from batreplay.platforms.generate import write_platform
from batreplay.workloads.batsim_workload import swf_to_workload
from conftest import REPO_ROOT, WORKLOADS

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


def _work_seconds(profile: dict, res: int, speed: float = SPEED) -> float | None:
    """Seconds a job of ``profile`` computes on ``res`` hosts whose slowest has ``speed`` flop/s (default: the fuzz
    platform's), or None."""
    kind = profile.get("type")
    if kind == "delay":
        return float(profile["delay"])
    if kind == "parallel_homogeneous":
        return float(profile["cpu"]) / speed
    if kind == "parallel_homogeneous_total":
        return float(profile["cpu"]) / res / speed
    if kind == "parallel":
        return max(float(c) for c in profile["cpu"]) / speed
    return None


def check_out_jobs(run_dir: Path, host_speeds: list[float] | None = None) -> None:
    """The invariants of a finished run's out_jobs.csv, against the workload.json it simulated: one row per
    job; times below 2**53 s (exact to the second); no start before submission; finish = start + execution
    time; execution time = the job's work at the speed of its slowest host (``host_speeds``, flop/s by resource
    id; default: every host at SPEED), or its walltime when shorter; no resource used twice at once."""
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
    for job_id, execution, end, hosts in zip(ran["job_id"], ran["execution_time"].to_numpy(dtype=float), finish,
                                             ran["allocated_resources"]):
        job = jobs[job_id]
        speed = SPEED if host_speeds is None else min(host_speeds[r] for r in ProcSet.from_str(hosts))
        work = _work_seconds(workload["profiles"][job["profile"]], job["res"], speed)
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
    # heterogeneous hosts: a job computes at the speed of its slowest host
    workload["profiles"]["d"] = {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}
    (tmp_path / "workload.json").write_text(json.dumps(workload))
    (tmp_path / "out_jobs.csv").write_text(
        header + "1,0,COMPLETED_SUCCESSFULLY,0,10,10,0-1\n2,0,COMPLETED_SUCCESSFULLY,10,10,20,3\n"
    )
    check_out_jobs(tmp_path, [1e9, 1e9, 1e9, 1e9])
    with pytest.raises(AssertionError, match="job 2: execution time 10.0 s, not 20.0 s"):
        check_out_jobs(tmp_path, [1e9, 1e9, 1e9, 5e8])


# ---------------------------------------------------------------- node types files and campaign files (issue 25)
#
# A node types file goes to ``batreplay platform --node-types F --out P [--variants]``, and a platform it accepts
# to a run of the first RUN_JOBS KTH-SP2 jobs; a campaign file (built from expe/quick.toml) to ``batreplay campaign
# run --dry-run``, and the platforms of a campaign it accepts are generated (what every instance runs on). Either
# the result is right or the command exits 2 with one line ``batreplay: error: ...``; never a traceback, a warning
# or a platform that the next step refuses.

#: Jobs of the short runs on accepted node types platforms.
RUN_JOBS = 20
#: Accepted platforms of more nodes are checked without a run (a run of a million hosts takes tens of seconds).
RUN_NODES = 5000
BASE_TYPES = """\
[[node_types]]
name = "old"
count = 6
cores = 2
speed = 1e9

[[node_types]]
name = "mid"
count = 5
cores = 4
slots = 3
speed = 1.5e9

[[node_types]]
name = "new"
count = 3
speed = 2e9
"""
TYPE_KEYS = ("name", "count", "cores", "slots", "speed")
SMALL_FUZZ = settings(FUZZ, max_examples=50)


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a TOML basic string (a lone surrogate: a TOML error, also wanted)


#: TOML values a user might write, or mistype, as text: plausible ones (counts, speeds, limits) as often as others.
TOML_VALUE = st.one_of(
    st.integers(1, 40).map(str),
    st.floats(1e6, 1e12).map(repr),
    st.sampled_from(["500000", "2147483647", "2147483648", "2.2250738585072014e-308", "2.2e-308", "8.98e307",
                     "9e307", "4", "1.0", "2"]),
    st.integers(-3, 40).map(str),
    st.sampled_from([0, 600_000, 1_000_000, 1_000_001, 10_000_000, 2**31, 2**62, 2**63 - 1, 2**64, 10**400]).map(str),
    st.floats().map(repr),  # inf, nan, 1e+308, 5e-324, -0.0
    st.sampled_from(["1e9", "2.5e9", "0.5", "1e308", "1.7976931348623157e308", "5e-324", "true", "false",
                     "1979-05-27", "[1, 2]", "{ a = 1 }", "[]", "", "1_000", "0x10", "+inf"]),
    st.text(max_size=6).map(_toml_string),
    st.sampled_from(["fat", "old", "a b", "x\\n", "1Gf", "1e9", "", "nodes-x2", "nodes-d2", "speed-x2", "speed-d2",
                     "nodes-x" + "9" * 400, "speed-d" + "9" * 400, "nodes-x1000000", "nodes-d7", "speed-x1.5",
                     "recorded", "easy", "fcfs", "nope", "feedback", "rigid", "a60", "arrival:-5", "kth-sp2",
                     "types.toml", "missing.toml", "parallel_homogeneous", "delay"]).map(_toml_string),
)
#: Values of the right TOML type for a key, by the key's kind (see :func:`mutate_toml`).
WHOLE_TEXT = st.one_of(st.integers(0, 40), st.sampled_from([500_000, 1_000_000, 1_000_001, 2**31 - 1, 2**31, 2**62,
                                                            2**63 - 1])).map(str)
NUMBER_VALUE = st.one_of(st.floats(1e-3, 1e12), st.floats(), st.sampled_from([2.2250738585072014e-308, 2e-308,
                                                                              8.98e307, 9e307])).map(repr)
WORD = st.sampled_from(["fat", "a.b-c_d+1", "nodes-x2", "nodes-d2", "speed-x2", "speed-d2", "nodes-x2+speed-d2",
                        "nodes-x" + "9" * 400, "speed-d" + "9" * 400, "nodes-x1000000", "nodes-x500000", "nodes-d7",
                        "speed-x1.5", "speed-d1e3", "recorded", "easy", "fcfs", "conservative", "nope", "feedback",
                        "rigid", "a60", "a0", "arrival:-5", "last:30", "kth-sp2", "sdsc-sp2", "parallel_homogeneous",
                        "delay", "drop", "min", "scheduling", "submissions"]).map(_toml_string)
TYPED_VALUE = st.tuples(WHOLE_TEXT, NUMBER_VALUE, WORD, st.lists(WORD, max_size=3).map(lambda w: f"[{', '.join(w)}]"))
KEY_LINE = st.integers(0, 10**6)  # a line, taken modulo the number of lines
TOML_MUTATION = st.one_of(
    st.tuples(st.just("typed"), KEY_LINE, TYPED_VALUE),  # most often: the value of a key, of its type
    st.tuples(st.just("typed"), KEY_LINE, TYPED_VALUE),
    st.tuples(st.just("value"), KEY_LINE, TOML_VALUE),  # or of any type
    st.tuples(st.just("key"), KEY_LINE, st.sampled_from(TYPE_KEYS + ("nodes", "platform", "node_types", "node_speed",
                                                                      "max_jobs", "platforms", "color"))),
    st.tuples(st.just("insert"), LINE, COLUMN, INSERTED_TEXT),
    st.tuples(st.sampled_from(["join", "delete", "repeat"]), LINE),
    st.tuples(st.just("split"), LINE, COLUMN),
)


#: Keys by the kind of value they hold: whole numbers, numbers, lists of strings (others hold strings).
WHOLE_KEYS = frozenset({"count", "cores", "slots", "nodes", "max_jobs"})
NUMBER_KEYS = frozenset({"speed", "node_speed", "recorded_speed", "walltime_factor"})
LIST_KEYS = frozenset({"platforms", "schedulers", "replay_models", "session_methods", "tables", "figures"})


def mutate_toml(text: str, mutations: list[tuple]) -> str:
    """Apply mutations to the lines of a TOML file: ``typed`` gives the n-th ``key = value`` line (modulo their
    number) a value of its key's kind, ``value`` any value, ``key`` another key, ``replace`` replaces a text (the
    explicit examples); the others are those of :func:`mutate_lines`."""
    lines = text.split("\n")
    for kind, *args in mutations:
        if kind == "replace":
            lines = "\n".join(lines).replace(*args).split("\n")
        elif kind in ("typed", "value", "key"):
            keyed = [i for i, line in enumerate(lines) if "=" in line and not line.lstrip().startswith("#")]
            if not keyed:
                continue
            i = keyed[args[0] % len(keyed)]
            key, _, value = lines[i].partition("=")
            if kind == "typed":
                name = key.strip()
                whole, number, word, words = args[1]
                value = (whole if name in WHOLE_KEYS else number if name in NUMBER_KEYS else
                         words if name in LIST_KEYS else word)
                lines[i] = f"{key.rstrip()} = {value}"
            else:
                lines[i] = f"{key.rstrip()} = {args[1]}" if kind == "value" else f"{args[1]} = {value.strip()}"
        else:
            lines = mutate_lines(lines, [(kind, *args)])
    return "\n".join(lines)


def run_main(argv: list[str]) -> tuple[int, str, str]:
    """``batreplay ARGV`` in this process; returns (exit status, stdout, stderr), failing on any exception other
    than the exit and on any warning a user would see."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                status = main(argv)
            except SystemExit as exit_:
                status = exit_.code
    printed = [w for w in caught if not issubclass(w.category, DeprecationWarning)]
    assert not printed, f"warnings a user would see: {[str(w.message) for w in printed]}"
    return status, stdout.getvalue(), stderr.getvalue()


def check_refusal(status: int, stderr: str) -> None:
    assert status == 2, f"exit status {status}: {stderr}"
    assert stderr.count("\n") == 1 and stderr.startswith("batreplay: error: "), stderr


def check_node_types_platform(types_file: Path, written: list[Path]) -> bool:
    """The platform (and variants) written for an accepted node types file: each type's nodes, cores, slots and
    speed, in file order; the variants scale every count (x2, /2 rounded halves up) or speed (x2, /2). Returns
    whether the platform is small enough for a run (at most RUN_NODES nodes: then it was read back)."""
    from fractions import Fraction

    from batreplay.platforms.generate import SCALED_VARIANTS, cluster_platform, scaled_count
    from batreplay.platforms.node_types import read_node_types
    from batreplay.platforms.reader import MAX_CORES, MAX_HOSTS, MIN_SPEED, read_platform

    types = read_node_types(types_file)
    total = sum(t.count for t in types)
    factors = (0.5, 1.0, 2.0) if len(written) > 1 else (1.0,)  # of the variants' counts and speeds
    assert total * max(factors) <= MAX_HOSTS, "more compute nodes than batreplay run reads"
    assert all(MIN_SPEED <= t.speed * f < math.inf for t in types for f in factors), "a speed SimGrid cannot read"
    assert all(t.cores <= MAX_CORES for t in types), "a core count SimGrid cannot read"
    if total > RUN_NODES:  # too large to read back in a fuzz example: the generator's text, written as is
        assert written[0].read_text() == cluster_platform(node_types=types)
        return False
    factors = [(1.0, 1.0), *SCALED_VARIANTS.values()]
    for path, (nodes_factor, speed_factor) in zip(written, factors):
        platform = read_platform(path)
        first = 0
        for t in types:
            count = scaled_count(t.count, Fraction(nodes_factor))
            assert platform.node_types[t.name] == list(range(first, first + count)), (path.name, t)
            hosts = platform.hosts[first:first + count]
            assert {(h.cores, h.slots, h.speed) for h in hosts} == {(t.cores, t.slots, t.speed * speed_factor)}
            first += count
        assert platform.nb_compute == first
    return True


def _too_slow_for_the_jobs(platform: Path) -> bool:
    """True when the first RUN_JOBS jobs of KTH-SP2 could take the simulation past MAX_SIMULATED_SECONDS on the
    slowest host of ``platform``: its longest job alone there after its last submission."""
    from batreplay.engine.profiles import MAX_SIMULATED_SECONDS
    from batreplay.platforms.reader import read_platform
    from batreplay.workloads.loading import WorkloadOptions, load_workload

    document = load_workload(KTH, WorkloadOptions(max_jobs=RUN_JOBS)).document
    slowest = float(min(read_platform(platform).speeds))
    last = max(job["subtime"] for job in document["jobs"])
    longest = max(float(p["cpu"]) for p in document["profiles"].values()) / slowest
    return last + longest > MAX_SIMULATED_SECONDS


@SMALL_FUZZ
@given(mutations=st.lists(TOML_MUTATION, min_size=1, max_size=3), variants=st.booleans())
# the cases of issue 25: written with exit 0, refused by batreplay run (or by real Batsim, or with a warning)
@example(mutations=[("replace", "count = 6", "count = 600000"), ("replace", "count = 5", "count = 600000")],
         variants=False)
@example(mutations=[("replace", "count = 6", "count = 10000000")], variants=False)
@example(mutations=[("replace", "count = 6", f"count = {2**62}")], variants=False)
@example(mutations=[("replace", "count = 6", "count = 500000")], variants=True)
@example(mutations=[("replace", "cores = 2", "cores = 2147483648")], variants=False)
@example(mutations=[("replace", "speed = 1e9", "speed = 5e-324")], variants=False)
@example(mutations=[("replace", "speed = 1e9", "speed = 1e308")], variants=True)
@example(mutations=[("replace", "speed = 1e9", "speed = true")], variants=False)
def test_mutated_node_types_give_a_platform_that_runs_or_fail_in_one_line(tmp_path, mutations, variants):
    here = Path(tempfile.mkdtemp(dir=tmp_path))
    types = here / "types.toml"
    types.write_text(mutate_toml(BASE_TYPES, mutations), encoding="utf-8", errors="surrogatepass")
    out = here / "p.xml"
    status, stdout, stderr = run_main(["platform", "--node-types", str(types), "--out", str(out),
                                       *(["--variants"] if variants else [])])
    event("accepted" if status == 0 else "refused")
    if status != 0:
        check_refusal(status, stderr)
        assert list(here.glob("*.xml")) == []  # refused before anything is written
        return
    written = [Path(line.removeprefix("wrote ")) for line in stdout.splitlines() if line.startswith("wrote ")]
    assert written[0] == out and len(written) == (5 if variants else 1)
    assert all(line.startswith(("wrote ", "note: ")) for line in stdout.splitlines()), stdout
    if not check_node_types_platform(types, written):
        return
    event("run")
    from batreplay.platforms.reader import read_platform

    run = here / "run"
    status, _stdout, stderr = run_main(["run", "--workload", str(KTH), "--max-jobs", str(RUN_JOBS), "--platform",
                                        str(out), "--scheduler", "easy", "--out", str(run), "--quiet"])
    if _too_slow_for_the_jobs(out):  # refused for this workload, as the run's own check says (engine/profiles.py)
        event("too slow for the jobs")
        check_refusal(status, stderr)
        assert "beyond which the embedded engine and a real Batsim 4.2.1 no longer agree" in stderr, stderr
        return
    assert status == 0, f"batreplay run refused a platform that batreplay platform wrote: {stderr}"
    check_out_jobs(run, [h.speed for h in read_platform(out).hosts])


def _campaign_base(folder: Path) -> str:
    """expe/quick.toml made small: absolute paths, 20 jobs, a node types log and a generated cluster beside the
    recorded machine, and variants of node counts and speeds."""
    (folder / "types.toml").write_text(BASE_TYPES)
    text = (REPO_ROOT / "expe" / "quick.toml").read_text()
    text = text.replace('root = ".."', f'root = "{REPO_ROOT.as_posix()}"')
    text = text.replace('output_root = "runs/campaigns/quick"', f'output_root = "{(folder / "out").as_posix()}"')
    text = text.replace("max_jobs = 3000", f"max_jobs = {RUN_JOBS}")
    workload = f'workload = "{KTH.as_posix()}"'
    text = text.replace('workload = "../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz"', workload)
    extra = (f'\n[[logs]]\nname = "grid"\n{workload}\nnode_types = "{(folder / "types.toml").as_posix()}"\n'
             f"max_jobs = {RUN_JOBS}\n\n[[logs]]\nname = \"cluster\"\n{workload}\nnodes = 8\nnode_speed = 2e9\n"
             f"max_jobs = {RUN_JOBS}\n\n[matrix]")
    text = text.replace("\n[matrix]", extra, 1)
    return text.replace('platforms = ["recorded", "speed-d2"]', 'platforms = ["recorded", "speed-d2", "nodes-x2"]')


@SMALL_FUZZ
@given(mutations=st.lists(TOML_MUTATION, min_size=1, max_size=3), types=st.lists(TOML_MUTATION, max_size=1))
# the cases of issue 25: accepted when loaded, then every instance on the platform failed (or a traceback)
@example(mutations=[("replace", "nodes = 8", "nodes = 600000")], types=[])
@example(mutations=[("replace", "nodes = 8", "nodes = 1000001")], types=[])
@example(mutations=[], types=[("replace", "count = 6", "count = 400000"), ("replace", "count = 5", "count = 200000")])
@example(mutations=[("replace", '"nodes-x2"]', '"nodes-x' + "9" * 400 + '"]')], types=[])
@example(mutations=[("replace", "node_speed = 2e9", "node_speed = 3e-308")], types=[])
def test_mutated_campaign_files_load_or_fail_in_one_line(tmp_path, mutations, types):
    from batreplay.campaign.platforms import prepare_platforms
    from batreplay.campaign.spec import load_campaign

    here = Path(tempfile.mkdtemp(dir=tmp_path))
    text = _campaign_base(here)
    (here / "types.toml").write_text(mutate_toml(BASE_TYPES, types), encoding="utf-8", errors="surrogatepass")
    spec_file = here / "c.toml"
    spec_file.write_text(mutate_toml(text, mutations), encoding="utf-8", errors="surrogatepass")
    out = here / "runs"
    status, stdout, stderr = run_main(["campaign", "run", str(spec_file), "--dry-run", "--output-root", str(out)])
    event("accepted" if status == 0 else "refused")
    if status != 0:
        check_refusal(status, stderr)
        return
    spec = load_campaign(spec_file, output_root=out)
    instances = spec.instances()
    assert stdout.split() == [instance.id for instance in instances]
    # a campaign accepted is one whose instances run: each platform within the limits, and generated
    check_campaign_platforms(spec, instances)
    if all((log.nodes or 0) <= RUN_NODES for log in spec.logs):
        from batreplay.platforms.reader import read_platform

        for path in prepare_platforms(spec, instances):
            assert read_platform(path).nb_compute >= 1
    assert not out.exists() or {p.name for p in out.iterdir()} <= {"platforms"}


def check_campaign_platforms(spec, instances) -> None:
    """Every platform the instances of an accepted campaign run on has whole node counts, at most MAX_HOSTS
    compute nodes in all and speeds SimGrid reads (checked without generating them: a million nodes take seconds
    to read back)."""
    from fractions import Fraction

    from batreplay.platforms.node_types import read_node_types
    from batreplay.platforms.reader import MAX_HOSTS, MIN_SPEED, read_platform
    from batreplay.platforms.shipped import SHIPPED_PLATFORMS

    for instance in instances:
        log, variant = instance.log, instance.experiment.variant
        if log.node_types is not None:
            groups = [(t.count, t.speed) for t in read_node_types(spec.resolve(log.node_types))]
        elif log.platform is None:
            groups = [(log.nodes, log.node_speed)]
        else:
            path = SHIPPED_PLATFORMS.get(log.platform) or spec.resolve(log.platform)
            groups = [(count, speed) for count, speed, _c, _p in read_platform(path).host_groups()]
        counts = [count * Fraction(variant.nodes_factor) for count, _ in groups]
        assert all(c.denominator == 1 and c >= 1 for c in counts) and sum(counts) <= MAX_HOSTS, (instance.id, counts)
        speeds = [speed * variant.speed_factor for _, speed in groups]
        assert all(MIN_SPEED <= s < float("inf") for s in speeds), (instance.id, speeds)
