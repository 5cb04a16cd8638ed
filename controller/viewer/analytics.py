"""Rerun's viewer sends anonymous usage statistics unless told not to. Ours stay off unless the
user turns them on (`--viewer-analytics`): the viewer we start runs with a configuration folder
of this program's own (`~/.config/jenga-robot/rerun-viewer`), in which they are off. The user's
own Rerun configuration is never read or written for that: their choice there holds for the
viewers they start themselves."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


def config_home() -> Path:
    """$XDG_CONFIG_HOME if it is an absolute path (the XDG rule), else ~/.config."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    return Path(base) if base and os.path.isabs(base) else Path.home() / ".config"


def own_viewer_config() -> Path:
    return config_home() / "jenga-robot" / "rerun-viewer"


def viewer_environment(analytics: bool) -> tuple[dict[str, str], str]:
    """The environment to start Rerun's viewer in, and what holds for its analytics, in words.
    RuntimeError if they cannot be turned off: no viewer is started then."""
    if analytics:
        return dict(os.environ), ("viewer: Rerun's usage analytics as your Rerun configuration "
                                  "sets them (--viewer-analytics)")
    folder = own_viewer_config()
    env = dict(os.environ, XDG_CONFIG_HOME=str(folder))
    settings = folder / "rerun" / "analytics.json"
    if not _disabled(settings):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            from controller.viewer.recorder import rerun_binary
            result = subprocess.run([str(rerun_binary()), "analytics", "disable"],
                                    capture_output=True, text=True, timeout=60, env=env)
            why = result.stderr.strip()
        except (OSError, subprocess.TimeoutExpired, RuntimeError) as exc:
            why = str(exc)
        if not _disabled(settings):
            raise RuntimeError(f"could not turn Rerun's usage analytics off in {folder}, so no "
                               f"viewer was started: {why or 'no configuration written'}")
    return env, ("viewer: Rerun's usage analytics are off (--viewer-analytics turns them on for "
                 "the viewer this starts)")


def _disabled(settings: Path) -> bool:
    try:
        return json.loads(settings.read_text()).get("analytics_enabled") is False
    except (OSError, ValueError, AttributeError):
        return False
