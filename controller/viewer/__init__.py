"""Watching the robot play: a live viewer and recordings in Rerun's format (docs/viewer.md).
`scene.py` turns what the robot knows into shapes (no I/O); `recorder.py` writes them to a
recording, a file and/or a viewer; `watch.py` hooks a recorder to a cell link and a player."""
