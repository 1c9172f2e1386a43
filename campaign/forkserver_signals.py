"""Imported first by the campaign's forkserver, and by nothing else: the server ignores SIGINT from then on.

Python's forkserver gives each process it forks the SIGINT disposition the server had before it started serving,
so every instance process is born ignoring SIGINT: a Ctrl-C that reaches the process group while an instance is
starting cannot kill it half-way with a ``KeyboardInterrupt`` (which would look like a crash). The instance keeps
ignoring SIGINT (:func:`batreplay.campaign.worker.process_main`); the campaign runner, which owns Ctrl-C, stops it
with SIGTERM. Done by an import of the server itself, this holds whichever thread starts the server (the campaign
runner's main thread, or a web GUI's worker thread, which may not set signal dispositions). It imports nothing of
batreplay.
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
