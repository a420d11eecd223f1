"""The OpenAI-compatible server backend (``openai:NAME``): the backend, its HTTP client and the
parsing of server answers. ``import openai`` inside it would be the OpenAI library, not this."""
