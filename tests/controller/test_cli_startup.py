"""Commands that do not need the kinematics, the physics or the cameras start without importing
them: roboticstoolbox alone takes seconds to import, longer on a busy machine."""

import json
import subprocess
import sys

HEAVY = ("roboticstoolbox", "spatialmath", "scipy", "mujoco", "cv2", "matplotlib")


def heavy_modules_after(code: str) -> list[str]:
    probe = code + f"\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_the_command_line_parser_imports_nothing_heavy():
    assert heavy_modules_after("from controller.cli import build_parser\nbuild_parser()") == []


def test_rules_legal_imports_nothing_heavy(tmp_path):
    state = tmp_path / "tower.json"
    state.write_text(json.dumps({"layers": [[1, 1, 1]] * 18}))
    code = (f"from controller.cli import main\n"
            f"assert main(['rules', 'legal', '--state', {str(state)!r}]) == 0")
    assert heavy_modules_after(code) == []
