"""The test kit's sample tests on DynamoDB Local, through the kit's plugin (pytester).

The moto tier runs them as docs examples (tests/test_docs/test_testing_apps.py); here
an inner pytest session runs the same module on the DynamoDB Local tier's endpoint, and
once more on a DynamoDB Local that the kit's launcher starts for its session.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.executor_independent(
    "an inner pytest session through the kit's own fixtures"
)

ROOT = Path(__file__).resolve().parents[2]
REASON = "the kit's DynamoDB Local backend, on the tier that has DynamoDB Local"


@pytest.fixture
def sample(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_sample="from docs_src.testing_app_tests import *  # noqa: F403\n")
    return pytester


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # In-process: the inner session imports this tree's kit, as the outer one did.
    return pytester.runpytest_inprocess(
        "-p", "singletable.testing.plugin", "-p", "no:cacheprovider", "-W", "error", *args
    )


@pytest.mark.dynamodb_local_only(REASON)
def test_the_sample_passes_on_the_tiers_endpoint(sample: pytest.Pytester) -> None:
    endpoint = os.environ["SINGLETABLE_ENDPOINT"]
    result = _run(
        sample, "--singletable-backend", "dynamodb-local", "--singletable-endpoint", endpoint
    )
    result.assert_outcomes(passed=5)


@pytest.mark.dynamodb_local_only(REASON)
def test_the_sample_passes_on_a_dynamodb_local_the_kit_starts(
    sample: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SINGLETABLE_ENDPOINT")
    install = os.environ.get("DYNAMODB_LOCAL_DIR") or str(ROOT / ".dynamodb-local")
    # One token: pytest takes an argument that names an existing path as a place to look
    # for its rootdir and ini file, and this one is in the checkout, whose addopts ask
    # for xdist, a plugin the inner session does not load.
    result = _run(
        sample, "--singletable-backend", "dynamodb-local", f"--singletable-dynamodb-local={install}"
    )
    result.assert_outcomes(passed=5)
