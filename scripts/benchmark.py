#!/usr/bin/env python
"""Benchmarks the docs quote: ``python scripts/benchmark.py NAME [--json]``.

NAME is one of game, mcts, nn, selfplay, arch, cache, vcf, all, learning, scale and train.

Each subcommand has its own options (``python scripts/benchmark.py mcts --help``). ``learning``
trains for a given number of minutes, ``scale`` compares the pool with Ray actors, ``train``
times a recipe's trainer (a GPU recipe's by default); none of them is part of ``all``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from alphagomoku.bench import BENCHMARKS, LONG_BENCHMARKS, UsageError
from alphagomoku.bench.machine import describe


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="which", required=True)
    for name in BENCHMARKS + LONG_BENCHMARKS:
        module = importlib.import_module(f"alphagomoku.bench.{name}")
        p = sub.add_parser(name, help=module.__doc__.splitlines()[0])
        p.add_argument("--json", action="store_true", help="print the figures as JSON")
        module.add_arguments(p)
    p = sub.add_parser("all", help="every benchmark with its default options")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser


def _print_text(name: str, result: dict) -> None:
    print(f"== {name}")
    for key, value in result.items():
        if isinstance(value, float):
            value = f"{value:,.1f}" if abs(value) >= 100 else f"{value:.3g}"
        print(f"  {key}: {value}")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    names = BENCHMARKS if args.which == "all" else (args.which,)
    results = {"machine": describe()}
    for name in names:
        module = importlib.import_module(f"alphagomoku.bench.{name}")
        if args.which == "all":
            sub = argparse.ArgumentParser()
            module.add_arguments(sub)
            run_args = sub.parse_args([])
        else:
            run_args = args
        try:
            results[name] = module.run(run_args)
        except KeyboardInterrupt:
            print(f"benchmark.py {name}: interrupted", file=sys.stderr)
            return 130
        except UsageError as e:
            print(f"benchmark.py {name}: error: {e}", file=sys.stderr)
            return 2
        if not args.json:
            getattr(module, "print_text", lambda r: _print_text(name, r))(results[name])
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
