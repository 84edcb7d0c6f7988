"""Shapes, for the outline tests."""

import math
from typing import Protocol

MAX_SIDES = 12
default_name = "shape"


# A shape is anything with an area.
# (two comment lines above)
class Shape(Protocol):
    """The protocol."""

    sides: int = 0

    def area(self) -> float:
        ...


@dataclass
class Square(Shape):
    def __init__(self, side: float) -> None:
        self.side = side

    @property
    def area(self) -> float:
        return self.side ** 2

    @staticmethod
    def unit() -> "Square":
        def make(side):
            return Square(side)
        return make(1.0)

    class Meta:
        ordering = ["side"]


async def fetch_all(
        urls: list[str],
        timeout: float = 1.0) -> list[bytes]:
    return [await get(u) for u in urls]


if math.pi > 3:
    def fallback():
        return "def inside(): a string, not a definition"
