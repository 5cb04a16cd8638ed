"""The game's domain, which every room may import: the tower as the rules see it (tower.py) and
in metres (geometry.py), the rules (rules/), the cell description (cell/), the blocks' markers
(markers.py) and the calibration board (board.py). It imports nothing else of the project."""
