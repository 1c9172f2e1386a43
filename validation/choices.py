"""The validation command's choices, importable without numpy (the ``batreplay`` parser shows them at once)."""

#: How a model is simulated for validation: a closed population (Caspart et al. 2019), or an open workload.
MODES = ("closed", "open")
