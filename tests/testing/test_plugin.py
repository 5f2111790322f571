"""The kit's pytest plugin, run in throwaway pytest sessions (``pytester``).

Each inner session loads the plugin with ``-p`` and no entry points of the installed
distribution, so the checks hold for this tree, whatever version is installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

MODEL = """
import singletable as st

shop = st.Table("shop")


class Item(st.Entity, table=shop, pk="I#{sku}", sk="ITEM", unique=["name"]):
    sku: str
    name: str
"""


@pytest.fixture
def kit(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    # This tree first: the inner session imports the plugin of the code under test.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    for name in ("SINGLETABLE_BACKEND", "SINGLETABLE_ENDPOINT", "SINGLETABLE_TRANSPORT"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(shopmodel=MODEL)
    pytester.makeini("[pytest]\nsingletable_tables = shopmodel:shop\n")
    pytester.syspathinsert()
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "singletable.testing.plugin", "-p", "no:cacheprovider", *args
    )


def test_the_entry_point_names_the_plugin_module() -> None:
    # (tomllib is 3.11+: the text is checked as written.)
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[project.entry-points.pytest11]\n", 1)[1].split("\n\n", 1)[0]
    assert section.strip() == '"singletable.testing.plugin" = "singletable.testing.plugin"'
    testing = text.split("\ntesting = [", 1)[1].split("]\n", 1)[0]
    assert '"hypothesis>=6.100"' in testing
    assert '"moto[dynamodb,server]>=5.0"' in testing
    assert '"singletable[testing]"' in text.split("\ntest = [", 1)[1].split("\n]\n", 1)[0]


def test_function_scope_empties_the_tables_between_tests(kit: pytest.Pytester) -> None:
    kit.makepyfile(
        """
        from shopmodel import Item

        def test_first(singletable_db):
            Item.put(Item(sku="a", name="A")).run(singletable_db)
            assert len(Item.scan().all(singletable_db)) == 1

        def test_second_sees_nothing(singletable_db):
            assert Item.scan().all(singletable_db) == []
        """
    )
    run(kit).assert_outcomes(passed=2)


def test_session_scope_keeps_the_items(kit: pytest.Pytester) -> None:
    kit.makepyfile(
        """
        from shopmodel import Item

        def test_first(singletable_session_db):
            Item.put(Item(sku="a", name="A")).run(singletable_session_db)

        def test_second_still_sees_it(singletable_session_db):
            assert [i.sku for i in Item.scan().all(singletable_session_db)] == ["a"]
        """
    )
    run(kit).assert_outcomes(passed=2)


def test_the_moto_server_backend_serves_the_code_under_test(kit: pytest.Pytester) -> None:
    kit.makepyfile(
        """
        import asyncio, os
        import singletable as st
        from shopmodel import Item

        def test_own_clients_reach_it(singletable_db):
            assert os.environ["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1:")
            Item.put(Item(sku="a", name="A")).run(singletable_db)
            assert Item.get(sku="a").run(st.Connection()) is not None

        def test_async(singletable_async_db):
            async def main():
                async with singletable_async_db as adb:
                    await Item.put(Item(sku="b", name="B")).run(adb)
                    return await Item.get(sku="b").run(adb)
            assert asyncio.run(main()).name == "B"
        """
    )
    run(kit, "--singletable-backend", "moto-server").assert_outcomes(passed=2)


def test_the_lean_transport_on_moto_runs_the_server(kit: pytest.Pytester) -> None:
    kit.makepyfile(
        """
        from shopmodel import Item

        def test_lean(singletable_db, singletable_backend):
            assert singletable_db.transport == "lean"
            assert singletable_backend.kind == "moto-server"
            Item.put(Item(sku="a", name="A")).run(singletable_db)
            assert Item.get(sku="a").run(singletable_db).name == "A"
        """
    )
    run(kit, "--singletable-transport", "lean").assert_outcomes(passed=1)


def test_async_on_the_in_process_backend_gets_a_server(kit: pytest.Pytester) -> None:
    kit.makepyfile(
        """
        import asyncio
        from shopmodel import Item

        def test_async(singletable_async_db):
            async def main():
                async with singletable_async_db as adb:
                    await Item.put(Item(sku="b", name="B")).run(adb)
                    return len(await Item.scan().all(adb))
            assert asyncio.run(main()) == 1
        """
    )
    run(kit).assert_outcomes(passed=1)


def test_a_bad_backend_is_refused_at_startup(kit: pytest.Pytester) -> None:
    kit.makepyfile("def test_nothing(): pass")
    result = run(kit, "--singletable-backend", "dynamo")
    result.stderr.fnmatch_lines(["*--singletable-backend*must be one of*got 'dynamo'*"])
    assert result.ret != 0


def test_dynamodb_local_without_an_endpoint_says_what_to_set(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DYNAMODB_LOCAL_DIR", raising=False)
    kit.makepyfile("def test_db(singletable_db): pass")
    result = run(kit, "--singletable-backend", "dynamodb-local")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*needs an endpoint*--singletable-dynamodb-local*"])


def test_a_remote_dynamodb_local_endpoint_is_refused(kit: pytest.Pytester) -> None:
    kit.makepyfile("def test_db(singletable_db): pass")
    result = run(
        kit,
        "--singletable-backend",
        "dynamodb-local",
        "--singletable-endpoint",
        "http://10.1.2.3:8000",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*must be a loopback address*10.1.2.3*"])


def test_missing_tables_say_how_to_name_them(kit: pytest.Pytester) -> None:
    kit.makeini("[pytest]\n")
    kit.makepyfile("def test_db(singletable_db): pass")
    result = run(kit)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*singletable_tables = myapp.model:table*"])


def test_assertion_failures_print_the_requests(kit: pytest.Pytester) -> None:
    kit.makepyfile(
        """
        from shopmodel import Item
        from singletable.testing import assert_no_scan, assert_single_query, record

        def test_scan(singletable_db):
            with record(singletable_db) as calls:
                Item.scan().all(singletable_db)
            assert_no_scan(calls)

        def test_two_reads(singletable_db):
            with record(singletable_db) as calls:
                Item.get(sku="a").run(singletable_db)
                Item.query(sku="a").all(singletable_db)
            assert_single_query(calls)
        """
    )
    result = run(kit)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*expected no Scan, 1 were sent*",
            "*[[]1] Scan (ok, 0 items; * RCU)*",
            '*"TableName": "shop"*',
            "*expected a single Query, 2 request(s) were sent*",
            "*[[]1] GetItem (ok; *",
            "*[[]2] Query (ok, 0 items; *",
        ]
    )


def test_the_plugin_loads_without_moto_or_hypothesis(kit: pytest.Pytester) -> None:
    kit.makepyfile(
        """
        import sys

        def test_untouched():
            assert "moto" not in sys.modules
            assert "hypothesis" not in sys.modules
        """
    )
    run(kit, "-p", "no:hypothesispytest").assert_outcomes(passed=1)
