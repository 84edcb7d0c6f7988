"""What the fuzz tests share: a bounded budget (a longer run by CHORUS_FUZZ_EXAMPLES), the
JSON values and hostile strings they draw from, and the check that a reply is well-formed
JSON-RPC 2.0.

By default each property runs `DEFAULT_EXAMPLES` examples (a few seconds), fresh ones on
each local run and a fixed set under CI (`CI=true`), so CI is never red by chance; set
`CHORUS_FUZZ_EXAMPLES=20000` (any number) for a long run. Generated JSON nests at most
`MAX_DEPTH` deep: far below the parser's limit until the deep-nesting fix lands (then
nesting beyond the limit is fuzzed by tests/rpc/test_fuzz_protocol.py's own cases).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from typing import Any, Iterator

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from chorus_tools.rpc.wire.errors import CODES

DEFAULT_EXAMPLES = 60
EXAMPLES = int(os.environ.get("CHORUS_FUZZ_EXAMPLES", DEFAULT_EXAMPLES))
MAX_DEPTH = 900
CI = os.environ.get("CI") == "true"  # CI replays fixed examples: a red run is never luck


def budget(scale: float = 1.0) -> settings:
    """Settings for one property: its share of the example budget, no per-example
    deadline (a spawned server's answer time is not the property)."""
    return settings(max_examples=max(1, int(EXAMPLES * scale)), deadline=None,
                    derandomize=CI,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture,
                                           HealthCheck.data_too_large])


@contextlib.contextmanager
def no_hang(seconds: int = 20) -> Iterator[None]:
    """Fail one example that blocks (as opening a FIFO would) instead of hanging the run."""
    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError("the example blocked (was a FIFO opened?)")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


HUGE_NUMBERS = st.sampled_from([
    "1e400", "-1e400", "1e-400", "123456789012345678901234567890", "-0", "0.0", "1E+2",
    "18446744073709551616", "-9223372036854775809", "9" * 400, "1" + "0" * 4300])

TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(["", "\x00", "\ud800", "\udcff", "\u2028", "\ufeff", "a" * 5000,
                     "$/cancelRequest", "2.0", "2", "file.read"]),
)

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63),
                    st.floats(allow_nan=False, allow_infinity=False), TEXT)

JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)


def dumps(value: Any) -> str:
    """JSON text as any client might send it (lone surrogates as \\u escapes)."""
    return json.dumps(value)


def check_reply(reply: Any) -> None:
    """A reply is one response object, or a non-empty array of them."""
    if isinstance(reply, list):
        assert reply, "an empty array is never a reply"
        for item in reply:
            check_response(item)
    else:
        check_response(reply)


def check_response(resp: Any) -> None:
    assert isinstance(resp, dict), resp
    assert resp.get("jsonrpc") == "2.0", resp
    assert "id" in resp, resp
    rid = resp["id"]
    assert rid is None or isinstance(rid, (str, int, float)) and not isinstance(rid, bool)
    assert ("result" in resp) != ("error" in resp), resp
    assert set(resp) <= {"jsonrpc", "id", "result", "error"}, resp
    if "error" in resp:
        err = resp["error"]
        assert isinstance(err["code"], int) and isinstance(err["message"], str), resp
        data = err.get("data")
        names = {*CODES, "parse_error", "invalid_request", "method_not_found"}
        assert isinstance(data, dict) and data["error"] in names, resp
        assert data["error"] != "internal_error", resp


def strict_loads(raw: bytes) -> Any:
    """Parse a reply as strict JSON: NaN and Infinity are not JSON."""
    def refuse(name: str) -> None:
        raise AssertionError(f"the reply holds {name}, which is not JSON: {raw[:200]!r}")
    return json.loads(raw, parse_constant=refuse)
