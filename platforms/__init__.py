"""Platforms: SimGrid XML clusters that Batsim 4.2 accepts. The reader (:mod:`~batreplay.platforms.reader`) turns a
file into compute hosts with Batsim's resource ids and speeds, the generator (:mod:`~batreplay.platforms.generate`)
writes clusters and their variants scaled in node count and node speed, and two IBM SP2 machines are shipped
(:mod:`~batreplay.platforms.shipped`). Like workloads, it is an input layer: it may import only the foundation
modules (:mod:`batreplay.atomic`, :mod:`batreplay.deadline`, :mod:`batreplay.formats`), never the layers above.
"""
