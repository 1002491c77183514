"""The learning benchmark's pictures: a run's score against training minutes per ladder rung,
and several runs side by side; nothing is drawn without matplotlib."""

from __future__ import annotations

from pathlib import Path


def _score_interval(part: dict) -> tuple[float, float]:
    from alphagomoku.eval.elo import score_from_elo

    return score_from_elo(part["elo"]["lower"]), score_from_elo(part["elo"]["upper"])


def _curve(report: dict, rung: str, side: str | None = None):
    xs, ys, lo, hi = [], [], [], []
    for entry in report["snapshots"]:
        s = entry.get("results", {}).get(rung)
        if s is None:
            continue
        part = s if side is None else s[side]
        a, b = _score_interval(part)
        xs.append(entry["minutes"])
        ys.append(part["score"])
        # An all-won or all-lost match has its interval around the clamped score: keep the
        # bar on the measured point's side.
        lo.append(max(part["score"] - a, 0.0))
        hi.append(max(b - part["score"], 0.0))
    return xs, ys, [lo, hi]


def title(report: dict) -> str:
    c = report["config"]
    return (f"recipe {report['recipe']}: {c['model_preset']} network, {c['board_size']}x{c['board_size']} "
            f"({c['n_in_row']} in a row), {report['minutes']:g} min; network at "
            f"{report['ladder']['net_simulations']} simulations, {report['ladder']['games']} games a point")


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot_report(report: dict, out: Path) -> bool:
    """Score against training minutes, one line per rung (left: both colours, with the 95%
    interval; right: as black and as white). False, with nothing drawn, without matplotlib."""
    plt = _pyplot()
    if plt is None:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5), sharey=True)
    for i, rung in enumerate(report["ladder"]["rungs"]):
        colour = f"C{i}"
        xs, ys, err = _curve(report, rung)
        left.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=colour, label=rung)
        for side, style, label in (("as_black", "-", "as black"), ("as_white", "--", "as white")):
            xs, ys, _ = _curve(report, rung, side)
            right.plot(xs, ys, style, marker="o" if side == "as_black" else "s", color=colour,
                       label=f"{rung} {label}")
    for ax, heading in ((left, "score (95% interval)"), (right, "score by the network's colour")):
        ax.set_xlabel("training minutes")
        ax.set_ylim(-0.03, 1.03)
        ax.axhline(0.5, color="grey", lw=0.5)
        ax.set_title(heading)
        ax.legend(fontsize=8)
    left.set_ylabel("network's score")
    fig.suptitle(title(report), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return True


def plot_comparison(reports: list[dict], labels: list[str], out: Path) -> bool:
    """One column per rung; the top row the score of each run, the bottom row by colour."""
    plt = _pyplot()
    if plt is None:
        return False
    rungs: list[str] = []
    for r in reports:
        rungs += [x for x in r["ladder"]["rungs"] if x not in rungs]
    fig, axes = plt.subplots(2, len(rungs), figsize=(5 * len(rungs), 8), sharey=True, squeeze=False)
    for j, rung in enumerate(rungs):
        top, bottom = axes[0][j], axes[1][j]
        for i, (report, label) in enumerate(zip(reports, labels)):
            colour = f"C{i}"
            xs, ys, err = _curve(report, rung)
            if xs:
                top.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=colour, label=label)
            for side, style in (("as_black", "-"), ("as_white", "--")):
                xs, ys, _ = _curve(report, rung, side)
                if xs:
                    bottom.plot(xs, ys, style, marker="o" if side == "as_black" else "s",
                                color=colour, label=f"{label} {side.replace('_', ' ')}")
        top.set_title(f"vs {rung}")
        bottom.set_title(f"vs {rung}, by the network's colour")
        for ax in (top, bottom):
            ax.set_xlabel("training minutes")
            ax.set_ylim(-0.03, 1.03)
            ax.axhline(0.5, color="grey", lw=0.5)
            ax.legend(fontsize=7)
    axes[0][0].set_ylabel("network's score")
    axes[1][0].set_ylabel("network's score")
    fig.suptitle("\n".join(title(r) for r in reports), fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return True


def finish_plot(report: dict, run_dir: Path) -> None:
    png = run_dir / "learning.png"
    if plot_report(report, png):
        report["png"] = str(png)
        report.pop("png_note", None)
    else:
        report["png"] = None
        report["png_note"] = "matplotlib is not installed: no PNG (pip install matplotlib)"
