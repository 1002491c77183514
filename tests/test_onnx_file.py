"""A network as an ONNX file (nn/onnx_file.py): written from weights, read back with its config,
the same answers, bad files refused clearly, and the engine playing it without importing torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from alphagomoku.eval.players import NetworkPlayer
from alphagomoku.eval.specs import PlayerSpecError, check_player_spec
from alphagomoku.game import GameConfig, Position
from alphagomoku.nn import Evaluator, ModelConfig, PolicyValueNet
from alphagomoku.nn.onnx_file import OnnxFileError, read_onnx_file, write_onnx_file


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    import torch

    torch.manual_seed(0)
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, vcf_plane_budget=30)).eval()
    path = write_onnx_file(model, tmp_path_factory.mktemp("onnx") / "tiny9.onnx")
    return model, path


def test_an_onnx_file_answers_as_its_weights_and_keeps_their_config(written):
    model, path = written
    network = read_onnx_file(path)
    assert network.config == model.config
    rng = np.random.default_rng(1)
    planes = (rng.random((5, 7, 9, 9)) < 0.3).astype(np.float32)
    legal = rng.random((5, 81)) < 0.7
    want = Evaluator(model, "cpu")(planes, legal)
    for got, expected in zip(network(planes, legal), want):
        np.testing.assert_allclose(got, expected, atol=1e-5)
    with pytest.raises(ValueError, match="planes must have shape"):
        network(planes[:, :5], legal)


def test_files_that_are_not_such_networks_are_refused_with_the_reason(written, tmp_path):
    from alphagomoku.nn.onnx_export import export_onnx

    model, _ = written
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a graph")
    bare = tmp_path / "bare.onnx"  # a graph, but no config in its metadata
    bare.write_bytes(export_onnx(model))
    for path, words in ((tmp_path / "missing.onnx", "no ONNX file at"),
                        (junk, "is not a readable ONNX file"),
                        (bare, "holds no alphagomoku model config")):
        with pytest.raises(OnnxFileError, match=words):
            read_onnx_file(path)
    with pytest.raises(PlayerSpecError, match="holds no alphagomoku model config"):
        check_player_spec(f"net:{bare}")
    with pytest.raises(PlayerSpecError, match="plays 9x9"):
        check_player_spec(f"net:{written[1]}", GameConfig(width=15))


def test_the_shipped_networks_by_name_default_plays_any_board_and_cpu_hour_only_15x15():
    from alphagomoku.eval.specs import CPU_HOUR_MODEL, DEFAULT_MODEL

    renju_20 = GameConfig(width=20, rule="renju")
    assert check_player_spec("default", renju_20).path == str(DEFAULT_MODEL)
    assert check_player_spec("cpu-hour", GameConfig(width=15)).path == str(CPU_HOUR_MODEL)
    with pytest.raises(PlayerSpecError, match="the network plays 15x15 boards; this game is 20x20"):
        check_player_spec("cpu-hour", GameConfig(width=20))
    assert check_player_spec("default:64").count == 64
    assert check_player_spec("cpu-hour:32").count == 32
    with pytest.raises(PlayerSpecError, match="'cpu-hour:x': 'x' is not a whole number"):
        check_player_spec("cpu-hour:x")


def test_a_network_player_plays_an_onnx_file_on_the_cpu_only(written):
    _, path = written
    player = NetworkPlayer(path, simulations=16)
    assert player.model.config.width == 9 and str(player.device.device) == "cpu"
    player.reset(GameConfig(width=9))
    pos = Position.from_moves(["e5"], GameConfig(width=9))
    assert pos.legal_mask()[player.choose(pos)]
    for kwargs in ({"device": "cuda"}, {"backend": "torch"}):
        with pytest.raises(ValueError, match="is an ONNX file"):
            NetworkPlayer(path, **kwargs)


def test_the_engine_plays_the_shipped_network_without_importing_torch():
    """15x15 and 20x20 with the shipped network, from its ONNX file."""
    code = """
import sys
from alphagomoku.engine.__main__ import build_parser, player_factory
from alphagomoku.game import GameConfig, Position
player, notes = player_factory(build_parser().parse_args(["--device", "cpu"]))()
names = []
for size in (15, 20):
    game = GameConfig(width=size)
    player.reset(game)
    names.append(player.inner.name)
    player.choose(Position.from_moves(["h8", "h9", "j8"], game), 0.3)
print(notes, names)
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    said, torch_loaded = out.stdout.strip().splitlines()[-2:]
    assert "network on ONNX Runtime (cpu, fp32)" in said
    assert "the shipped network plays every board from 5x5 to 22x22" in said
    assert said.count("default.onnx") == 2 and "cpu-hour" not in said  # 15x15, then 20x20
    assert torch_loaded == "False"


def test_the_engine_in_int8_calibrates_on_its_first_searches_without_importing_torch():
    code = """
import sys
from alphagomoku.engine.__main__ import build_parser, player_factory
from alphagomoku.game import GameConfig, Position
args = build_parser().parse_args(["--device", "cpu", "--onnx-precision", "int8"])
player, notes = player_factory(args)()
game = GameConfig(width=15)
player.reset(game)
network = player.inner.primary.evaluator
print(network.arithmetic)
position = Position.from_moves(["h8", "h9", "j8"], game)
while not network.quantized:
    position = position.play(player.choose(position, 0.3))
print(notes)
print(network.arithmetic, "torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    before, said, after = out.stdout.strip().splitlines()[-3:]
    assert before == "fp32 until int8 is calibrated"
    assert "network on ONNX Runtime (cpu, fp32 until int8 is calibrated)" in said
    assert after == "int8 False"
