"""The docs and the code speak of what the project is, not of how it was made: no session or
issue numbers, no references to the tracker. The history is in git."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# "session 12", "sessions 16 to 24", "session-23", "issue 10", "issues 10 and 11", "issue-11",
# "#10" (a tracker reference: not a Markdown heading, not "# 10" in a comment), "stop 36".
HISTORY = re.compile(
    r"\b(?:sessions?|issues?)[ -]\d+"
    r"|(?<![\w&#/])#\d+\b"
    r"|\bstops?[ -]\d+\b",
    re.IGNORECASE,
)


def _files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "COLAB_TRAINING.md"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    files += sorted((ROOT / "alphagomoku").rglob("*.py"))
    files += sorted((ROOT / "scripts").rglob("*.py"))
    files += sorted((ROOT / "configs").rglob("*.json"))
    return [f for f in files if f.is_file()]


def history_words(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in HISTORY.finditer(text)]


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_session_or_issue_numbers(path):
    found = history_words(path.read_text(encoding="utf-8"))
    assert not found, "; ".join(f"line {n}: {word!r}" for n, word in found)


@pytest.mark.parametrize("text", [
    "the default until session 25", "Sessions 16 to 24", "the session-23 match", "before issue 10",
    "issues 10 and 11", "see #10", "(#41)", "at stop 36",
])
def test_the_check_finds_history_words(text):
    assert history_words(text)


@pytest.mark.parametrize("text", [
    "## Heading", "x = 1  # 10 positions", "color: #fff", "docs/benchmarks.md#gpu",
    "one session of Colab", "an issue with CUDA", "stop the run", "&#10;", "sessions resume",
])
def test_the_check_leaves_ordinary_words(text):
    assert not history_words(text)
