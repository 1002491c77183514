"""Links between the docs land somewhere: every ``(#anchor)`` and ``(path.md#anchor)`` names a
heading that exists, and every linked file exists. Headings get renamed as the docs change; a
link left pointing at the old name fails here rather than on a reader's click."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]*)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def _docs() -> list[Path]:
    return [ROOT / "README.md", ROOT / "COLAB_TRAINING.md", *sorted((ROOT / "docs").rglob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, inline markup and punctuation dropped, each
    space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(text: str) -> list[str]:
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out += LINK.findall(line)
    return out


@pytest.mark.parametrize("path", _docs(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_to_a_doc_or_heading_lands(path):
    broken = []
    for target in links(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, "; ".join(broken)


@pytest.mark.parametrize("heading, anchor", [
    ("An hour of `cpu-hour`, one change at a time", "an-hour-of-cpu-hour-one-change-at-a-time"),
    ("CPU inference: torch and ONNX Runtime", "cpu-inference-torch-and-onnx-runtime"),
    ("The network's shape", "the-networks-shape"),
    ("Self-play on the pool and on Ray", "self-play-on-the-pool-and-on-ray"),
    ("`make train`", "make-train"),
])
def test_slug_matches_githubs_anchors(heading, anchor):
    assert slug(heading) == anchor


def test_a_repeated_heading_gets_a_numbered_anchor_and_fenced_lines_are_not_headings():
    text = "# Setup\n## Setup\n```sh\n# Setup inside a code block\n```\n"
    assert anchors(text) == {"setup", "setup-1"}


def test_a_link_to_a_missing_heading_is_found():
    text = "see [x](#nowhere) and [y](https://example.com/#a)\n```\n[z](#inside-code)\n```\n"
    assert links(text) == ["#nowhere", "https://example.com/#a"]
    assert "nowhere" not in anchors("# Somewhere\n")
