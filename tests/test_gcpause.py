"""The garbage collector paused around bulk work, and restored."""

from __future__ import annotations

import gc

import pytest

from pubsearch.core import gcpause


def test_paused_inside_and_as_it_was_after_even_on_error() -> None:
    assert gc.isenabled()
    with pytest.raises(ValueError, match="inside"):
        with gcpause.paused():
            assert not gc.isenabled()
            raise ValueError("inside")
    assert gc.isenabled()


def test_a_nested_block_leaves_it_to_the_outermost() -> None:
    with gcpause.paused():
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_off_when_it_was_off() -> None:
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
