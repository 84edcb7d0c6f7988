"""The command line's value types and refusals (rpc/cli.py builds the options with them):
every byte option reads a size with a unit through one parser, every refusal names the
option, and an option spelled nearly right is answered with the one meant."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from typing import Callable, NoReturn, Sequence

SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
SIZES = ("sizes: bytes, or with K, M or G for KiB, MiB, GiB (1024-based: 256M is "
         "268435456; a trailing B or iB is allowed)")
_SIZE = re.compile(r"\s*(\d+)\s*([KMG]?)(?:I?B)?\s*", re.IGNORECASE)


def size(minimum: int) -> Callable[[str], int]:
    """A byte count: digits, optionally with K, M or G (1024-based): `256M`, `64MiB`,
    `1g`, `268435456`; at least `minimum`."""
    def parse(text: str) -> int:
        found = _SIZE.fullmatch(text)
        if found is None:
            raise argparse.ArgumentTypeError(
                f"expected a size such as 268435456, 256M or 1G (K, M, G: KiB, MiB, GiB), "
                f"not {text!r}")
        value = int(found.group(1)) * SIZE_UNITS[found.group(2).upper()]
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum} byte"
                                             f"{'s' if minimum != 1 else ''}, not {text!r}")
        return value
    return parse


def count(minimum: int) -> Callable[[str], int]:
    """A whole number, at least `minimum`."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {text!r}")
        return value
    return parse


MAX_SECONDS = 1e9  # about 31 years: past it a clock's arithmetic overflows (an HTTP
# Retry-After in whole seconds, the regex engine's timeout), so a bound past any need


def seconds(text: str) -> float:
    """A positive number of seconds, at most MAX_SECONDS (`inf` is none)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    if not value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_SECONDS:g} seconds, not {text!r}")
    return value


class Parser(argparse.ArgumentParser):
    """argparse, whose refusals also name the option an unknown one was probably meant
    to be (`--workspce`: did you mean --workspace?), even when argparse complains first
    of a required option that the misspelling was meant to give."""

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: None = None) -> argparse.Namespace:
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        super().error(message + "".join(self._near_options()))

    def _near_options(self) -> list[str]:
        known = [o for action in self._actions for o in action.option_strings
                 if o.startswith("--")]
        notes = []
        for given in getattr(self, "_given", []):
            if given == "--":
                break
            name = given.partition("=")[0]
            if not name.startswith("--") or name in known or self._abbreviates(name, known):
                continue
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            notes.append(f"; {name} is no option" + (f": did you mean {near[0]}?" if near
                                                      else " (see --help)"))
        return notes

    def _abbreviates(self, name: str, known: list[str]) -> bool:
        return self.allow_abbrev and sum(o.startswith(name) for o in known) == 1
