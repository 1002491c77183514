"""One short line on why a saved file could not be read, for the messages users see.

torch and numpy explain a failed load in several lines, and for a file their safe loaders refuse
they suggest loading it unsafely (``weights_only=False``, ``allow_pickle=True``). A user holding
a damaged or foreign file must not be told to run its contents, so only the part that names the
damage is kept.
"""

from __future__ import annotations

import re

# Where the libraries' own texts turn from what is wrong to advice about their internals.
_ADVICE = (". Please use", ". This is an internal miniz error", ". If you trust the file")


def read_error_reason(error: BaseException) -> str:
    """``Type: detail`` on one line, the libraries' advice left out."""
    text = str(error)
    unpickler = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", text)
    if unpickler:
        detail = unpickler.group(1).strip()
    elif text.startswith("This file contains pickled (object) data"):
        # numpy's guess for any file that is neither .npy nor .npz.
        detail = "not a .npz or .npy file"
    else:
        detail = next((line.strip() for line in text.splitlines() if line.strip()), "")
    for advice in _ADVICE:
        detail = detail.split(advice)[0]
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__
