"""The web viewer as a person sees it: headless Chromium (Debian's) opens the address `--viewer`
prints on a machine with no display, and the recording's tower shows in it."""

import shutil
import time

import numpy as np
import pytest

from controller.viewer.recorder import Recorder, paths
from controller.viewer.scene import LOOSE, Boxes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def green_pixels(png: bytes) -> int:
    import cv2
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    b, g, r = (image[:, :, k].astype(int) for k in range(3))
    return int(np.count_nonzero((g > 110) & (g > r + 50) & (g > b + 50)))


def test_the_web_viewer_shows_the_tower_in_a_browser(tmp_path, monkeypatch):
    if CHROMIUM is None:
        pytest.fail("the browser test needs Debian's chromium (.ci/run installs it)")
    from playwright.sync_api import sync_playwright
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    # Chromium renders in software here, a core's worth: at the lowest priority (its children
    # inherit it), so that the tests beside it that time themselves keep their pace
    niced = tmp_path / "chromium"
    niced.write_text(f'#!/bin/sh\nexec nice -n 19 {CHROMIUM} "$@"\n')
    niced.chmod(0o755)
    n = 54
    tower = Boxes(np.array([[0.5 + 0.025 * (k % 3), 0.0, 0.0075 + 0.015 * (k // 3)]
                            for k in range(n)]),
                  np.tile([0.0125, 0.0375, 0.0075], (n, 1)), np.zeros(n),
                  np.array([LOOSE] * n, np.uint8), [str(k) for k in range(n)],
                  [(k // 3 + 1, k % 3) for k in range(n)])
    with Recorder(None, viewer=True, has_display=False, announce=lambda _: None) as recorder:
        recorder.boxes(paths.TOWER, 0.0, tower)
        recorder.event(0.0, "turn 1: perceive")
        recorder.stream.flush(timeout_sec=5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(niced), args=[
                "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--ignore-gpu-blocklist"])
            try:
                page = browser.new_page(viewport={"width": 1024, "height": 640})
                page.goto(recorder.address)
                deadline, seen = time.monotonic() + 90, 0
                while time.monotonic() < deadline:
                    shot = page.screenshot()
                    seen = green_pixels(shot)
                    if seen > 2000:
                        break
                    time.sleep(2)
                (tmp_path / "viewer.png").write_bytes(shot)
            finally:
                browser.close()
    assert seen > 2000, f"no tower in the viewer (see {tmp_path / 'viewer.png'})"
