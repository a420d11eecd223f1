"""Example genharness task package backed by a data file (``tasks/unitconv.jsonl``)."""
