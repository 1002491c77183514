"""Named training recipes: JSON files of settings under ``configs/`` at the repository root.

``--recipe NAME`` means ``--config configs/NAME.json``. A recipe may set any TrainConfig field;
the ones it leaves out keep the code's defaults, and explicit flags override both.
"""

from __future__ import annotations

import re
from pathlib import Path

import alphagomoku
from alphagomoku.train.config import ConfigError

RECIPE_DIR = Path(alphagomoku.__file__).resolve().parent.parent / "configs"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def available_recipes(directory: Path = RECIPE_DIR) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.json"))


def recipe_path(name: str, directory: Path = RECIPE_DIR) -> Path:
    """The file of recipe ``name``; ConfigError names the recipes there are when it is unknown."""
    known = available_recipes(directory)
    listing = ", ".join(known) if known else f"none: {directory} holds no .json files"
    if not isinstance(name, str) or not _NAME.match(name) or name.endswith(".json"):
        raise ConfigError(f"--recipe: {name!r} is not a recipe name (the recipes are: {listing}; "
                          "for a file of your own use --config FILE)")
    path = directory / f"{name}.json"
    if not path.is_file():
        raise ConfigError(f"--recipe: no recipe named {name!r} in {directory} (the recipes are: "
                          f"{listing})")
    return path
