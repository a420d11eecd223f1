"""Shared pytest fixtures, and the marker rules (``tests/markers.py``) applied at collection."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick", action="store_true",
        help="The quick loop: -m 'not slow and not integration', without even importing the "
             "test files whose every test is integration (tests/markers.py).")


def pytest_configure(config: pytest.Config) -> None:
    """``$GENHARNESS_TEST_TIMES``: write each test's time for ``scripts/ci_times.py``; under
    pytest-xdist, each worker's share of the cores (``_threads_per_worker``)."""
    from tests.timings import register

    register(config)
    _threads_per_worker()


def _threads_per_worker() -> None:
    """Under pytest-xdist (``-n N``), torch in a worker and in the processes it starts uses
    cores // N threads (``OMP_NUM_THREADS``, unless already set): two workers on two cores each
    running torch on two threads spend most of their time waiting for each other (measured
    here, with other jobs running: two SmolLM2 evals side by side took 393 s on two threads each,
    127 s on one, with the same samples)."""
    import os
    import sys

    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if workers > 1 and "OMP_NUM_THREADS" not in os.environ:
        threads = max(1, (os.cpu_count() or 1) // workers)
        os.environ["OMP_NUM_THREADS"] = str(threads)
        if "torch" in sys.modules:  # already imported: the variable is read at import
            sys.modules["torch"].set_num_threads(threads)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``--quick``: test files that start processes or build torch models are not imported."""
    if (config.getoption("--quick") and collection_path.suffix == ".py"
            and collection_path.name.startswith("test_")):
        from tests.markers import heavy_module

        return True if heavy_module(collection_path) else None
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """vllm and browser tests must be slow (collection fails otherwise); tests that start
    processes or build torch models get ``integration``; ``--quick`` leaves out both."""
    from tests.markers import apply

    apply(items)
    if config.getoption("--quick"):
        keep = [i for i in items if not {"slow", "integration"} & {m.name for m in
                                                                    i.iter_markers()}]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


@pytest.fixture(scope="session", autouse=True)
def _private_response_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Runs in tests (and the subprocesses they start) cache responses in a temporary folder,
    never in the user's cache."""
    import os

    os.environ["GENHARNESS_RESPONSE_CACHE"] = str(tmp_path_factory.mktemp("response_cache"))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama + byte-level BPE tokenizer saved with save_pretrained (needs torch)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.fixtures.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_model"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The project's read-only data mirrors (``../shared/data`` from the repository root).

    Task files reach them through ``${GENHARNESS_DATA}`` in their ``local_path``; this fixture
    also sets that variable for the test session."""
    import os

    root = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if not root.is_dir():
        if os.environ.get("CI"):  # CI always has shared/ beside the clone: a miss is a failure
            pytest.fail(f"shared data mirror not found at {root}")
        pytest.skip(f"shared data mirror not found at {root}")
    os.environ["GENHARNESS_DATA"] = str(root)
    return root
