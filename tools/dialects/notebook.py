"""A Jupyter notebook (.ipynb) as a model reads it: cell by cell, numbered from 0 as
notebook editing tools address cells, each with its source and then its outputs.

    <cell 0 code>
    print("hi")
    <output 0 stream>
    hi
    <output 1 display_data image/png: image 0>

Text outputs (streams, results' text/plain, errors with their traceback, ANSI colours
removed) are shown as text; image outputs are returned beside the text, as images, and
named in it by their index.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import orjson

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def render(data: bytes) -> tuple[str, list[dict[str, Any]]] | None:
    """(text, images) of a notebook; None when `data` is not a notebook's JSON."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        return None
    blocks: list[str] = []
    images: list[dict[str, Any]] = []
    for n, cell in enumerate(doc["cells"]):
        if not isinstance(cell, dict):
            continue
        blocks.append(f"<cell {n} {cell.get('cell_type', 'code')}>")
        source = _text(cell.get("source"))
        if source:
            blocks.append(source.rstrip("\n"))
        for k, output in enumerate(cell.get("outputs") or []):
            if isinstance(output, dict):
                blocks.extend(_output(n, k, output, images))
    return "\n".join(blocks) + ("\n" if blocks else ""), images


def _output(cell: int, k: int, output: dict[str, Any],
            images: list[dict[str, Any]]) -> list[str]:
    kind = output.get("output_type", "output")
    if kind == "stream":
        return [f"<output {k} stream {output.get('name', 'stdout')}>",
                _clean(_text(output.get("text")))]
    if kind == "error":
        trace = _clean("\n".join(_text(line) for line in output.get("traceback") or []))
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return [f"<output {k} error>", trace or head]
    data = output.get("data")
    bundle: dict[str, Any] = data if isinstance(data, dict) else {}
    for mime in IMAGE_TYPES:
        if mime in bundle:
            image = _image(bundle[mime])
            if image is not None:
                images.append({"cell": cell, "output": k, "mime_type": mime, "image": image})
                return [f"<output {k} {kind} {mime}{image_marker(len(images) - 1)}"]
    if "text/plain" in bundle:
        return [f"<output {k} {kind}>", _clean(_text(bundle["text/plain"]))]
    return [f"<output {k} {kind}: {', '.join(sorted(bundle)) or 'no data'}>"]


def image_marker(index: int) -> str:
    """How the text names image `index` of the rendering (the end of its output line)."""
    return f": image {index}>"


def _text(value: Any) -> str:
    """nbformat keeps multi-line strings as a string or a list of lines."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _clean(text: str) -> str:
    return _ANSI.sub("", text).rstrip("\n")


def _image(value: Any) -> str | None:
    """The base64 of an image output, re-encoded without the line breaks nbformat allows;
    None when it is not base64."""
    try:
        return base64.b64encode(base64.b64decode(_text(value), validate=False)).decode()
    except (binascii.Error, ValueError):
        return None
