"""The HF transformers backend (``hf:NAME``): the backend class, its batching, generation and
scoring (shared prefixes, token tries)."""
