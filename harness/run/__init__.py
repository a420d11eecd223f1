"""One run, from a task's plan to its results: plan, execute, horizon, rounds, replay, rescore,
isolation, progress, results files, the output folder and ``evaluate``."""
