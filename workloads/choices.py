"""The allowed values and defaults of the workload conversion options, in a module that imports nothing.

The converter (:mod:`batreplay.workloads.batsim_workload`) checks its arguments against these tuples, and
:class:`batreplay.workloads.loading.WorkloadOptions` takes its defaults from here; the command line and campaign
files read their choices from here too, so that ``batreplay run --help`` and an argument error need neither pandas
nor numpy. The first value of each tuple is the default.
"""

from __future__ import annotations

#: How SWF run times become Batsim profiles: ``parallel_homogeneous`` (run time x recorded speed flop per node, so
#: jobs follow the node speed of the platform) or ``delay`` (run time in seconds, whatever the platform).
PROFILE_TYPES: tuple[str, ...] = ("parallel_homogeneous", "delay")
#: What becomes of SWF jobs whose run time is 0 s (Batsim refuses a delay of 0 s): ``drop`` them (counted in the
#: notes) or give them the ``min`` run time of 1 s.
ZERO_RUNTIME_CHOICES: tuple[str, ...] = ("drop", "min")
#: Which SWF processor count gives a job's requested resources (the other one is the fallback when missing):
#: ``allocated`` (field 5, what the job had) or ``requested`` (field 8, what it asked for; Rauch 2022's choice).
RES_SOURCE_CHOICES: tuple[str, ...] = ("allocated", "requested")

#: Default profile type (``--profile``): follows the node speed of the platform.
DEFAULT_PROFILE: str = PROFILE_TYPES[0]
#: Default treatment of zero run times (``--zero-runtime``): drop the jobs, and count them.
DEFAULT_ZERO_RUNTIME: str = ZERO_RUNTIME_CHOICES[0]
#: Default processor count of a job (``--res-source``): the allocated processors, SWF field 5.
DEFAULT_RES_SOURCE: str = RES_SOURCE_CHOICES[0]
#: Node speed of the recorded machine assumed by default, flop/s (1 Gflop/s: the node speed of the shipped
#: platforms, see :mod:`batreplay.platforms.shipped`, so that a job lasts its recorded run time there).
DEFAULT_RECORDED_SPEED: float = 1e9
#: Bytes/s a node read or wrote at when the log was recorded, by default: demand rounds turn I/O seconds into bytes
#: at this rate (:mod:`batreplay.workloads.demand_rounds`).
DEFAULT_REFERENCE_IO_RATE: float = 1e8
