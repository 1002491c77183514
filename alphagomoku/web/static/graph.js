// Black's win rate over the game: one point per position analysed, the current move marked,
// the moves that lost most as red dots. A click reports the move nearest to it.

export class WinRateGraph {
  constructor(canvas, onPick) {
    this.canvas = canvas;
    this.data = { rates: new Map(), plies: 0, cursor: 0, mistakes: [] };
    canvas.addEventListener("click", (e) => {
      const r = canvas.getBoundingClientRect();
      const share = (e.clientX - r.left) / r.width;
      onPick(Math.max(0, Math.min(this.data.plies, Math.round(share * this.data.plies))));
    });
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(() => this.draw()).observe(canvas);
  }

  update(data) {
    Object.assign(this.data, data);
    this.canvas.dataset.points = String(this.data.rates.size);
    this.draw();
  }

  draw() {
    const c = this.canvas, w = c.clientWidth, h = c.clientHeight;
    if (!w) return;
    const ratio = window.devicePixelRatio || 1;
    c.width = Math.round(w * ratio); c.height = Math.round(h * ratio);
    const g = c.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const plies = Math.max(1, this.data.plies);
    const X = (p) => 4 + (w - 8) * p / plies;
    const Y = (r) => 4 + (h - 8) * (1 - r);
    g.strokeStyle = "#ddd"; g.lineWidth = 1;
    g.beginPath(); g.moveTo(0, Y(0.5)); g.lineTo(w, Y(0.5)); g.stroke();
    g.strokeStyle = "#2f6f4f";
    g.beginPath(); g.moveTo(X(this.data.cursor), 0); g.lineTo(X(this.data.cursor), h); g.stroke();
    const points = [...this.data.rates.entries()].sort((a, b) => a[0] - b[0]);
    if (points.length) {
      g.fillStyle = "rgba(20, 20, 20, 0.12)";
      g.beginPath(); g.moveTo(X(points[0][0]), Y(0));
      for (const [p, r] of points) g.lineTo(X(p), Y(r));
      g.lineTo(X(points[points.length - 1][0]), Y(0)); g.closePath(); g.fill();
      g.strokeStyle = "#151515"; g.lineWidth = 1.5;
      g.beginPath();
      points.forEach(([p, r], i) => (i ? g.lineTo(X(p), Y(r)) : g.moveTo(X(p), Y(r))));
      g.stroke();
    }
    g.fillStyle = "#b3261e";
    for (const m of this.data.mistakes) {
      const r = this.data.rates.get(m.ply);
      if (r === undefined) continue;
      g.beginPath(); g.arc(X(m.ply), Y(r), 4, 0, 7); g.fill();
    }
    g.fillStyle = "#6b665c"; g.font = "11px system-ui, sans-serif";
    g.fillText("black win %", 6, 13);
  }
}
