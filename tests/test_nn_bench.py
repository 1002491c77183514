"""The network benchmark runs with small settings and reports rates and skips."""

import argparse

import pytest

from alphagomoku.bench import nn as bench


def parse(*argv):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_defaults_cover_every_preset_and_the_issue_batch_sizes():
    args = parse()
    assert args.presets == ["tiny", "compact", "small", "medium", "large"]
    assert args.batch_sizes == [1, 16, 64, 256] and args.board_size is None and args.recipe is None
    assert args.device == "auto" and args.threads == "1,all"
    assert args.backends == ["torch", "onnx"]


def test_a_small_run_reports_a_rate_per_batch_and_thread_count():
    args = parse("--device", "cpu", "--presets", "tiny", "--batch-sizes", "1,4",
                 "--board-size", "7", "--seconds", "0.05", "--threads", "1,2")
    result = bench.run(args)
    for key in ("tiny b1 t1", "tiny b4 t1", "tiny b1 t2", "tiny b4 t2"):
        assert result[key] > 0
    assert result["device"] == "cpu" and result["skipped"] == "none"
    assert result["board_size"] == 7 and result["tiny network"].startswith("b")


def test_a_recipe_times_the_network_it_builds():
    from alphagomoku.train.config import TrainConfig
    from alphagomoku.train.recipes import recipe_path

    args = parse("--device", "cpu", "--recipe", "cpu-hour", "--batch-sizes", "2",
                 "--board-size", "9", "--seconds", "0.05", "--threads", "1", "--backends", "torch")
    result = bench.run(args)
    built = TrainConfig.from_file(recipe_path("cpu-hour"), board_size=9).model
    assert result["cpu-hour network"] == built.label and "+threats" in built.label
    assert result["cpu-hour b2 t1"] > 0 and result["board_size"] == 9
    assert not any(key.startswith("tiny ") for key in result)


def test_an_unknown_recipe_is_a_usage_error_that_lists_the_recipes():
    from alphagomoku.bench import UsageError

    with pytest.raises(UsageError, match="cpu-hour"):
        bench.run(parse("--device", "cpu", "--recipe", "no-such-recipe"))


def test_onnx_is_measured_beside_torch_with_its_speed_up():
    from alphagomoku.nn.inference_backend import onnx_problem

    args = parse("--device", "cpu", "--presets", "tiny", "--batch-sizes", "2",
                 "--board-size", "7", "--seconds", "0.05", "--threads", "1")
    result = bench.run(args)
    if onnx_problem():
        assert result["backends"] == "torch" and "onnx (onnxruntime" in result["backends_left_out"]
        return
    assert result["backends"] == "torch,onnx" and result["backends_left_out"] == "none"
    assert result["tiny b2 t1 onnx"] > 0
    assert result["tiny b2 t1 onnx/torch"] == pytest.approx(result["tiny b2 t1 onnx"] / result["tiny b2 t1"])
    only_torch = bench.run(parse("--device", "cpu", "--presets", "tiny", "--batch-sizes", "2",
                                 "--board-size", "7", "--seconds", "0.05", "--threads", "1",
                                 "--backends", "torch"))
    assert "tiny b2 t1 onnx" not in only_torch and only_torch["tiny b2 t1"] > 0


def test_calls_estimated_to_be_too_slow_are_skipped_and_listed():
    args = parse("--device", "cpu", "--presets", "tiny", "--batch-sizes", "1,100000",
                 "--board-size", "7", "--seconds", "0.05", "--threads", "1",
                 "--max-call-seconds", "0.5")
    result = bench.run(args)
    assert result["tiny b1 t1"] > 0 and "tiny b100000 t1" not in result
    assert "tiny b100000 t1 (~" in result["skipped"]


@pytest.mark.parametrize("argv", [["--presets", "tiny,huge"], ["--batch-sizes", "1,0"],
                                  ["--batch-sizes", "a"], ["--backends", "onnx,tvm"]])
def test_bad_options_are_usage_errors(argv):
    with pytest.raises(SystemExit):
        parse(*argv)
