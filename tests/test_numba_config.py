"""The kernel cache follows the kernels' sources, so an edit never runs stale compiled code."""

from __future__ import annotations

import shutil

from alphagomoku import numba_config


def test_cache_directory_changes_when_a_kernel_source_changes(tmp_path, monkeypatch):
    copy = tmp_path / "alphagomoku"
    shutil.copytree(numba_config._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(numba_config, "_PACKAGE", copy)
    before = numba_config.kernel_sources_digest()
    # A file without kernels does not matter...
    (copy / "train" / "config.py").write_text("# edited\n" + (copy / "train" / "config.py").read_text())
    assert numba_config.kernel_sources_digest() == before
    # ...a kernel file does, even one that other kernels only import from.
    kernels = copy / "game" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\n# edited\n")
    assert numba_config.kernel_sources_digest() != before


def test_cache_lives_under_numba_cache_dir_when_set(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    path = numba_config.cache_dir()
    assert path.parent == tmp_path and path.name.startswith("kernels-")
