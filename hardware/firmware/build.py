"""Build the C firmware (`make -C hardware/firmware host|mcu`), once at a time: test workers
running in parallel share the build folder, so each builds under a lock."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"

# what each build needs, and the Debian package that has it
_TOOLS = {
    "host": {"make": "make", "gcc": "gcc"},
    "mcu": {"make": "make", "arm-none-eabi-gcc": "gcc-arm-none-eabi libnewlib-arm-none-eabi"},
}


class BuildError(RuntimeError):
    """A tool is missing or the build failed: the message says which."""


def _build(target: str) -> Path:
    for tool, package in _TOOLS[target].items():
        if shutil.which(tool) is None:
            raise BuildError(f"building the C firmware ({target}) needs {tool}: "
                               f"apt-get install {package}")
    BUILD.mkdir(exist_ok=True)
    with open(BUILD / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = subprocess.run(["make", "-s", "-C", str(HERE), target], capture_output=True,
                                text=True, timeout=600)
    if result.returncode != 0:
        raise BuildError(f"the C firmware ({target}) did not build:\n"
                           f"{result.stdout}{result.stderr}")
    return BUILD / target


def build_host() -> Path:
    """The host build's folder, brought up to date; BuildError saying what is missing."""
    return _build("host")


def build_mcu() -> Path:
    """The microcontroller build's folder (jenga-firmware.elf, size.txt), brought up to date."""
    return _build("mcu")


def memory_use(build: Path | None = None) -> dict[str, int]:
    """Flash and RAM the microcontroller build takes, in bytes, from arm-none-eabi-size's
    figures: flash holds code, constants and the initial data; RAM the data, the zeroed data
    and the stack."""
    lines = ((build or BUILD / "mcu") / "size.txt").read_text().split("\n")
    text, data, bss = (int(v) for v in lines[1].split()[:3])
    return {"flash_bytes": text + data, "ram_bytes": data + bss}
