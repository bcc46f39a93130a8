"""Argument types of pgc.options that scripts share."""

import argparse

import pytest

from pgc.options import seed_range


def test_a_seed_range_includes_both_ends_and_a_single_seed_is_one():
    assert seed_range("0-8") == list(range(9)) and seed_range("3") == [3] and seed_range("4-4") == [4]


@pytest.mark.parametrize("bad", ["5-2", "a", "-1", "1-x", ""])
def test_a_bad_seed_range_is_refused_by_name(bad):
    with pytest.raises(argparse.ArgumentTypeError, match="not a seed or a range of seeds"):
        seed_range(bad)
