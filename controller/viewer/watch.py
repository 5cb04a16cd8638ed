"""A recorder hooked to the robot at play: the arm's telemetry and guards, the cameras, every look
perception takes, the turn's belief, its probes, phases and notes. The same hooks whatever the
cell is, real or simulated."""

from __future__ import annotations

from typing import Callable

from controller.cell_link import CellLink
from controller.turn.procedure import Player
from controller.turn.report import ProbeRecord, TurnReport
from controller.viewer.from_log import describe_event
from controller.viewer.recorder import Recorder, paths
from controller.viewer.scene import slot_box, tower_boxes
from controller.wording import probe_result
from planning.game.geometry import TowerGeometry
from planning.stability import BlockDims


def _then(first: Callable | None, second: Callable) -> Callable:
    """`second` after whatever was hooked there before."""
    if first is None:
        return second

    def both(*args):
        first(*args)
        second(*args)
    return both


def _harmless(method):
    """A viewer never stops the robot: an error in recording (a full disk, a viewer gone, a link
    that stopped answering a time) ends the recording, says so once, and the game goes on."""
    def guarded(self, *args):
        if self.failed is not None:
            return None
        try:
            return method(self, *args)
        except Exception as exc:          # noqa: BLE001 - whatever it is, the robot plays on
            self.failed = f"{type(exc).__name__}: {exc}"
            self.recorder.say(f"viewer: recording stopped ({self.failed}); the game goes on")
            return None
    guarded.__name__, guarded.__doc__ = method.__name__, method.__doc__
    return guarded


class Watch:
    """What the recorder is told, kept between looks: the latest observation and belief."""

    def __init__(self, recorder: Recorder, link: CellLink):
        self.recorder, self.link = recorder, link
        self.dims = BlockDims.of(link.cell.blocks)
        self.geometry = TowerGeometry.from_cell(link.cell)
        self.observation = None
        self.p_loose: dict = {}
        self.chosen = None
        self.failed: str | None = None
        self._last_time = 0.0
        self.match_offset: float | None = None    # a match's time minus the arm's (its log)

    def now(self) -> float:
        """The arm's clock, or the last time read from it once the link is gone."""
        arm = self.link.arm
        if arm is not None:
            try:
                self._last_time = arm.device_time()
            except Exception:             # noqa: BLE001 - a link going down: its last time
                pass
        return self._last_time

    @_harmless
    def observed(self, frames, result) -> None:
        for name, frame in frames.items():
            self.recorder.camera(frame, result.sightings.get(name))
        obs = result.observation
        if obs.fell or not obs.blocks:
            if obs.fell:
                self.recorder.event(obs.time, "the cameras see the tower fallen", "WARN")
            return
        self.observation = obs
        self._tower(obs.time)

    @_harmless
    def guard(self, threshold_n: float | None) -> None:
        self.recorder.guard(self.now(), threshold_n)

    def _tower(self, time: float) -> None:
        self.recorder.boxes(paths.TOWER, time, tower_boxes(self.observation, self.dims,
                                                            self.p_loose, self.chosen))

    @_harmless
    def belief(self, look, belief) -> None:
        self.p_loose = dict(belief.p_loose)
        self.chosen = None
        if self.observation is not None:
            self._tower(self.now())

    @_harmless
    def probe(self, record: ProbeRecord) -> None:
        slot = (record.layer, record.slot)
        self.p_loose[slot] = record.p_loose
        said = probe_result(record.layer, record.slot, record.peak_force_n, record.travel_mm,
                            record.p_loose, record.threshold_n)
        self.recorder.probe(f"{record.layer}.{record.slot}", record.trace, said, self.now())
        if self.observation is not None:
            self._tower(self.now())

    @_harmless
    def phase(self, name: str, report: TurnReport) -> None:
        now = self.now()
        self.recorder.event(now, f"turn {report.number}: {name}")
        if report.source is not None and report.target is not None and self.chosen is None:
            self.chosen = report.source
            if self.observation is not None:
                self._tower(now)
                self.recorder.boxes(paths.TARGET, now, slot_box(
                    self.geometry, self.observation.pose, self.dims, report.target,
                    f"block {report.block} goes to {report.target[0]}.{report.target[1]}"))

    @_harmless
    def turn_done(self, report: TurnReport) -> None:
        now = self.now()
        self.chosen = None
        self.recorder.boxes(paths.TARGET, now, None)
        if report.fell:
            self.recorder.event(now, f"turn {report.number}: the tower fell", "ERROR")
        elif report.error:
            self.recorder.event(now, f"turn {report.number}: {report.error}", "WARN")
        else:
            self.recorder.event(now, f"turn {report.number} done: {report.stories} stories")

    @_harmless
    def note(self, text: str) -> None:
        self.recorder.event(self.now(), text, "WARN")

    @_harmless
    def logged(self, record: dict) -> None:
        """A match log's event (controller/match/log.py): the referee's calls, safety pauses,
        falls, turns begun and ended, as text at the time the event says it happened. The
        robot's probes and notes are recorded by their own hooks as they happen."""
        kind = record.get("event")
        if kind == "clock":
            self.match_offset = float(record["match_t"]) - float(record["world_t"])
            return
        if kind == "probe" or (kind == "note" and str(record.get("text", "")).startswith("robot: ")):
            return
        t = record.get("t")
        at = float(t) - self.match_offset if isinstance(t, (int, float)) and \
            self.match_offset is not None else self.now()
        if kind == "turn_end":
            self.chosen = None
            self.recorder.boxes(paths.TARGET, at, None)
        said = describe_event(record)
        if said is not None:
            self.recorder.event(at, *said)


def watch_link(recorder: Recorder, link: CellLink) -> Watch:
    """The arm and the cameras: telemetry, guards, a frame a camera each half second, and every
    look perception takes. Call it with the link open."""
    watch = Watch(recorder, link)
    link.arm.on_telemetry(recorder.telemetry)
    link.arm.on_guard(watch.guard)
    recorder.frames_from(lambda: {name: source.latest() for name, source in link.cameras.items()})
    link.on_observed.append(watch.observed)
    return watch


def watch_player(watch: Watch, player: Player) -> None:
    """The robot's turns: its belief, probes, phases and the blocks it gives up on."""
    player.on_belief = _then(player.on_belief, watch.belief)
    player.on_probe = _then(player.on_probe, watch.probe)
    player.on_phase = _then(player.on_phase, watch.phase)
    player.on_note = _then(player.on_note, watch.note)
