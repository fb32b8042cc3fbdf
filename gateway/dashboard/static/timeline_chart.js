// A call's phases as bars on one millisecond axis: engine (queue, prefill, decode) and client.
import { s } from "./dom.js";
import { frame, linear, niceMax } from "./chart_axes.js";
import { ms } from "./format.js";

const W = 640;
const ROW = 30;
const LEFT = 90;
const RIGHT = W - 16;

/** rows: [{label, segments: [{phase, start, ms}]}]; segments without a duration are skipped. */
export function timelineChart({ id, title, rows }) {
  const ends = rows.flatMap((r) => r.segments.map((seg) => (seg.start || 0) + (seg.ms || 0)));
  const max = niceMax(Math.max(0, ...ends));
  const x = linear(0, max, LEFT, RIGHT);
  const height = rows.length * ROW + 30;
  const svg = frame(W, height, { class: "chart timeline", "data-chart": id, "aria-label": title });
  for (const t of [0, max / 4, max / 2, (3 * max) / 4, max]) {
    const anchor = t === 0 ? "start" : t === max ? "end" : "middle";
    svg.append(
      s("line", { class: "grid", x1: x(t), x2: x(t), y1: 4, y2: height - 22 }),
      s("text", { class: "tick", x: x(t), y: height - 8, "text-anchor": anchor }, ms(t)),
    );
  }
  rows.forEach((row, i) => {
    const top = 6 + i * ROW;
    svg.append(s("text", { class: "row-label", x: LEFT - 8, y: top + 15, "text-anchor": "end" }, row.label));
    for (const seg of row.segments) {
      if (typeof seg.ms !== "number" || typeof seg.start !== "number") continue;
      const width = Math.max(0.5, x(seg.start + seg.ms) - x(seg.start));
      svg.append(
        s(
          "rect",
          {
            class: `phase phase-${seg.phase}`,
            x: x(seg.start).toFixed(2),
            y: top,
            width: width.toFixed(2),
            height: ROW - 10,
            "data-phase": seg.phase,
            "data-ms": seg.ms,
            "data-start": seg.start,
          },
          s("title", {}, `${seg.phase}: ${ms(seg.ms)} (from ${ms(seg.start)})`),
        ),
      );
      if (width > 60) {
        svg.append(
          s("text", { class: "phase-label", x: x(seg.start) + 4, y: top + 14 }, `${seg.phase} ${ms(seg.ms)}`),
        );
      }
    }
  });
  return svg;
}
