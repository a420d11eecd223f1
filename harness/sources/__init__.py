"""Record sources: local files and HF datasets (generators live in ``harness.generators``);
``harness.sources.read.read_source`` reads a task's source."""
