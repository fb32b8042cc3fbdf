// Scales, axes and frames shared by the SVG charts.
import { s } from "./dom.js";

/** A linear map from [d0, d1] to [r0, r1]. */
export function linear(d0, d1, r0, r1) {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

/** A round number >= value (1 to 8 times a power of ten), for an axis maximum. */
export function niceMax(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (value <= step * power) return step * power;
  }
  return 10 * power;
}

/** An <svg> sized by viewBox that scales to its container. */
export function frame(width, height, attrs, ...children) {
  return s(
    "svg",
    {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: "img",
      preserveAspectRatio: "xMinYMin meet",
      ...attrs,
    },
    ...children,
  );
}

/** Horizontal grid lines and labels for a value axis from 0 to max. */
export function valueAxis(box, max, label) {
  const y = linear(0, max, box.bottom, box.top);
  const ticks = [0, max / 2, max];
  return s(
    "g",
    { class: "axis axis-y" },
    ticks.map((t) => [
      s("line", { class: "grid", x1: box.left, x2: box.right, y1: y(t), y2: y(t) }),
      s("text", { x: box.left - 6, y: y(t) + 4, "text-anchor": "end", "data-tick": t }, label(t)),
    ]),
  );
}

/** Tick labels along the bottom at evenly spaced indices of `times`. */
export function timeAxis(box, times, x, label) {
  const count = Math.min(6, times.length);
  const picks = new Set();
  for (let i = 0; i < count; i++) {
    picks.add(Math.round((i * (times.length - 1)) / Math.max(1, count - 1)));
  }
  return s(
    "g",
    { class: "axis axis-x" },
    [...picks].map((i) => {
      const anchor = i === 0 ? "start" : i === times.length - 1 ? "end" : "middle";
      return s("text", { x: x(i), y: box.bottom + 16, "text-anchor": anchor }, label(times[i]));
    }),
  );
}
