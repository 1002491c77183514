"""notebooks/colab_training.ipynb: its shape, its Colab settings, and a headless run of the whole
notebook with the tiny CPU settings that ALPHAGOMOKU_NOTEBOOK_SMOKE=1 selects, so it cannot rot."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

from alphagomoku.train.checkpoint import load_checkpoint
from alphagomoku.train.cli import build_parser, resolve_config

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "colab_training.ipynb"
KERNEL = "alphagomoku-notebook-test"


def read_notebook():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    return nb


def settings_cell_source(nb) -> str:
    sources = [c.source for c in nb.cells if c.cell_type == "code" and "SETTINGS = dict(" in c.source]
    assert len(sources) == 1, "exactly one cell defines SETTINGS"
    return sources[0]


def settings(monkeypatch, smoke: bool) -> dict:
    """What the settings cell defines, executed alone with or without the smoke variable."""
    if smoke:
        monkeypatch.setenv("ALPHAGOMOKU_NOTEBOOK_SMOKE", "1")
    else:
        monkeypatch.delenv("ALPHAGOMOKU_NOTEBOOK_SMOKE", raising=False)
    namespace: dict = {}
    exec(settings_cell_source(read_notebook()), namespace)  # noqa: S102 - our own notebook's cell
    return namespace


def train_config(flags: list[str]):
    """The TrainConfig that scripts/train.py would build from ``flags`` (invalid ones raise)."""
    return resolve_config(build_parser().parse_args(flags))


def test_every_code_cell_has_a_note_and_the_file_is_stored_without_outputs():
    nb = read_notebook()
    assert nb.cells[0].cell_type == "markdown"
    for before, cell in zip(nb.cells, nb.cells[1:]):
        if cell.cell_type == "code":
            assert before.cell_type == "markdown" and before.source.strip(), \
                f"code cell {cell.id} has no note above it"
            assert cell.outputs == [] and cell.execution_count is None, \
                f"code cell {cell.id} was saved with its outputs"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert nb.metadata["accelerator"] == "GPU"  # Colab opens it on a GPU runtime


def test_the_colab_settings_suit_a_t4_and_are_valid_flags(monkeypatch):
    ns = settings(monkeypatch, smoke=False)
    assert ns["SMOKE"] is False and ns["ALLOW_CPU"] is False
    flags = ns["TRAIN_FLAGS"]
    cfg = train_config(flags)
    assert (cfg.parallel_workers, cfg.device) == (2, "auto")
    assert (cfg.board_size, cfg.n_in_row, cfg.model_preset) == (15, 5, "small")
    assert "--no-progress" not in flags  # the notebook shows the progress bars


def test_the_smoke_settings_are_tiny_and_on_the_cpu(monkeypatch):
    ns = settings(monkeypatch, smoke=True)
    cfg = train_config(ns["TRAIN_FLAGS"])
    assert (cfg.board_size, cfg.n_in_row, cfg.model_preset, cfg.device) == (7, 4, "tiny", "cpu")
    assert cfg.epochs == 1 and cfg.parallel_workers in (1, 2)
    assert cfg.selfplay_games <= 8 and cfg.simulations <= 16


@pytest.fixture
def venv_kernel(tmp_path, monkeypatch):
    """A kernel spec that starts this interpreter (the venv's), found first through JUPYTER_PATH,
    so the notebook never runs in some other Python that happens to own the name python3."""
    data = tmp_path / "jupyter"
    write_kernel_spec(data / "kernels" / KERNEL, overrides={"display_name": KERNEL})
    monkeypatch.setenv("JUPYTER_PATH", str(data))
    return KERNEL


def test_the_notebook_runs_headless_on_the_cpu(tmp_path, monkeypatch, venv_kernel):
    run_dir = tmp_path / "run"
    monkeypatch.setenv("ALPHAGOMOKU_NOTEBOOK_SMOKE", "1")
    monkeypatch.setenv("ALPHAGOMOKU_NOTEBOOK_RUN_DIR", str(run_dir))
    monkeypatch.delenv("ALPHAGOMOKU_REPO_URL", raising=False)
    nb = read_notebook()
    client = NotebookClient(nb, timeout=300, kernel_name=venv_kernel,
                            resources={"metadata": {"path": str(ROOT / "notebooks")}})
    client.execute()  # a failing cell raises CellExecutionError with its traceback

    def text_of(cell) -> str:
        parts = []
        for out in cell.outputs:
            parts.append(out.get("text", "") + out.get("data", {}).get("text/plain", ""))
        return "".join(parts)

    text = "\n".join(text_of(c) for c in nb.cells if c.cell_type == "code")
    assert f"Python {sys.executable}" in text, "the kernel must run the venv's interpreter"
    assert "no clone, no install" in text
    assert "RESULT: all checks passed" in text
    assert "search kernels ready" in text
    assert "[worker 0] using CPU" in text and "[worker 1] using CPU" in text
    assert "self-play 1:" in text, "progress bars are shown"
    assert "epoch 1/1" in text
    assert "Game over:" in text

    # What the run left: one epoch, its metrics, and an exported model the engine accepted.
    assert load_checkpoint(run_dir / "checkpoints" / "latest.pt")["epoch"] == 1
    with open(run_dir / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["epoch"]) for r in rows] == [1] and int(rows[0]["games"]) == 4
    model = run_dir / "model.pt"
    from alphagomoku.nn.io import load_model

    assert load_model(model).config.width == 7
    assert f"pbrain-alphagomoku --checkpoint {model} --n-in-row 4" in text
    engine_cell = next(c for c in nb.cells if c.cell_type == "code" and "alphagomoku.engine" in c.source)
    replies = text_of(engine_cell).split()
    assert "OK" in replies

