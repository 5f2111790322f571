"""`collector_held_off`: the cyclic collector off inside, as it was afterwards."""

from __future__ import annotations

import gc

import pytest

from singletable.model.collector import collector_held_off

pytestmark = pytest.mark.usefixtures("default_collector")


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    assert gc.isenabled()
    with collector_held_off():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_on_again_after_an_error() -> None:
    with pytest.raises(KeyError), collector_held_off():
        raise KeyError("x")
    assert gc.isenabled()


def test_a_collector_the_caller_switched_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_held_off():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nested_blocks_switch_it_on_once_at_the_outer_end() -> None:
    with collector_held_off():
        with collector_held_off():
            pass
        assert not gc.isenabled()  # the inner block found it off: leaves it off
    assert gc.isenabled()
