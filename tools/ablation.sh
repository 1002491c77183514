#!/usr/bin/env bash
# What each part of a recipe is worth (docs/benchmarks.md): a base run of RECIPE and one run per
# change, each from scratch for MINUTES on this machine, one after another (nothing else should
# run meanwhile: the budget is wall time). Then each final network plays the base run's, GAMES
# games at 200 simulations a move from balanced openings, each opening with both colours.
#
# A machine's speed can drift over the hours this takes, so the base run that the others play
# is trained last; the same base run trained first (base-early) shows how much the drift
# matters, and one with another seed (base-seedN) how far two runs of the same recipe land apart.
#
#   bash tools/ablation.sh RECIPE NAME=KEY=VALUE[;KEY=VALUE] ...
#   e.g. bash tools/ablation.sh kata-hour no-pool=model_global_pooling=0 \
#            'no-aux=aux_reply_weight=0;short_value_weight=0'
#
# MINUTES (default 12), GAMES (default 200), SEED (default 1), OUT (default runs/ablation/RECIPE),
# PY (default .venv/bin/python, else python3) and BALANCE (the model whose even openings are
# played; default the shipped one) come from the environment. A run or match already done (its
# snapshot or JSON exists) is not done again, so an interrupted ablation picks up where it stopped;
# a run cut off before its snapshot is named, for you to delete and train again. The table goes
# to $OUT/table.md.
set -u
if [ $# -lt 1 ]; then
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
RECIPE=$1; shift
MINUTES=${MINUTES:-12}
GAMES=${GAMES:-200}
SEED=${SEED:-1}
OUT=${OUT:-runs/ablation/$RECIPE}
if [ -z "${PY:-}" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
BALANCE=${BALANCE:-alphagomoku/assets/cpu-hour.pt}
SNAPSHOT=snapshots/min_$(printf '%06.2f' "$MINUTES").pt
mkdir -p "$OUT"

train() {  # train NAME SEED [--set KEY=VALUE ...]
    local name=$1 seed=$2; shift 2
    if [ -f "$OUT/$name/$SNAPSHOT" ]; then
        echo "$name: trained already ($OUT/$name/$SNAPSHOT)"
        return 0
    fi
    if [ -e "$OUT/$name" ]; then
        echo "$name: $OUT/$name holds an unfinished run (no $SNAPSHOT); delete it to train again"
        return 1
    fi
    echo "$(date +%T) training $name ($*)"
    "$PY" scripts/benchmark.py learning --minutes "$MINUTES" --recipe "$RECIPE" --snapshots 1 \
        --rung random --games 2 --seed "$seed" --out "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1 \
        || { echo "$name: training failed, see $OUT/$name.log"; return 1; }
}

match() {  # match NAME: NAME's network against the base run's
    local name=$1
    [ -f "$OUT/$name.json" ] && return 0
    [ -f "$OUT/$name/$SNAPSHOT" ] || return 1
    echo "$(date +%T) match $name against base"
    "$PY" scripts/evaluate.py --player-a "vct:net:$OUT/$name/$SNAPSHOT:200" \
        --player-b "vct:net:$OUT/base/$SNAPSHOT:200" --games "$GAMES" --workers 2 --seed 7 \
        --balanced-openings "$BALANCE" --json --no-progress > "$OUT/$name.json.part" 2> "$OUT/$name.err" \
        && mv "$OUT/$name.json.part" "$OUT/$name.json" \
        || { echo "$name: match failed, see $OUT/$name.err"; return 1; }
}

names=(base-early "base-seed$((SEED + 1))")
train base-early "$SEED" || exit 1
train "base-seed$((SEED + 1))" $((SEED + 1))
for change in "$@"; do
    name=${change%%=*}
    sets=()
    IFS=';' read -ra pairs <<< "${change#*=}"
    for pair in "${pairs[@]}"; do sets+=(--set "$pair"); done
    train "$name" "$SEED" "${sets[@]}"
    names+=("$name")
done
train base "$SEED" || exit 1
for name in "${names[@]}"; do match "$name"; done

"$PY" - "$OUT" "$MINUTES" "$GAMES" "${names[@]}" <<'EOF'
import csv, json, sys
from pathlib import Path

out, minutes, games, names = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]


def epochs(name):  # how much training the run got in its minutes
    path = out / name / "metrics.csv"
    if not path.is_file():
        return "?"
    with path.open() as f:
        return str(sum(1 for _ in csv.DictReader(f)))


rows = [f"Each run {minutes} minutes from scratch; each network against the base run's (trained "
        f"last, {epochs('base')} epochs), {games} games at 200 simulations a move.", "",
        "| run | epochs | W-D-L | score | Elo (95%, by pairs) | as black | as white |",
        "|---|---|---|---|---|---|---|"]
for name in names:
    path = out / f"{name}.json"
    if not path.is_file():
        rows.append(f"| {name} | {epochs(name)} | not measured | | | | |")
        continue
    r = json.loads(path.read_text())
    e = r["elo_paired"]
    side = lambda s: f"{s['wins']}-{s['draws']}-{s['losses']}"
    rows.append(f"| {name} | {epochs(name)} | {r['wins']}-{r['draws']}-{r['losses']} | "
                f"{r['score']:.3f} | {round(e['elo']) or 0:+d} [{round(e['lower']) or 0:+d}, "
                f"{round(e['upper']) or 0:+d}] | {side(r['a_as_black'])} | {side(r['a_as_white'])} |")
(out / "table.md").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
