import numpy as np
import pytest

from hardware.sim.blocks import draw_tower
from hardware.sim.markers import block_of_marker, marker_id


def test_same_seed_same_tower_other_seed_other_tower(default_cell):
    a, b = draw_tower(default_cell.blocks, 5), draw_tower(default_cell.blocks, 5)
    assert a == b
    assert draw_tower(default_cell.blocks, 6) != a


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_drawn_blocks_stay_in_the_measured_ranges(default_cell, seed):
    spec = default_cell.blocks
    blocks = draw_tower(spec, seed)
    assert len(blocks) == 54 and sorted(b.index for b in blocks) == list(range(54))
    for b in blocks:
        assert spec.height.low <= b.height <= spec.height.high
        assert spec.mass.low <= b.mass <= spec.mass.high
        assert spec.friction.low <= b.friction <= spec.friction.high
    heights = np.array([b.height for b in blocks])
    assert abs(heights.mean() - spec.height.mean) < 3 * spec.height.std / np.sqrt(54) + 1e-4
    assert heights.std() > 0.5 * spec.height.std  # thicknesses differ, as on a real set


def test_layers_alternate_and_side_by_side_blocks_never_overlap(default_cell):
    blocks = draw_tower(default_cell.blocks, 1)
    for layer in range(1, 19):
        row = sorted((b for b in blocks if b.layer == layer), key=lambda b: b.slot)
        assert [b.slot for b in row] == [0, 1, 2]
        along_x = layer % 2 == 1
        across = [b.position[1] if along_x else b.position[0] for b in row]
        for left, right in zip(row[:-1], row[1:]):
            gap = (across[row.index(right)] - across[row.index(left)]) - (left.width + right.width) / 2
            assert gap > 0.0001
        for b in row:
            assert abs(np.cos(b.yaw)) > 0.99 if along_x else abs(np.sin(b.yaw)) > 0.99


def test_marker_scheme_round_trips():
    for block in (0, 17, 53):
        for end in (1, -1):
            assert block_of_marker(marker_id(block, end)) == (block, end)
    assert marker_id(3, 1) == 6 and marker_id(3, -1) == 7
