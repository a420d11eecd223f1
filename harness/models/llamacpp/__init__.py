"""The llama.cpp backend (``llamacpp:NAME``): GGUF files run by llama-cpp-python."""
