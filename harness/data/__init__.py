"""Training data from the task generators (``harness data export``)."""
