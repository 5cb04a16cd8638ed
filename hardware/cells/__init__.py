"""Cell description files (TOML): one per physical (or simulated) robot cell."""
from pathlib import Path

CELLS_DIR = Path(__file__).parent
DEFAULT_CELL = CELLS_DIR / "default.toml"
