"""The task-file format as data: the spec models, buckets, difficulty parsing, regexes and chat
turns. A leaf: it imports nothing of the harness but ``harness.errors``."""
