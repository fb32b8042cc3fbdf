// A small agreement plot: the interval as a bar, the point estimate as a dot, the threshold.
import { s } from "./dom.js";
import { frame, linear } from "./chart_axes.js";
import { pct } from "./format.js";

const W = 180;
const H = 20;

/** Agreement point in [lower, upper], with the suite's threshold marked when known. */
export function intervalChart({ point, lower, upper, threshold }) {
  const x = linear(0, 1, 4, W - 4);
  const below = typeof threshold === "number" && typeof upper === "number" && upper < threshold;
  const svg = frame(W, H, {
    class: `chart interval${below ? " below" : ""}`,
    "data-chart": "agreement",
    "data-point": point,
    "data-lower": lower,
    "data-upper": upper,
    "aria-label": `agreement ${pct(point)} (${pct(lower)} to ${pct(upper)})`,
  });
  svg.append(s("line", { class: "axis-line", x1: x(0), x2: x(1), y1: H / 2, y2: H / 2 }));
  if (typeof lower === "number" && typeof upper === "number") {
    const width = Math.max(1, x(upper) - x(lower));
    svg.append(s("rect", { class: "range", x: x(lower), y: H / 2 - 4, width, height: 8 }));
  }
  if (typeof threshold === "number") {
    svg.append(s("line", { class: "threshold", x1: x(threshold), x2: x(threshold), y1: 2, y2: H - 2 }));
  }
  if (typeof point === "number") {
    svg.append(s("circle", { class: "estimate", cx: x(point), cy: H / 2, r: 3.5 }));
  }
  svg.append(s("title", {}, `agreement ${pct(point)}, interval ${pct(lower)}–${pct(upper)}`));
  return svg;
}
