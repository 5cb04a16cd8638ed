"""How the console and the reports count things in words."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 turn`, `2 turns`, `0 turns` (`nouns` where adding an s is wrong)."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def slot_name(layer: int, slot: int) -> str:
    """A slot as the console and the reports name it: layers count from 1 at the bottom, the
    slots 0, 1, 2 run across the layer (docs/cell.md). Never `9.1`, which reads as a number."""
    return f"layer {layer} slot {slot}"
