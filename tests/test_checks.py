"""The shared argument checks: one wording, numpy's integers accepted, bool refused."""

import numpy as np
import pytest

from alphagomoku.checks import non_negative_int, positive_int


@pytest.mark.parametrize("value", [0, -3, True, 2.0, "4", None])
def test_positive_int_refuses_what_is_not_a_count(value):
    with pytest.raises(ValueError, match=r"^budget must be a positive integer, got "):
        positive_int("budget", value)


def test_positive_int_gives_back_a_python_int():
    out = positive_int("n", np.int64(7))
    assert out == 7 and type(out) is int
    assert positive_int("n", None, none_ok=True) is None
    with pytest.raises(ValueError, match="n must be a positive integer or None, got 0"):
        positive_int("n", 0, none_ok=True)


def test_non_negative_int_takes_zero_and_refuses_below():
    assert non_negative_int("depth", 0) == 0
    assert non_negative_int("depth", np.int32(3)) == 3
    for bad in (-1, False, 0.5):
        with pytest.raises(ValueError, match="depth must be a non-negative integer"):
            non_negative_int("depth", bad)
