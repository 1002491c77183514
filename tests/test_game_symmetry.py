"""The board's symmetries: planes, policies and index maps move points alike."""

from __future__ import annotations

import numpy as np
import pytest

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, NUM_PLANES
from alphagomoku.game.position import Position
from alphagomoku.game.symmetry import (
    NUM_SYMMETRIES,
    index_map,
    inverse_planes,
    inverse_policy,
    transform_planes,
    transform_policy,
    valid_symmetries,
)

SHAPES = [(9, 9), (7, 7), (9, 6), (5, 8)]  # (width, height)


def test_square_boards_have_eight_symmetries_rectangular_ones_four():
    assert valid_symmetries(15, 15) == tuple(range(NUM_SYMMETRIES))
    assert valid_symmetries(9, 6) == (0, 2, 4, 6)
    assert valid_symmetries(6, 9) == (0, 2, 4, 6)


def test_the_eight_transforms_are_distinct_and_as_documented():
    grid = np.arange(9).reshape(3, 3)
    images = [transform_planes(grid, k) for k in range(8)]
    assert len({im.tobytes() for im in images}) == 8
    np.testing.assert_array_equal(images[0], grid)
    np.testing.assert_array_equal(images[2], grid[::-1, ::-1])  # half turn
    np.testing.assert_array_equal(images[4], grid[:, ::-1])  # mirror left-right
    np.testing.assert_array_equal(images[1], np.rot90(grid))  # quarter turn, as numpy turns


@pytest.mark.parametrize("width,height", SHAPES)
def test_every_symmetry_round_trips(width, height, rng):
    planes = rng.random((3, NUM_PLANES, height, width)).astype(np.float32)
    policy = rng.random((3, width * height)).astype(np.float32)
    for k in valid_symmetries(width, height):
        moved = transform_planes(planes, k)
        assert moved.shape == planes.shape and moved.flags.c_contiguous
        np.testing.assert_array_equal(inverse_planes(moved, k), planes)
        moved_policy = transform_policy(policy, k, width, height)
        assert moved_policy.shape == policy.shape
        np.testing.assert_array_equal(inverse_policy(moved_policy, k, width, height), policy)
        np.testing.assert_array_equal(transform_policy(inverse_policy(policy, k, width, height), k, width, height), policy)


@pytest.mark.parametrize("width,height", SHAPES)
def test_index_map_agrees_with_transform_policy(width, height):
    n = width * height
    for k in valid_symmetries(width, height):
        m = index_map(k, width, height)
        assert sorted(m) == list(range(n))  # a permutation of the points
        for i in range(n):
            one_hot = np.zeros(n)
            one_hot[i] = 1
            assert np.flatnonzero(transform_policy(one_hot, k, width, height)).tolist() == [m[i]]


def dense_renju_position(width, height, rng):
    """A random renju position with black to move and forbidden points on the board."""
    config = GameConfig(width=width, height=height, rule="renju")
    for _ in range(200):
        pos = Position(config)
        while not pos.is_over:
            pos.play(int(rng.choice(pos.legal_moves())))
            if pos.to_move == BLACK and pos.planes()[4].any():
                return pos
    raise AssertionError("no random game reached a forbidden point")


@pytest.mark.parametrize("width,height", SHAPES)
def test_transformed_position_has_the_transformed_planes_and_legal_mask(width, height, rng):
    """Playing the moves mapped by a symmetry gives exactly the transformed planes, legal mask and
    (for a policy that follows the legal mask) the transformed policy."""
    pos = dense_renju_position(width, height, rng)
    planes, legal = pos.planes(), pos.legal_mask()
    assert planes[4].sum() > 0  # forbidden points, which must move with the board too
    policy = np.where(legal, rng.random(width * height), 0.0)
    for k in valid_symmetries(width, height):
        m = index_map(k, width, height)
        image = Position.from_moves([int(m[move]) for move in pos.moves], pos.config)
        np.testing.assert_array_equal(image.planes(), transform_planes(planes, k))
        np.testing.assert_array_equal(image.legal_mask(), transform_policy(legal, k, width, height))
        moved_policy = transform_policy(policy, k, width, height)
        assert np.all(moved_policy[~image.legal_mask()] == 0)
        np.testing.assert_array_equal(moved_policy[m], policy)


@pytest.mark.parametrize("k", [1, 3, 5, 7])
def test_rectangular_boards_refuse_the_quarter_turns(k):
    with pytest.raises(ValueError, match=f"symmetry {k} does not map a 9x6 board onto itself"):
        transform_planes(np.zeros((6, 9)), k)
    with pytest.raises(ValueError, match="does not map a 9x6 board onto itself"):
        transform_policy(np.zeros(54), k, 9, 6)
    with pytest.raises(ValueError, match="does not map a 9x6 board onto itself"):
        inverse_policy(np.zeros(54), k, 9, 6)
    with pytest.raises(ValueError, match="does not map a 9x6 board onto itself"):
        index_map(k, 9, 6)


@pytest.mark.parametrize("k", [8, -1, 1.0, True, "1"])
def test_a_symmetry_is_an_integer_from_0_to_7(k):
    with pytest.raises(ValueError, match="symmetry must be an integer from 0 to 7, got"):
        transform_planes(np.zeros((5, 5)), k)
