"""Batsim's output file formats, owned in one place: ``out_jobs.csv`` (:mod:`batreplay.formats.out_jobs`: columns,
final job states, reader and validator; :mod:`batreplay.formats.out_jobs_writer`: the row a simulation produces and
the writer) and ``out_schedule.csv`` (:mod:`batreplay.formats.out_schedule`: aggregates with Batsim's conventions,
writer), with their names in a light module (:mod:`batreplay.formats.names`) and the CSV table writer that writes
pandas' ``to_csv`` bytes without pandas (:mod:`batreplay.formats.table_csv`: ``out_schedule.csv`` and a run's
``jobs.csv``). The embedded engine writes these files and analysis reads them (ours or a real Batsim's), so the
package is a foundation layer: it may import only the foundation modules :mod:`batreplay.atomic` and
:mod:`batreplay.deadline`, plus numpy, pandas and procset. The writers import no pandas: it is imported by the
reader, the validator and the functions that return a table.
"""
