"""Execution time of a Batsim job profile on a set of hosts (compute-only jobs).

What Batsim 4.2.1 does with the compute-only profile types, on platforms whose links have no latency
(see ``../shared/docs/batsim-protocol-notes.md``, section "Resources and timing"):

- ``delay``: the job lasts exactly ``delay`` seconds, whatever the hosts;
- ``parallel_homogeneous`` with ``com = 0``: every host computes ``cpu`` flop, so the job lasts
  ``cpu / min(speed)`` seconds over the allocated hosts;
- ``parallel_homogeneous_total`` with ``com = 0``: ``cpu`` flop are split evenly over the allocated hosts,
  so the job lasts ``(cpu / n) / min(speed)``;
- ``parallel`` with an all-zero ``com`` matrix: host ``i`` computes ``cpu[i]`` flop, so the job lasts
  ``max_i cpu[i] / speed[i]``.

Anything else (communication, SMPI traces, sequences, I/O, energy) is outside what the embedded engine
reproduces: :class:`UnsupportedProfileError` says so and names real Batsim as the way to run it. This module
imports nothing from batreplay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

SUPPORTED_PROFILE_TYPES = ("delay", "parallel_homogeneous", "parallel_homogeneous_total", "parallel")


class UnsupportedProfileError(ValueError):
    """A profile the embedded engine cannot execute exactly; real Batsim can."""


class InvalidProfileError(ValueError):
    """A profile that Batsim itself would refuse (for instance a non-positive delay)."""


def _zero_communication(profile: Mapping, name: str) -> None:
    com = profile.get("com", 0)
    values = com if isinstance(com, (list, tuple)) else [com]
    if any(float(v) != 0.0 for v in values):
        raise UnsupportedProfileError(
            f"profile '{name}' ({profile.get('type')}) has communication (com != 0); the embedded engine "
            "only runs compute-only jobs. Run it with a real Batsim: batreplay run --engine batsim"
        )


def validate_profile(name: str, profile: Mapping) -> None:
    """Check that ``profile`` can be executed by the embedded engine.

    Raises:
        InvalidProfileError: a profile Batsim refuses too (``delay <= 0``, missing field, bad ``cpu`` list).
        UnsupportedProfileError: a valid Batsim profile outside the compute-only subset.
    """
    kind = profile.get("type")
    if kind not in SUPPORTED_PROFILE_TYPES:
        raise UnsupportedProfileError(
            f"profile '{name}' has type '{kind}', which the embedded engine does not simulate "
            f"(supported: {', '.join(SUPPORTED_PROFILE_TYPES)}). Run it with a real Batsim: "
            "batreplay run --engine batsim"
        )
    try:
        if kind == "delay":
            if float(profile["delay"]) <= 0:
                raise InvalidProfileError(
                    f"profile '{name}': delay must be > 0 s (Batsim refuses {profile['delay']!r})"
                )
        elif kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
            if float(profile["cpu"]) < 0:
                raise InvalidProfileError(f"profile '{name}': cpu must be >= 0 flop")
            _zero_communication(profile, name)
        else:  # parallel
            cpu = profile["cpu"]
            if not isinstance(cpu, (list, tuple)) or any(float(c) < 0 for c in cpu):
                raise InvalidProfileError(f"profile '{name}': 'cpu' must be a list of non-negative flop amounts")
            _zero_communication(profile, name)
    except KeyError as missing:
        raise InvalidProfileError(f"profile '{name}' ({kind}) lacks the field {missing}") from None


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


def longest_time_alone(profile: Mapping, slowest_speed: float) -> float:
    """An upper bound, s, of the time a job of ``profile`` takes on hosts of at least ``slowest_speed`` flop/s with
    no other job: its delay, or its largest per-host flop / ``slowest_speed`` (a ``parallel_homogeneous_total``
    counted as if on one host). 0 for a profile type the embedded engine does not simulate (a real Batsim's)."""
    kind = profile.get("type")
    if kind == "delay":
        return float(profile["delay"])
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        return float(profile["cpu"]) / slowest_speed
    if kind == "parallel":
        return max((float(c) for c in profile["cpu"]), default=0.0) / slowest_speed
    return 0.0


def check_simulated_times(workload: Mapping, slowest_speed: float) -> None:
    """Refuse a workload (Batsim JSON document) whose last submission plus its longest job alone on the slowest
    host (``slowest_speed``, flop/s) passes :data:`MAX_SIMULATED_SECONDS`, where the two engines no longer agree.

    Raises:
        ValueError: naming the profile, its bound and the slowest speed.
    """
    last = max((float(job.get("subtime", 0)) for job in workload.get("jobs", ())), default=0.0)
    for name, profile in workload.get("profiles", {}).items():
        seconds = longest_time_alone(profile, slowest_speed)
        if last + seconds > MAX_SIMULATED_SECONDS:
            raise ValueError(f"profile '{name}' takes up to {seconds:.4g} s on the slowest host ({slowest_speed:g} "
                             f"flop/s): with the last submission at {last:.4g} s the simulation could pass "
                             f"{MAX_SIMULATED_SECONDS:g} s, beyond which the embedded engine and a real Batsim 4.2.1 "
                             "no longer agree: use faster hosts, or shorter jobs (for an SWF log, a lower "
                             "--recorded-speed or --profile delay)")

