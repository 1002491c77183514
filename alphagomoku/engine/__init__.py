"""The Gomocup ("pbrain") engine: the protocol loop (protocol.py), the move-time budget
(timing.py) and the command line (``pbrain-alphagomoku`` / ``python -m alphagomoku.engine``)."""

from alphagomoku.engine.protocol import ABOUT_REPLY, GomocupEngine, ProtocolError, rule_from_bits
from alphagomoku.engine.timing import TimeControl

__all__ = ["ABOUT_REPLY", "GomocupEngine", "ProtocolError", "TimeControl", "rule_from_bits"]
