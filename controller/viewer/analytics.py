"""Rerun's viewer sends anonymous usage statistics unless its user has said no. Ours are off
unless the user turned them on: where the user has made no choice yet (no Rerun analytics
configuration), we make it "off", as `rerun analytics disable` does; a choice the user made
stands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def rerun_config_file() -> Path:
    """Where Rerun keeps its analytics choice on Linux (docs: `rerun analytics config`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "rerun" / "analytics.json"


def viewer_analytics_off_unless_chosen() -> str:
    """Turns Rerun's analytics off if the user never chose; says what holds, for the console.
    RuntimeError if it cannot: no viewer starts then."""
    if rerun_config_file().exists():
        return (f"viewer: Rerun's usage analytics as you set them ({rerun_config_file()}; "
                f"python -m rerun_cli analytics details)")
    result = subprocess.run([sys.executable, "-m", "rerun_cli", "analytics", "disable"],
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0 or not rerun_config_file().exists():
        raise RuntimeError("could not turn Rerun's usage analytics off, so no viewer was "
                           "started: " + (result.stderr.strip() or "no configuration written")
                           + " (python -m rerun_cli analytics disable, then again)")
    return ("viewer: Rerun's usage analytics are off (python -m rerun_cli analytics enable "
            "turns them on)")
