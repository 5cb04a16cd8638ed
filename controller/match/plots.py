"""The pictures of a match report, as PNG files: the force trace of every probe of a robot turn,
and a map of the tower after a turn. Drawn with matplotlib's Agg canvas (no display, no global
backend switched)."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from controller.match.turns import LoggedTurn
from controller.wording import slot_name
from planning.game.tower import SLOTS_PER_LAYER, TowerState, layer_axis

WOOD = "#d9b27c"
EMPTY = "#ffffff"
TAKEN = "#c0392b"
PLACED = "#27ae60"
DPI = 100


def plot_probes(turn: LoggedTurn, path: Path) -> Path:
    """Force against time for each probe of the turn, each from its own first sample, with the
    force limit it was pushed to as a dashed line."""
    figure = Figure(figsize=(7.0, 4.0), dpi=DPI)
    axes = figure.add_subplot()
    for n, probe in enumerate(turn.probes):
        colour = f"C{n % 10}"
        if probe.trace:
            t0 = probe.trace[0][0]
            axes.plot([t - t0 for t, _ in probe.trace], [f for _, f in probe.trace], color=colour,
                      linewidth=1.0, label=f"{slot_name(probe.layer, probe.slot)}: peak "
                      f"{probe.peak_force_n:.2f} N, {probe.travel_mm:.1f} mm")
        axes.axhline(probe.threshold_n, color=colour, linestyle="--", linewidth=0.8)
    axes.set_xlabel("time since the probe began (s)")
    axes.set_ylabel("push force (N)")
    axes.set_title(f"{turn.label}'s probes (dashed: force limit)")
    axes.grid(True, alpha=0.3)
    if turn.probes:
        axes.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    figure.savefig(path)
    return path


def plot_tower(turn: LoggedTurn, path: Path) -> Path:
    """The tower after the turn, a row per layer (bottom first) and a box per slot: the slot the
    block was taken from ringed in red, where it went in green. A turn that never ended is drawn
    on the tower it started from, with its move when one was seen."""
    tower = turn.tower or _after_move(turn)
    layers = tower.layer_count if tower else 0
    notes = turn.violations + ["red: taken from, green: placed; x, y: the layer's block axis"]
    footer_in = 0.05 + 0.1 * len(notes)
    height_in = 1.4 + 0.22 * max(layers, 1) + footer_in
    figure = Figure(figsize=(3.6, height_in), dpi=DPI)
    axes = figure.add_subplot()
    for layer in range(1, layers + 1):
        for slot in range(SLOTS_PER_LAYER):
            present = tower.has_block(layer, slot)
            colour = PLACED if (layer, slot) == turn.target else WOOD if present else EMPTY
            axes.add_patch(Rectangle((slot + 0.05, layer - 0.9), 0.9, 0.8, facecolor=colour,
                                     edgecolor="#555555", linewidth=0.6))
        axes.text(-0.15, layer - 0.5, str(layer), ha="right", va="center", fontsize=6)
        axes.text(3.15, layer - 0.5, layer_axis(layer), ha="left", va="center", fontsize=6,
                  color="#777777")
    if turn.source is not None:
        layer, slot = turn.source
        axes.add_patch(Rectangle((slot + 0.05, layer - 0.9), 0.9, 0.8, fill=False,
                                 edgecolor=TAKEN, linewidth=2.0))
    axes.set_xlim(-0.6, 3.6)
    axes.set_ylim(0, max(layers, 1))
    axes.set_axis_off()
    status = {"fell": "THE TOWER FELL", "forfeit": "round lost by rule",
              "open": "cut short"}.get(turn.ended, f"stories {tower.stories()}" if tower else "")
    axes.set_title(f"{turn.label}\n{turn.move}; {status}", fontsize=8,
                   color=TAKEN if turn.ended == "fell" else "black")
    figure.text(0.02, 0.005, "\n".join(notes), fontsize=5.5, va="bottom",
                color=TAKEN if turn.violations else "#555555")
    figure.tight_layout()
    figure.subplots_adjust(bottom=(footer_in + 0.05) / height_in)
    figure.savefig(path)
    return path


def _after_move(turn: LoggedTurn) -> TowerState | None:
    tower = turn.before
    if tower is None or turn.source is None:
        return tower
    try:
        return tower.moved(turn.source, turn.target) if turn.target else tower.without(*turn.source)
    except ValueError:
        return turn.before
