"""Whole-or-nothing file writes: a crash or Ctrl-C mid-write leaves the old file intact.

The data goes to a temporary file in the same directory (same filesystem, so the rename is
atomic), is flushed to disk, then ``os.replace`` puts it in place.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path):
    """Yield a temporary path to write; on success it replaces ``path``, on error it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); give it the permissions a plain open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def atomic_torch_save(obj, path: str | Path) -> None:
    import torch

    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        torch.save(obj, f)
