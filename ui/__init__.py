"""The web GUI (``batreplay ui``): launch, watch, browse and compare simulations in a browser.

Modules, along the data path: :mod:`.sandbox` (which files the app may read and write), :mod:`.run_form` (the
New-run form's choices, taken from the registries, and its values turned into a run description with the
command line's own checks), :mod:`.launcher` (runs in background worker processes, with progress and
cancellation), :mod:`.run_index` (the runs under the runs directory), :mod:`.runs_table` (the Runs table's cells),
:mod:`.run_cache` (runs and their views kept between requests), :mod:`.figures` (interactive Plotly figures of
runs), :mod:`.gantt` (the Gantt chart at any size), :mod:`.series` (step series reduced to the view),
:mod:`.comparison` (runs side by side), :mod:`.campaigns` (campaign files, run from the app),
:mod:`.messages` (errors in one line), :mod:`.pages` (the pages' layouts) and :mod:`.app` (the Dash application:
routes, callbacks, access, serving). The package sits just below the command line: it may import every other
package of batreplay (campaign executors, runs, analysis, registries), and only :mod:`batreplay.cli` imports it.
"""
