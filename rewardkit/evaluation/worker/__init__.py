"""The worker side of a run: grading cases and blocks of raw lines into results.

Runs in worker processes (or in the main process with `workers=0`); imports the input side
and the shared result types, never the main side."""
