"""batreplay: HPC job-scheduling research on Batsim/SimGrid, under one import namespace.

This folder holds the top and the bottom of the package. At the top, the ``batreplay`` command (:mod:`batreplay.cli`),
which may import every layer. At the bottom, two foundation modules any layer may import, which import nothing of
the project: :mod:`batreplay.atomic` (files and directories written atomically, run-directory recovery) and
:mod:`batreplay.deadline` (a wall-clock limit on a run). The layers in between, lowest first: formats (foundation),
workloads and platforms, schedulers and replay (users), engine, analysis, run, campaign; a module imports only its
own layer and lower ones (``tests/test_layers.py``).
"""
