"""The tower as the rules see it: which slots of which layers hold a block.

Layers are numbered from 1 at the bottom and keep their numbers for the whole game, even when a low
layer is partly emptied. Each layer has three slots, 0, 1 and 2, across the layer. Blocks of odd
layers lie along x, blocks of even layers along y.

This module is pure: no I/O, no physics. Geometry (where a slot is in metres) lives with the cell
description; looseness and stability live in the planner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Literal

SLOTS_PER_LAYER = 3
SLOTS = (0, 1, 2)

# Standard sets: blocks -> layers of the starting tower.
STANDARD_SET_SIZES = {48: 16, 54: 18, 60: 20}
DEFAULT_SET_SIZE = 54

Axis = Literal["x", "y"]
Layer = tuple[bool, bool, bool]
Slot = tuple[int, int]          # (layer, slot)


class TowerError(ValueError):
    """A state that is not a tower. `layer` is 1-based, or None when the problem is not one layer's."""

    def __init__(self, layer: int | None, problem: str):
        self.layer = layer
        self.problem = problem
        where = f"layer {layer}: " if layer is not None else ""
        super().__init__(f"{where}{problem}")


def layer_axis(layer: int) -> Axis:
    """Axis the blocks of `layer` lie along: odd layers along x, even layers along y."""
    if layer < 1:
        raise ValueError(f"layer numbers start at 1, got {layer}")
    return "x" if layer % 2 == 1 else "y"


def across_index(layer: int) -> int:
    """Tower-frame coordinate (0 x, 1 y) across `layer`, along which its slots lie."""
    return 1 if layer_axis(layer) == "x" else 0


def slot_offset(slot: int, block_width: float, side_gap: float) -> float:
    """How far a slot's centre lies across its layer from the tower's axis (m): neighbouring slots
    are a block's width and the gap beside it apart, slot 1 on the axis. The rest of the tower's
    geometry is in planning/game/geometry.py; this is here so that light code need not import it."""
    return (slot - 1) * (block_width + side_gap)


def format_stories(complete_layers: int, extra_blocks: int) -> str:
    """Height as RULES.md writes it: `18`, `18 1/3`, `40 2/3`."""
    if not 0 <= extra_blocks < SLOTS_PER_LAYER:
        raise ValueError(f"extra blocks must be 0, 1 or 2, got {extra_blocks}")
    return str(complete_layers) if extra_blocks == 0 else f"{complete_layers} {extra_blocks}/3"


def parse_stories(text: str) -> tuple[int, int]:
    """`18 1/3` -> (18, 1): complete layers and the blocks of the layer above, for comparing
    heights."""
    parts = text.split()
    try:
        layers = int(parts[0])
        extra = 0 if len(parts) == 1 else int(parts[1].removesuffix("/3"))
        if len(parts) > 2 or (len(parts) == 2 and not parts[1].endswith("/3")):
            raise ValueError
    except (ValueError, IndexError):
        raise ValueError(f"not a height in stories: {text!r} (like '18' or '18 1/3')") from None
    if layers < 0 or not 0 <= extra < SLOTS_PER_LAYER:
        raise ValueError(f"not a height in stories: {text!r}")
    return layers, extra


