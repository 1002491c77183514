"""Every command the docs show runs a script, module or make target that exists, with flags it
takes, so that the docs cannot drift from the code.

Commands are read from the fenced shell blocks and the inline code of README.md,
COLAB_TRAINING.md and docs/*.md: ``python scripts/X.py [SUBCOMMAND] --flag ...``,
``pbrain-alphagomoku --flag ...`` (also inside an ``engine:`` player spec), ``python -m
alphagomoku.X`` and ``make TARGET``. Each script's argparse parser is taken in-process, from
the first ``parse_args`` its ``main`` calls, so nothing runs and no subprocess starts.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import runpy
import shlex
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "COLAB_TRAINING.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"^```(?:sh|bash|shell|console|)\s*\n(.*?)^```", re.MULTILINE | re.DOTALL)
ANY_BLOCK = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")
PYTHON = re.compile(r"^(?:\S*/)?python[0-9.]*$")
ENGINE = re.compile(r"^(?:\S*/)?pbrain-alphagomoku$")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__(parser.prog)
        self.parser = parser


@lru_cache(maxsize=None)
def _parser_of(entry: str) -> argparse.ArgumentParser:
    """The parser of a script path (``scripts/X.py``) or of the engine (``engine``)."""
    if entry == "engine":
        from alphagomoku.engine.__main__ import main
    else:
        main = runpy.run_path(str(ROOT / entry), run_name="docs_check")["main"]

    def capture(self, *args, **kwargs):
        raise _Parsed(self)

    saved = (argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args, sys.argv)
    argparse.ArgumentParser.parse_args = capture
    argparse.ArgumentParser.parse_known_args = capture
    sys.argv = [entry]
    try:
        main()
    except _Parsed as parsed:
        return parsed.parser
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args, sys.argv = saved
    raise AssertionError(f"{entry}: main() returned without parsing its arguments")


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@lru_cache(maxsize=None)
def _make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text()
    return frozenset(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", text, re.MULTILINE))


def _logical_lines(block: str) -> list[str]:
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def commands_in(text: str) -> list[str]:
    found = []
    for block in SHELL_BLOCK.findall(text):
        found += _logical_lines(block)
    for span in INLINE.findall(ANY_BLOCK.sub("", text)):
        found.append(span)
    return found


def _words(line: str) -> list[str]:
    line = re.sub(r"^\s*(?:\$|!|%)\s*", "", line)
    try:
        words = shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote in prose: the words before it still count
        words = line.split("#", 1)[0].split()
    # "[--flag X]" marks an optional part in the docs.
    return [w.strip("[]") for w in words if w.strip("[]")]


REDIRECT = re.compile(r"^\d*(?:>>?|<)(&\d+)?(.*)$")


def _segments(words: list[str]) -> list[list[str]]:
    parts, current, skip = [], [], False
    for w in words:
        if skip:
            skip = False
        elif w in ("&&", "||", ";", "|", "&"):
            parts.append(current)
            current = []
        elif match := REDIRECT.match(w):
            skip = not match.group(1) and not match.group(2)  # "> log": the file is the next word
        else:
            current.append(w)
    return [*parts, current]


def problems_in(line: str) -> list[str]:
    """What is wrong with the commands on one line of the docs ([] when all is well)."""
    out = []
    for words in _segments(_words(line)):
        while words and ENV_ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words:
            continue
        out += _check(words)
        for w in words:  # an engine given to the arena as a player
            if w.startswith("engine:"):
                inner = shlex.split(w[len("engine:"):])
                if inner and (ENGINE.match(inner[0]) or inner[1:3] == ["-m", "alphagomoku.engine"]):
                    out += _check(inner)
    return out


def _check(words: list[str]) -> list[str]:
    head, rest = words[0], words[1:]
    if head == "make":
        targets = [w for w in rest if not ENV_ASSIGNMENT.match(w) and not w.startswith("-")]
        return [f"make: no target {t!r} in the Makefile" for t in targets if t not in _make_targets()]
    if ENGINE.match(head):
        return _check_flags("engine", "pbrain-alphagomoku", rest)
    if not PYTHON.match(head) or not rest:
        return []
    if rest[0] == "-m" and len(rest) > 1 and rest[1].startswith("alphagomoku"):
        if rest[1] == "alphagomoku.engine":
            return _check_flags("engine", "python -m alphagomoku.engine", rest[2:])
        if importlib.util.find_spec(rest[1]) is None:
            return [f"python -m {rest[1]}: no such module"]
        return []
    if rest[0].startswith("scripts/"):
        if not (ROOT / rest[0]).is_file():
            return [f"{rest[0]}: no such script"]
        return _check_flags(rest[0], rest[0], rest[1:])
    return []


def _check_flags(entry: str, shown: str, args: list[str]) -> list[str]:
    parser = _parser_of(entry)
    subs = _subparsers(parser)
    if subs:
        names = [a for a in args if not a.startswith("-")]
        if not names or names[0] not in subs:
            return [f"{shown}: needs one of {sorted(subs)}, got {names[:1]}"]
        flags = _flags(parser) | _flags(subs[names[0]])
        shown = f"{shown} {names[0]}"
    else:
        flags = _flags(parser)
    return [f"{shown}: no flag {a.split('=')[0]}" for a in args
            if a.startswith("--") and a.split("=")[0] not in flags]


def _doc_lines():
    for path in DOCS:
        for line in commands_in(path.read_text()):
            if problems_in(line):
                yield path.relative_to(ROOT), line


def test_every_command_in_the_docs_names_a_script_and_flags_that_exist():
    problems = [f"{path}: {line.strip()}\n    " + "; ".join(problems_in(line))
                for path, line in _doc_lines()]
    assert not problems, "commands in the docs that would not run:\n" + "\n".join(problems)


def test_the_docs_show_commands_of_every_kind_the_check_reads():
    # The check must be reading the docs: if a change to the parsing found no commands, the test
    # above would pass on nothing.
    lines = [line for path in DOCS for line in commands_in(path.read_text())]
    joined = "\n".join(lines)
    for kind in ("python scripts/train.py --", "python scripts/benchmark.py vcf --",
                 "pbrain-alphagomoku", "make train", "python -m alphagomoku."):
        assert kind in joined, kind


@pytest.mark.parametrize("line, expected", [
    ("python scripts/train.py --recipe cpu-hour --run-dir runs/x", []),
    ("python scripts/train.py --recipee cpu-hour", ["scripts/train.py: no flag --recipee"]),
    ("python scripts/benchmark.py vcf --json --gamez 8", ["scripts/benchmark.py vcf: no flag --gamez"]),
    ("python scripts/benchmark.py vcf --keep-planes --games 80 \\\n    --seed 11", []),
    ("python scripts/nope.py --x", ["scripts/nope.py: no such script"]),
    ("TRAIN_MINUTES=10 make train", []),
    ("make train > log 2>&1 && make tset", ["make: no target 'tset' in the Makefile"]),
    ("make trian", ["make: no target 'trian' in the Makefile"]),
    ("pbrain-alphagomoku --no-vcf --vcf-budged 5", ["pbrain-alphagomoku: no flag --vcf-budged"]),
    ('python scripts/evaluate.py --player-a "engine:.venv/bin/pbrain-alphagomoku --eval-cachee 0"',
     ["pbrain-alphagomoku: no flag --eval-cachee"]),
    ("python -m alphagomoku.nowhere", ["python -m alphagomoku.nowhere: no such module"]),
    ("python scripts/evaluate.py --games 40 [--out DIR]   # a comment --not-a-flag", []),
])
def test_the_check_catches_what_it_should(line, expected):
    assert problems_in(_logical_lines(line)[0]) == expected


def _script_args(line: str, script: str) -> list[list[str]]:
    """The arguments of each ``python scripts/<script>`` command on one line of the docs."""
    return [words[2:] for words in _segments(_words(line))
            if len(words) > 1 and PYTHON.match(words[0]) and words[1] == f"scripts/{script}"]


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args[:-1] else None


def _runs_from_shipped_weights(text: str) -> list[tuple[list[str], Path]]:
    """Each ``train.py --init-weights FILE`` command in one doc whose FILE is a shipped model, or
    a model that a ``distill.py`` command in the same doc writes from a shipped student (the
    student's shape is the file's)."""
    lines = commands_in(text)
    made = {_flag(a, "--out"): _flag(a, "--student") for line in lines
            for a in _script_args(line, "distill.py")}
    found = []
    for line in lines:
        for args in _script_args(line, "train.py"):
            weights = _flag(args, "--init-weights")
            weights = made.get(weights, weights)
            if weights and weights.startswith("alphagomoku/assets/"):
                found.append((args, ROOT / weights))
    return found


def test_a_run_the_docs_start_from_shipped_weights_builds_a_network_they_fit():
    # The flag check above cannot see that a recipe's preset is shallower than the shipped
    # network: such a command parses and then stops with "--init-weights: ... holds another
    # network".
    from alphagomoku.train.checkpoint import starting_weights
    from alphagomoku.train.cli import build_parser, resolve_config

    runs = [(path.relative_to(ROOT), args, weights) for path in DOCS
            for args, weights in _runs_from_shipped_weights(path.read_text())]
    assert len(runs) >= 3, runs   # README's and training.md's (one through distill.py)
    for path, args, weights in runs:
        config = resolve_config(build_parser().parse_args(args)).model
        assert starting_weights(weights, config), f"{path}: train.py {' '.join(args)}"


def test_the_shipped_weights_check_follows_a_distilled_file_to_its_student():
    text = ("```sh\npython scripts/distill.py --teacher t.pt --student alphagomoku/assets/x.pt "
            "--out runs/d.pt\npython scripts/train.py --init-weights runs/d.pt --run-dir r\n"
            "python scripts/train.py --init-weights runs/other.pt\n```\n")
    assert _runs_from_shipped_weights(text) == [
        (["--init-weights", "runs/d.pt", "--run-dir", "r"], ROOT / "alphagomoku/assets/x.pt")]
