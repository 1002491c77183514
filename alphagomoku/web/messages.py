"""The page's messages to the server: JSON objects with a ``type``, checked here before any
game code sees them, so that a malformed message gets an answer that says what is wrong.

Each type lists its fields as ``name: (kinds, required)``. Numbers are bounded where a huge one
would tie up the server (simulations, seconds).
"""

from __future__ import annotations

import json

RULES = ("freestyle", "standard", "renju")
# The most simulations one analysis or move may ask for, and the longest move time: a page can
# ask for a long think, but not for one that outlives the person waiting for it. 20,000
# simulations is a tree of about 46 MB on 15x15 (100 MB on 22x22).
MAX_SIMULATIONS = 20_000
MAX_SECONDS = 120.0
MAX_TEXT = 200_000  # a .psq file of a full board is a few KB

_STR, _INT, _NUM, _BOOL, _LIST, _DICT = (str,), (int,), (int, float), (bool,), (list,), (dict,)

SCHEMAS: dict[str, dict[str, tuple[tuple, bool]]] = {
    "info": {},
    "new": {"size": (_INT, False), "rule": (_STR, False), "black": (_STR, False),
            "white": (_STR, False), "moves": (_STR, False)},
    "settings": {"black": (_STR, False), "white": (_STR, False), "strength": (_DICT, False),
                 "think": (_BOOL, False), "think_simulations": (_INT, False)},
    "move": {"move": (_STR, True)},
    "undo": {},
    "resign": {},
    "goto": {"ply": (_INT, True)},
    "analyse": {"simulations": (_INT, False), "model": (_STR, False)},
    "stop": {},
    "review": {"simulations": (_INT, False)},
    "compare": {"models": (_LIST, True), "simulations": (_INT, False)},
    "load_psq": {"text": (_STR, True)},
    "run_games": {},
    "load_run_game": {"file": (_STR, True), "index": (_INT, True)},
}


class MessageError(ValueError):
    """A message the server cannot act on; the text is shown on the page."""


def _kind_ok(value, kinds: tuple) -> bool:
    if isinstance(value, bool) and bool not in kinds:
        return False  # JSON true is no number
    return isinstance(value, kinds)


def check_strength(value: dict) -> tuple[str, float]:
    kind, amount = value.get("kind"), value.get("value")
    if kind not in ("simulations", "seconds"):
        raise MessageError("strength.kind must be 'simulations' or 'seconds'")
    if not _kind_ok(amount, _NUM):
        raise MessageError("strength.value must be a number")
    if kind == "simulations":
        if int(amount) != amount or not 1 <= amount <= MAX_SIMULATIONS:
            raise MessageError(f"simulations must be a whole number from 1 to {MAX_SIMULATIONS}")
        return kind, int(amount)
    if not 0.05 <= amount <= MAX_SECONDS:
        raise MessageError(f"seconds per move must be from 0.05 to {MAX_SECONDS:g}")
    return kind, float(amount)


def parse_message(text: str | bytes) -> dict:
    """The checked message in ``text``; MessageError says what is wrong with it."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise MessageError("a message must be UTF-8 JSON text") from None
    if len(text) > MAX_TEXT:
        raise MessageError(f"message too long ({len(text)} characters; at most {MAX_TEXT})")
    try:
        msg = json.loads(text)
    except json.JSONDecodeError as e:
        raise MessageError(f"not JSON: {e.msg} at character {e.pos + 1}") from None
    if not isinstance(msg, dict):
        raise MessageError("a message must be a JSON object with a 'type'")
    kind = msg.get("type")
    if kind not in SCHEMAS:
        raise MessageError(f"unknown message type {kind!r}: expected one of {', '.join(SCHEMAS)}")
    schema = SCHEMAS[kind]
    for name, value in msg.items():
        if name in ("type", "id"):
            continue
        if name not in schema:
            raise MessageError(f"{kind}: unknown field {name!r}")
        kinds, _ = schema[name]
        if not _kind_ok(value, kinds):
            raise MessageError(f"{kind}: field {name!r} must be {kinds[0].__name__}, "
                               f"got {type(value).__name__}")
    for name, (_, required) in schema.items():
        if required and name not in msg:
            raise MessageError(f"{kind}: missing field {name!r}")
    if "rule" in msg and msg["rule"] not in RULES:
        raise MessageError(f"rule must be one of {', '.join(RULES)}, got {msg['rule']!r}")
    for name in ("simulations", "think_simulations"):
        if name in msg and not 1 <= msg[name] <= MAX_SIMULATIONS:
            raise MessageError(f"{name} must be from 1 to {MAX_SIMULATIONS}")
    if "strength" in msg:
        msg["strength"] = check_strength(msg["strength"])
    if kind == "compare" and (len(msg["models"]) != 2
                              or not all(isinstance(m, str) for m in msg["models"])):
        raise MessageError("compare: models must be a list of two model names")
    return msg
