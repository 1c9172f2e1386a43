"""Experiment campaigns: declarative specs expanded into simulation instances, run in parallel, reported."""
