// Time-series line chart: one path per series, a marker (with its value) at every data point.
import { s } from "./dom.js";
import { frame, linear, niceMax, timeAxis, valueAxis } from "./chart_axes.js";
import { clock } from "./format.js";

const W = 640;
const H = 220;
const BOX = { left: 56, right: W - 12, top: 12, bottom: H - 28 };

function pathOf(values, x, y) {
  let d = "";
  let drawing = false;
  values.forEach((v, i) => {
    if (v === null || v === undefined) {
      drawing = false;
      return;
    }
    d += `${drawing ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    drawing = true;
  });
  return d;
}

/**
 * A line chart. series: [{name, key, values: [number|null]}], times: [Date], format: value label.
 * Markers are drawn where a value is present and non-zero; each carries data-v and data-t.
 */
export function lineChart({ id, title, times, series, format }) {
  const all = series.flatMap((one) => one.values).filter((v) => typeof v === "number");
  const max = niceMax(Math.max(0, ...all));
  const x = linear(0, Math.max(1, times.length - 1), BOX.left, BOX.right);
  const y = linear(0, max, BOX.bottom, BOX.top);
  const svg = frame(W, H, { class: "chart line-chart", "data-chart": id, "aria-label": title });
  svg.append(valueAxis(BOX, max, format), timeAxis(BOX, times, x, clock));
  for (const one of series) {
    const group = s("g", { class: `series series-${one.key}`, "data-series": one.key });
    group.append(s("path", { class: "line", d: pathOf(one.values, x, y) }));
    one.values.forEach((v, i) => {
      if (typeof v !== "number" || v === 0) return;
      const at = times[i].toISOString();
      group.append(
        s(
          "circle",
          { class: "point", cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2.5, "data-v": v, "data-t": at },
          s("title", {}, `${at.slice(11, 16)}Z ${one.name}: ${format(v)}`),
        ),
      );
    });
    svg.append(group);
  }
  if (all.every((v) => v === 0)) {
    svg.append(s("text", { class: "empty", x: W / 2, y: H / 2, "text-anchor": "middle" }, "no calls"));
  }
  return svg;
}

/** The legend of a chart's series. */
export function legend(series) {
  const items = series.map((one, i) =>
    s("g", { transform: `translate(${i * 140},0)` }, [
      s("rect", { class: `swatch series-${one.key}`, width: 12, height: 12, y: 0 }),
      s("text", { x: 18, y: 10 }, one.name),
    ]),
  );
  return frame(series.length * 140, 16, { class: "legend", "aria-hidden": "true" }, items);
}
