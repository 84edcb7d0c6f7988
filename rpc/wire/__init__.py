"""The wire: bytes in and out (framing), strict JSON-RPC envelopes, the error model, the
stdio wiring."""