@dataclass(frozen=True)
class TowerState:
    """Occupancy of every layer, bottom first, and how many blocks were moved in this round.

    Invariants (checked on construction): every layer has three slots; no empty layer lies under a
    non-empty one; at least one layer is complete. Trailing empty layers are dropped.
    """

    layers: tuple[Layer, ...]
    blocks_moved: int = 0

    def __post_init__(self) -> None:
        layers = tuple(tuple(bool(v) for v in row) for row in self.layers)
        for number, row in enumerate(layers, start=1):
            if len(row) != SLOTS_PER_LAYER:
                raise TowerError(number, f"has {len(row)} slots, a layer has {SLOTS_PER_LAYER}")
        given = len(layers)
        while layers and not any(layers[-1]):
            layers = layers[:-1]
        for number, row in enumerate(layers, start=1):
            if not any(row):
                raise TowerError(number, "is empty, but layers above it hold blocks")
        if not layers:
            what = f"all {given} layers are empty" if given > 1 else \
                "layer 1 is empty" if given else "no layers"
            raise TowerError(None, f"{what}: a tower needs at least one layer of three blocks")
        if not any(all(row) for row in layers):
            raise TowerError(None, f"layers 1 to {len(layers)}: no complete layer; a tower needs at "
                                   f"least one layer of three blocks")
        if self.blocks_moved < 0:
            raise TowerError(None, f"blocks_moved must be >= 0, got {self.blocks_moved}")
        object.__setattr__(self, "layers", layers)

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def fresh(cls, set_size: int = DEFAULT_SET_SIZE) -> TowerState:
        """A starting tower of complete layers. Standard sets are 48, 54 and 60 blocks; any
        positive multiple of three is accepted because other editions exist (RULES.md, Variants)."""
        if set_size <= 0 or set_size % SLOTS_PER_LAYER:
            raise TowerError(None, f"set size {set_size} is not a positive multiple of 3 "
                                   f"(standard sets: {', '.join(map(str, STANDARD_SET_SIZES))})")
        return cls(tuple((True, True, True) for _ in range(set_size // SLOTS_PER_LAYER)))

    @classmethod
    def from_json(cls, obj: Any) -> TowerState:
        """Parse `{"layers": [[1,1,1], [1,0,1], ...], "blocks_moved": n}` (blocks_moved optional).

        Raises TowerError naming the layer and the problem for anything that is not a tower."""
        if not isinstance(obj, dict) or "layers" not in obj:
            raise TowerError(None, 'expected an object with a "layers" list')
        rows = obj["layers"]
        if not isinstance(rows, list):
            raise TowerError(None, '"layers" must be a list of rows, bottom first')
        parsed = []
        for number, row in enumerate(rows, start=1):
            if (not isinstance(row, list) or len(row) != SLOTS_PER_LAYER
                    or any(type(v) is not int or v not in (0, 1) for v in row)):
                raise TowerError(number, f"row {row!r} is not three 0/1 values")
            parsed.append(tuple(v == 1 for v in row))
        moved = obj.get("blocks_moved", 0)
        if type(moved) is not int:
            raise TowerError(None, f'"blocks_moved" must be an integer, got {moved!r}')
        return cls(tuple(parsed), moved)

    def to_json(self) -> dict[str, Any]:
        return {"layers": [[int(v) for v in row] for row in self.layers],
                "blocks_moved": self.blocks_moved}

    # --- queries ------------------------------------------------------------------------------

    @property
    def layer_count(self) -> int:
        """Number of the top (highest non-empty) layer."""
        return len(self.layers)

    @property
    def top_layer(self) -> int:
        return len(self.layers)

    @property
    def highest_complete_layer(self) -> int:
        """The topmost layer that holds all three blocks."""
        return max(n for n, row in enumerate(self.layers, start=1) if all(row))

    @property
    def block_count(self) -> int:
        return sum(sum(row) for row in self.layers)

    @property
    def top_is_complete(self) -> bool:
        return all(self.layers[-1])

    def row(self, layer: int) -> Layer:
        self._check_layer(layer)
        return self.layers[layer - 1]

    def has_block(self, layer: int, slot: int) -> bool:
        """Whether `slot` of `layer` holds a block; layers above the top are empty."""
        if slot not in SLOTS:
            raise ValueError(f"slot must be 0, 1 or 2, got {slot}")
        if layer < 1:
            raise ValueError(f"layer numbers start at 1, got {layer}")
        return layer <= self.top_layer and self.layers[layer - 1][slot]

    def across_end(self, layer: int, slot: int, end: int) -> Slot | None:
        """The block of the layer above that lies across the `end` (+1 or -1 along its layer's
        axis) of the block in (`layer`, `slot`), if any: slots across a layer run along the axis
        of the layer below, slot 2 at its +1 end."""
        above = 2 if end > 0 else 0
        return (layer + 1, above) if self.has_block(layer + 1, above) else None

    def blocks(self) -> Iterator[tuple[int, int]]:
        """Every occupied (layer, slot), bottom first."""
        for number, row in enumerate(self.layers, start=1):
            for slot in SLOTS:
                if row[slot]:
                    yield number, slot

    def stories(self) -> str:
        """Height in stories: complete top -> its number; otherwise the layers under the top plus
        the top's blocks in thirds (`18 1/3`)."""
        top = self.layers[-1]
        if all(top):
            return format_stories(self.top_layer, 0)
        return format_stories(self.top_layer - 1, sum(top))

    # --- changes (each returns a new state) ---------------------------------------------------

    def without(self, layer: int, slot: int) -> TowerState:
        """The tower with the block at (layer, slot) taken out."""
        if not self.has_block(layer, slot):
            raise TowerError(layer, f"slot {slot} holds no block to take")
        return self._with(layer, slot, False)

    def with_block(self, layer: int, slot: int) -> TowerState:
        """The tower with a block put into (layer, slot): an existing layer or the one above the top."""
        if layer < 1 or layer > self.top_layer + 1:
            raise TowerError(layer, f"cannot hold a block: the top layer is {self.top_layer}")
        if self.has_block(layer, slot):
            raise TowerError(layer, f"slot {slot} already holds a block")
        return self._with(layer, slot, True)

    def moved(self, source: tuple[int, int], target: tuple[int, int]) -> TowerState:
        """One move: the block at `source` taken out and put at `target`; counts as a moved block."""
        after = self.without(*source).with_block(*target)
        return TowerState(after.layers, self.blocks_moved + 1)

    def _with(self, layer: int, slot: int, present: bool) -> TowerState:
        rows = [list(row) for row in self.layers]
        if layer > len(rows):
            rows.append([False, False, False])
        rows[layer - 1][slot] = present
        return TowerState(tuple(tuple(r) for r in rows), self.blocks_moved)

    def _check_layer(self, layer: int) -> None:
        if not 1 <= layer <= self.top_layer:
            raise ValueError(f"layer {layer} is not in the tower (layers 1 to {self.top_layer})")
