"""Batsim's output file formats, owned in one place: ``out_jobs.csv`` (:mod:`batreplay.formats.out_jobs`: columns,
final job states, the row a simulation produces, writer, reader and validator) and ``out_schedule.csv``
(:mod:`batreplay.formats.out_schedule`: aggregates with Batsim's conventions, writer). The embedded engine writes
these files and analysis reads them (ours or a real Batsim's), so the package is a foundation layer: it may import
only the foundation modules :mod:`batreplay.atomic` and :mod:`batreplay.deadline`, plus numpy, pandas and procset.
"""
