// Horizontal bar chart of probabilities (or any values in 0..max), one labelled bar per row.
import { s } from "./dom.js";
import { frame, linear } from "./chart_axes.js";

const W = 720;
const ROW = 26;
const LEFT = 150;
const RIGHT = W - 230;

/**
 * bars: [{label, value, note, cls, key}]; value null draws an empty row ("p=?").
 * Each bar carries data-label (the raw label) and data-value.
 */
export function barChart({ id, title, bars, max = 1, format }) {
  const height = bars.length * ROW + 8;
  const x = linear(0, max, LEFT, RIGHT);
  const svg = frame(W, height, { class: "chart bar-chart", "data-chart": id, "aria-label": title });
  bars.forEach((bar, i) => {
    const top = 4 + i * ROW;
    const value = typeof bar.value === "number" ? bar.value : null;
    const width = value === null ? 0 : Math.max(1, x(Math.min(value, max)) - LEFT);
    svg.append(
      s(
        "g",
        { class: `bar-row ${bar.cls || ""}`.trim(), "data-key": bar.key ?? bar.label },
        s("text", { class: "bar-label", x: LEFT - 8, y: top + 16, "text-anchor": "end" }, bar.shown ?? bar.label),
        s("rect", { class: "track", x: LEFT, y: top + 3, width: RIGHT - LEFT, height: ROW - 8 }),
        s(
          "rect",
          {
            class: "bar",
            x: LEFT,
            y: top + 3,
            width: width.toFixed(2),
            height: ROW - 8,
            "data-label": bar.label,
            "data-value": value === null ? "" : value,
          },
          s("title", {}, `${bar.label}: ${format(value)}${bar.note ? ` (${bar.note})` : ""}`),
        ),
        s("text", { class: "bar-value", x: RIGHT + 6, y: top + 16 }, format(value)),
        bar.note ? s("text", { class: "bar-note", x: RIGHT + 46, y: top + 16 }, bar.note) : null,
      ),
    );
  });
  return svg;
}
