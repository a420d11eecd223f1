"""The in-process vLLM backend (``vllm:NAME``). Importing this package imports neither vLLM nor
torch: ``import vllm`` inside it is the vLLM library."""
