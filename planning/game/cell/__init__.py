"""The robot cell: typed description (model) and the cell-file loader."""

from planning.game.cell.loader import CellError, load_cell, parse_cell
from planning.game.cell.model import (Arm, BlockSet, Camera, Capsule, Cell, Curtain, DHLink, Spread,
                                 Tool, TowerPlacement)

__all__ = ["CellError", "load_cell", "parse_cell", "Arm", "BlockSet", "Camera", "Capsule", "Cell",
           "Curtain", "DHLink", "Spread", "Tool", "TowerPlacement"]
