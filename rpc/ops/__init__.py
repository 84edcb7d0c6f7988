"""Operations beside the transports: metrics, the drain state, structured logs."""
