"""Execution time of a Batsim job profile on a set of hosts, composed profiles, and jobs that move bytes.

What Batsim 4.2.1 does with the profile types the embedded engine plays, on platforms whose links have no latency
(see ``../shared/docs/batsim-protocol-notes.md``, section "Resources and timing"):

- ``delay``: the job lasts exactly ``delay`` seconds, whatever the hosts;
- ``parallel_homogeneous`` with ``com = 0``: every host computes ``cpu`` flop, so the job lasts
  ``cpu / min(speed)`` seconds over the allocated hosts;
- ``parallel_homogeneous_total`` with ``com = 0``: ``cpu`` flop are split evenly over the allocated hosts,
  so the job lasts ``(cpu / n) / min(speed)``;
- ``parallel`` with an all-zero ``com`` matrix: host ``i`` computes ``cpu[i]`` flop, so the job lasts
  ``max_i cpu[i] / speed[i]``;
- ``composed`` (``seq``: profile names, ``repeat``: how many times the sequence runs, default 1): the job runs its
  *leaves* one after the other (:func:`leaves_of`), each a profile above, on the same hosts; the walltime is
  counted down across them (:mod:`batreplay.engine.execution`);
- ``parallel_homogeneous_pfs``: each host of the job reads ``bytes_to_read`` from the storage host and writes
  ``bytes_to_write`` to it; the time depends on the links and on the other jobs using them;
- ``data_staging``: ``nb_bytes`` go from the storage host labelled ``from`` to the one labelled ``to`` (labels of
  the storage mapping the decision process gives with EXECUTE_JOB);
- the compute profiles with communication (``com`` > 0 between hosts): the bytes cross the links of the routes
  between the hosts, and the task's one rate comes from its hosts and those links together, shared with the other
  jobs that move bytes (:mod:`batreplay.engine.transfers`).

Every profile may carry ``ret``, the return code of a step that succeeds (default 0): a step whose code is not 0
ends a composed job there, and a job whose code is positive ends ``COMPLETED_FAILED``.

Anything else (SMPI traces, usage traces, energy) is outside what the embedded engine reproduces:
:class:`UnsupportedProfileError` says so and names real Batsim as the way to run it. This module imports nothing
from batreplay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SUPPORTED_PROFILE_TYPES = ("delay", "parallel_homogeneous", "parallel_homogeneous_total", "parallel", "composed",
                           "parallel_homogeneous_pfs", "data_staging")
COMPOSED = "composed"
#: Jobs that read and write: each allocated host reads ``bytes_to_read`` from the storage host and writes
#: ``bytes_to_write`` to it, over the links of its route (:class:`batreplay.engine.execution.Machine`).
PFS = "parallel_homogeneous_pfs"
#: Jobs that move ``nb_bytes`` from the storage host labelled ``from`` to the one labelled ``to`` (the labels of the
#: decision process's storage mapping); nothing is computed.
DATA_STAGING = "data_staging"
#: The deepest nesting of composed profiles the embedded engine runs (each level is a Python call).
MAX_NESTING = 100


class UnsupportedProfileError(ValueError):
    """A profile the embedded engine cannot execute exactly; real Batsim can."""


class InvalidProfileError(ValueError):
    """A profile that Batsim itself would refuse (for instance a non-positive delay)."""


def _check_communication(profile: Mapping, name: str) -> None:
    """Batsim 4.2.1's checks of ``com``: a number of bytes >= 0 (``parallel_homogeneous``, ``_total``), or for
    ``parallel`` a list of ``len(cpu)`` squared numbers >= 0 (row ``i``: the bytes host ``i`` sends to each host).
    A missing ``com`` counts as 0 here (Batsim requires the field)."""
    com = profile.get("com", 0)
    if profile.get("type") == "parallel":
        size = len(profile["cpu"])
        if com == 0:
            return
        if not isinstance(com, (list, tuple)) or len(com) != size * size:
            raise InvalidProfileError(f"profile '{name}' (parallel): 'com' must be a list of {size * size} numbers "
                                      f"of bytes ({size} hosts by {size})")
        values = com
    else:
        values = [com]
    if any(type(value) not in (int, float) or not value >= 0 for value in values):
        raise InvalidProfileError(f"profile '{name}' ({profile.get('type')}): 'com' must hold numbers of bytes >= 0")


def _check_return_code(name: str, profile: Mapping) -> None:
    """Batsim reads ``ret`` as a C int; -2 (killed) would leave the job running forever and below -2 Batsim
    aborts, so only codes from -1 up are accepted (-1: the job ends as if its walltime were reached)."""
    code = profile.get("ret", 0)
    if type(code) is not int or not -1 <= code <= 2**31 - 1:
        raise InvalidProfileError(f"profile '{name}': 'ret' must be an integer from -1 to 2147483647 (got {code!r}); "
                                  "Batsim 4.2.1 aborts on other values, or never ends the job for -2")


def _check_composed(name: str, profile: Mapping) -> None:
    repeat = profile.get("repeat", 1)
    if type(repeat) is not int or repeat < 1:
        raise InvalidProfileError(f"profile '{name}' (composed): 'repeat' must be an integer >= 1 (got {repeat!r})")
    seq = profile["seq"]
    if not isinstance(seq, (list, tuple)) or not seq or not all(isinstance(item, str) for item in seq):
        raise InvalidProfileError(f"profile '{name}' (composed): 'seq' must be a non-empty list of profile names")


def _check_pfs(name: str, profile: Mapping) -> None:
    if "bytes_to_read" not in profile and "bytes_to_write" not in profile:
        raise InvalidProfileError(f"profile '{name}' ({PFS}) has neither 'bytes_to_read' nor 'bytes_to_write'")
    for field in ("bytes_to_read", "bytes_to_write"):
        value = profile.get(field, 0)
        if type(value) not in (int, float):
            raise InvalidProfileError(f"profile '{name}' ({PFS}): '{field}' must be a number of bytes (got {value!r})")
    field = "storage" if "storage" in profile else "host"  # (Batsim reads 'host' only without 'storage')
    if field in profile and not isinstance(profile[field], str):
        raise InvalidProfileError(f"profile '{name}' ({PFS}): '{field}' must be a storage label (a string)")


def _check_staging(name: str, profile: Mapping) -> None:
    value = profile["nb_bytes"]
    if type(value) not in (int, float) or not value >= 0:
        raise InvalidProfileError(f"profile '{name}' ({DATA_STAGING}): 'nb_bytes' must be a number of bytes >= 0 "
                                  f"(got {value!r})")
    for field in ("from", "to"):
        if not isinstance(profile[field], str):
            raise InvalidProfileError(f"profile '{name}' ({DATA_STAGING}): '{field}' must be a storage label (a string)")


def validate_profile(name: str, profile: Mapping) -> None:
    """Check that ``profile`` can be executed by the embedded engine (a composed profile's own fields only: see
    :func:`validate_profiles` for the profiles its ``seq`` names).

    Raises:
        InvalidProfileError: a profile Batsim refuses too (``delay <= 0``, missing field, bad ``cpu`` list, a
            ``repeat`` below 1, an empty ``seq``, a ``ret`` that is not an integer of at least -1).
        UnsupportedProfileError: a valid Batsim profile of a type the engine does not play (whether the engine can
            play the bytes a profile moves on a platform is :meth:`.handlers.Handlers.check_transfers`'s question).
    """
    kind = profile.get("type")
    if kind not in SUPPORTED_PROFILE_TYPES:
        raise UnsupportedProfileError(
            f"profile '{name}' has type '{kind}', which the embedded engine does not simulate "
            f"(supported: {', '.join(SUPPORTED_PROFILE_TYPES)}). Run it with a real Batsim: "
            "batreplay run --engine batsim"
        )
    _check_return_code(name, profile)
    try:
        if kind == "delay":
            if float(profile["delay"]) <= 0:
                raise InvalidProfileError(
                    f"profile '{name}': delay must be > 0 s (Batsim refuses {profile['delay']!r})"
                )
        elif kind == COMPOSED:
            _check_composed(name, profile)
        elif kind == PFS:
            _check_pfs(name, profile)
        elif kind == DATA_STAGING:
            _check_staging(name, profile)
        elif kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
            if float(profile["cpu"]) < 0:
                raise InvalidProfileError(f"profile '{name}': cpu must be >= 0 flop")
            _check_communication(profile, name)
        else:  # parallel
            cpu = profile["cpu"]
            if not isinstance(cpu, (list, tuple)) or any(float(c) < 0 for c in cpu):
                raise InvalidProfileError(f"profile '{name}': 'cpu' must be a list of non-negative flop amounts")
            _check_communication(profile, name)
    except KeyError as missing:
        raise InvalidProfileError(f"profile '{name}' ({kind}) lacks the field {missing}") from None


def validate_profiles(profiles: Mapping[str, Mapping]) -> None:
    """Check every profile of one workload (``{name: profile}``), composed ones with the profiles they name:
    each name of a ``seq`` must be a profile of the same workload, and no composed profile may contain itself
    (Batsim 4.2.1 does not check it, and recurses until it crashes when a job of such a profile starts). Each
    profile is visited once, whatever the nesting (a depth-first walk, without recursion).

    Raises:
        InvalidProfileError, UnsupportedProfileError: as :func:`validate_profile`; an unknown name in a ``seq``, or
            a composed profile that contains itself, naming the chain.
    """
    for name, profile in profiles.items():
        validate_profile(name, profile)
    depth: dict[str, int] = {}  # composed profiles checked, with their nesting depth (1: only plain steps)
    for name, profile in profiles.items():
        if profile.get("type") == COMPOSED and name not in depth:
            _check_sequence(profiles, name, depth)


def _check_sequence(profiles: Mapping[str, Mapping], root: str, depth: dict[str, int]) -> None:
    """Walk the composed profiles reachable from ``root`` depth first, each once; ``depth`` holds those checked."""
    chain = [root]  # the composed profiles being walked, outermost first
    positions = [0]  # the next item of each one's seq
    while chain:
        name = chain[-1]
        seq = profiles[name]["seq"]
        if positions[-1] == len(seq):
            depth[name] = 1 + max((depth.get(item, 0) for item in seq), default=0)
            if depth[name] > MAX_NESTING:
                raise InvalidProfileError(f"composed profile '{name}' nests composed profiles {depth[name]} deep, "
                                          f"more than the {MAX_NESTING} the embedded engine runs")
            chain.pop()
            positions.pop()
            continue
        item = seq[positions[-1]]
        positions[-1] += 1
        if item not in profiles:
            raise InvalidProfileError(f"composed profile '{name}': the profile '{item}' of its 'seq' does not exist")
        if item in chain:
            raise InvalidProfileError(f"composed profile '{item}' contains itself: "
                                      f"{' -> '.join(chain[chain.index(item):] + [item])}")
        if profiles[item].get("type") == COMPOSED and item not in depth:
            chain.append(item)
            positions.append(0)


def profiles_in_use(profiles: Mapping[str, Mapping], used: set[str]) -> set[str]:
    """The profiles Batsim 4.2.1 keeps once a workload file is read: those its jobs use (``used``) and the steps of
    the composed ones among them, at any depth (it drops the others: SIMULATION_BEGINS does not list them).

    A step named only by composed profiles that no job uses is dropped too; Batsim keeps it or not depending on
    the order of its hash table (a composed profile dropped before its step releases it): the profile lists of
    SIMULATION_BEGINS may then differ, never a job's execution (no job can use those profiles)."""
    kept = set()
    pending = [name for name in used if name in profiles]
    while pending:
        name = pending.pop()
        if name not in kept:
            kept.add(name)
            if profiles[name].get("type") == COMPOSED:
                pending.extend(item for item in profiles[name]["seq"] if item in profiles)
    return kept


@dataclass(frozen=True, slots=True)
class Leaf:
    """One step of a job's execution: a profile that is not composed, run on the job's hosts.

    Attributes:
        name: the profile's name; profile: the profile (its JSON object).
        path: the composed profiles that lead to it, outermost first, each with the index of this step among its
            steps (``repeat`` times its ``seq``: Batsim's ``current_task_index``); empty for a job whose profile is
            not composed.
    """

    name: str
    profile: Mapping
    path: tuple[tuple[str, int], ...] = ()
    closes: tuple[int, ...] = ()


def leaves_of(profiles: Mapping[str, Mapping], name: str) -> list[Leaf]:
    """The steps a job of profile ``name`` runs, in order: the profile itself if it is not composed, otherwise its
    ``seq`` ``repeat`` times, composed steps expanded in place (Batsim 4.2.1, ``initialize_sequential_tasks``).
    The profiles must have passed :func:`validate_profiles`."""
    profile = profiles[name]
    if profile.get("type") != COMPOSED:
        return [Leaf(name, profile)]
    steps = []
    seq = profile["seq"]
    for repeated in range(profile.get("repeat", 1)):
        for position, item in enumerate(seq):
            index = repeated * len(seq) + position
            steps.extend(Leaf(leaf.name, leaf.profile, ((name, index),) + leaf.path, leaf.closes)
                         for leaf in leaves_of(profiles, item))
    last = steps[-1]
    steps[-1] = Leaf(last.name, last.profile, last.path, last.closes + (profile.get("ret", 0),))
    return steps


def may_take_other_sizes(profiles: Mapping[str, Mapping], name: str) -> bool:
    """Whether a job of profile ``name`` may be given another number of hosts than it requests: Batsim 4.2.1
    allows it for ``parallel_homogeneous_total``, and for a composed profile whose ``seq`` names only such
    profiles (its direct steps: a composed step inside does not count)."""
    profile = profiles[name]
    if profile.get("type") == COMPOSED:
        return all(profiles[item].get("type") == "parallel_homogeneous_total" for item in profile["seq"])
    return profile.get("type") == "parallel_homogeneous_total"


def host_flops(profile: Mapping, nb_hosts: int) -> list[float]:
    """Flop a compute profile's parallel task computes on each of its ``nb_hosts`` hosts, in allocation order:
    ``cpu`` on each (``parallel_homogeneous``), ``cpu / nb_hosts`` on each (``parallel_homogeneous_total``), the
    ``cpu`` vector (``parallel``). The profile must have passed :func:`validate_profile` and not be ``delay``.

    Raises:
        ValueError: a ``parallel`` profile whose ``cpu`` vector length differs from ``nb_hosts``.
    """
    kind = profile["type"]
    if kind == "parallel_homogeneous":
        return [float(profile["cpu"])] * nb_hosts
    if kind == "parallel_homogeneous_total":
        return [float(profile["cpu"]) / nb_hosts] * nb_hosts
    cpu = profile["cpu"]
    if len(cpu) != nb_hosts:
        raise ValueError(f"parallel profile has {len(cpu)} cpu values but the job was allocated {nb_hosts} hosts")
    return [float(c) for c in cpu]


def execution_time(profile: Mapping, speeds: Sequence[float]) -> float:
    """Seconds a job with ``profile`` takes on hosts of the given ``speeds`` (flop/s, allocation order).

    ``speeds`` lists the allocated hosts by increasing resource id, which is the order Batsim maps the
    ``cpu`` vector of a ``parallel`` profile onto. The profile must have passed :func:`validate_profile`.

    Raises:
        ValueError: a ``parallel`` profile whose ``cpu`` vector length differs from the allocation size.
    """
    kind = profile["type"]
    if kind == "delay":
        return float(profile["delay"])
    if kind == "parallel_homogeneous":
        return float(profile["cpu"]) / min(speeds)
    if kind == "parallel_homogeneous_total":
        return (float(profile["cpu"]) / len(speeds)) / min(speeds)
    cpu = profile["cpu"]
    if len(cpu) != len(speeds):
        raise ValueError(
            f"parallel profile has {len(cpu)} cpu values but the job was allocated {len(speeds)} hosts"
        )
    return max(float(c) / s for c, s in zip(cpu, speeds))


#: The latest simulated time, s (about 317 years), that a run may reach by its last submission plus its longest job
#: alone on the slowest host. Beyond about 1e12 s the embedded engine and a real Batsim 4.2.1 were seen to disagree
#: on runs of 100 concurrent jobs (SimGrid's absolute precisions), and from 1e23 s Batsim aborts (it prints times
#: into a fixed buffer); 1e10 s leaves a margin of 100 and is far beyond any real log (measured 2026-11-27, issue 25).
MAX_SIMULATED_SECONDS = 1e10


def longest_time_alone(profile: Mapping, slowest_speed: float, profiles: Mapping[str, Mapping] | None = None,
                       io: tuple[float, int] | None = None) -> float:
    """An upper bound, s, of the time a job of ``profile`` takes on hosts of at least ``slowest_speed`` flop/s with
    no other job: its delay, or its largest per-host flop / ``slowest_speed`` (a ``parallel_homogeneous_total``
    counted as if on one host); for a composed profile, the sum over its steps (``profiles``: the workload's
    profiles, by name, which its ``seq`` names); with ``io`` = (the platform's slowest link, bytes/s; the most hosts
    the job may have), a job that moves bytes adds all its bytes (a PFS job: on every host) over that link. 0 for a
    profile type the embedded engine does not simulate (a real Batsim's)."""
    kind = profile.get("type")
    if kind == "delay":
        return float(profile["delay"])
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        return float(profile["cpu"]) / slowest_speed + _bytes_bound(profile, io)
    if kind == "parallel":
        return max((float(c) for c in profile["cpu"]), default=0.0) / slowest_speed + _bytes_bound(profile, io)
    if kind == COMPOSED and profiles is not None:
        return _longest_sequence(profile, slowest_speed, profiles, (), io=io)
    if kind == PFS and io is not None:
        moved = sum(max(float(profile.get(field, 0)), 0.0) for field in ("bytes_to_read", "bytes_to_write"))
        return moved * io[1] / io[0]
    if kind == DATA_STAGING and io is not None:
        return max(float(profile.get("nb_bytes", 0)), 0.0) / io[0]
    return 0.0


def _bytes_bound(profile: Mapping, io: tuple[float, int] | None) -> float:
    """An upper bound, s, of the time the bytes of a compute profile take alone on links of at least ``io[0]``
    bytes/s (``io[1]`` hosts at most): all its bytes over the slowest link; 0 without ``io``."""
    if io is None:
        return 0.0
    kind, com, hosts = profile.get("type"), profile.get("com", 0), io[1]
    if kind == "parallel" and isinstance(com, (list, tuple)):
        return sum(max(float(value), 0.0) for value in com) / io[0]
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total") and not isinstance(com, (list, tuple)):
        return max(float(com), 0.0) * hosts * (hosts - 1) / io[0]
    return 0.0


def _longest_sequence(profile: Mapping, slowest_speed: float, profiles: Mapping[str, Mapping],
                      chain: tuple[int, ...], known: dict[int, float] | None = None,
                      io: tuple[float, int] | None = None) -> float:
    """:func:`longest_time_alone` of a composed profile, each composed profile computed once (``known``, by
    ``id``); names that are not profiles count 0 s (Batsim refuses them itself), and so does a profile met again
    inside itself (Batsim crashes only when a job of it starts: :func:`validate_profiles` refuses it)."""
    known = {} if known is None else known
    if len(chain) > MAX_NESTING:
        raise InvalidProfileError(f"composed profiles nested more than {MAX_NESTING} deep")
    total = 0.0
    for item in profile.get("seq", ()):
        step = profiles.get(item) if isinstance(item, str) else None
        if not isinstance(step, Mapping) or id(step) in chain or id(step) == id(profile):
            continue
        if step.get("type") == COMPOSED:
            if id(step) not in known:
                known[id(step)] = _longest_sequence(step, slowest_speed, profiles, chain + (id(profile),), known, io)
            total += known[id(step)]
        else:
            total += longest_time_alone(step, slowest_speed, io=io)
    repeat = profile.get("repeat", 1)
    return total * (repeat if type(repeat) is int else 1)


def check_simulated_times(workload: Mapping, slowest_speed: float, io: tuple[float, int] | None = None) -> None:
    """Refuse a workload (Batsim JSON document) whose last submission plus its longest job alone on the slowest
    host (``slowest_speed``, flop/s; for jobs that move bytes, ``io`` as in :func:`longest_time_alone`, the hosts
    being at most those the profile's jobs request, or the widest job's for a profile no job uses; the steps of a
    composed profile are bounded inside it) passes :data:`MAX_SIMULATED_SECONDS`, where the two engines no longer
    agree.

    Raises:
        ValueError: naming the profile, its bound and the slowest speed.
    """
    last = max((float(job.get("subtime", 0)) for job in workload.get("jobs", ())), default=0.0)
    profiles = workload.get("profiles", {})
    widest: dict[str, int] = {}  # the most hosts a job of each profile requests (bytes grow with them)
    for job in workload.get("jobs", ()):
        res = job.get("res")
        if isinstance(res, int) and isinstance(job.get("profile"), str):
            widest[job["profile"]] = max(widest.get(job["profile"], 0), res)
    try:
        steps = profiles_in_use(profiles, set(widest)) - set(widest)  # bounded inside the composed profiles they are in
    except (KeyError, TypeError, AttributeError):  # (a malformed composed profile: refused by the validation later)
        steps = set()
    anyone = max(widest.values(), default=io[1] if io else 0)  # a profile no job uses: the widest job of the file
    for name, profile in profiles.items():
        if name in steps:
            continue
        hosts = io if io is None else (io[0], min(io[1], widest.get(name, anyone)))
        seconds = longest_time_alone(profile, slowest_speed, profiles, hosts)
        if last + seconds > MAX_SIMULATED_SECONDS:
            raise ValueError(f"profile '{name}' takes up to {seconds:.4g} s on the slowest host ({slowest_speed:g} "
                             f"flop/s): with the last submission at {last:.4g} s the simulation could pass "
                             f"{MAX_SIMULATED_SECONDS:g} s, beyond which the embedded engine and a real Batsim 4.2.1 "
                             "no longer agree: use faster hosts, or shorter jobs (for an SWF log, a lower "
                             "--recorded-speed or --profile delay)")

