"""Inventory: stock levels, reservations and the reorder report."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class Item:
    sku: str
    name: str
    on_hand: int = 0
    reserved: int = 0
    tags: list[str] = field(default_factory=list)

    @property
    def available(self) -> int:
        return max(self.on_hand - self.reserved, 0)


class Inventory:
    def __init__(self, items: list[Item] | None = None) -> None:
        self.items = {item.sku: item for item in items or []}

    def reserve(self, sku: str, quantity: int) -> bool:
        item = self.items.get(sku)
        if item is None:
            log.warning("unknown sku %s", sku)
            return False
        if item.available < quantity:
            log.info("not enough %s: %d < %d", sku,
                     item.available, quantity)
            return False
        item.reserved += quantity
        return True

    def release(self, sku: str, quantity: int) -> None:
        item = self.items[sku]
        item.reserved = max(item.reserved - quantity, 0)

    def reorder_report(self, threshold: int = 5) -> list[str]:
        lines = []
        for item in sorted(self.items.values(),
                           key=lambda i: (i.available, i.sku)):
            if item.available <= threshold:
                lines.append(
                    f"{item.sku}: {item.name} "
                    f"({item.available} left)"
                )
        return lines


def load(rows: list[dict[str, str]]) -> Inventory:
    items = []
    for row in rows:
        try:
            items.append(Item(sku=row["sku"], name=row["name"],
                              on_hand=int(row.get("on_hand", 0))))
        except (KeyError, ValueError) as exc:
            log.error("bad row %r: %s", row, exc)
            continue
    return Inventory(items)
