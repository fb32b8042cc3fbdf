// Spend against budget: one row per budget line, spent and held as bars on a track of the limit.
import { s } from "./dom.js";
import { frame, linear } from "./chart_axes.js";

const W = 720;
const ROW = 30;
const LEFT = 190;
const RIGHT = W - 250;

// Any spend at all draws at least a pixel, so a fresh budget does not look unused.
const width = (x, from, to) => (to > from ? Math.max(1, x(to) - x(from)) : 0).toFixed(2);

/**
 * budgets: the rows of /api/dashboard/budgets; format prints money.
 * A bar runs to spent (over the limit it is clipped and marked over); held follows it lighter;
 * the soft level is a tick on the track. Each row carries data-spent, data-held and data-limit.
 */
export function budgetChart({ id, title, budgets, format }) {
  const svg = frame(W, budgets.length * ROW + 8, { class: "chart budget-chart", "data-chart": id, "aria-label": title });
  budgets.forEach((b, i) => {
    const top = 4 + i * ROW;
    const x = linear(0, b.limit, LEFT, RIGHT);
    const spent = Math.min(b.spent ?? 0, b.limit);
    const held = Math.min((b.spent ?? 0) + (b.held ?? 0), b.limit);
    const over = (b.spent ?? 0) >= b.limit ? "over" : (b.spent ?? 0) >= b.soft_level ? "soft" : "";
    const shown = b.spent === null ? "spend unknown" : `${format(b.spent)} of ${format(b.limit)}`;
    const label = `${b.scope} ${b.name} · ${b.period}`;
    svg.append(
      s(
        "g",
        {
          class: `budget-row ${over}`.trim(),
          "data-key": `${b.scope}:${b.name}:${b.period}`,
          "data-spent": b.spent ?? "",
          "data-held": b.held ?? "",
          "data-limit": b.limit,
          "data-soft": b.soft_level,
        },
        s("text", { class: "bar-label", x: LEFT - 8, y: top + 18, "text-anchor": "end" }, label),
        s("rect", { class: "track", x: LEFT, y: top + 4, width: RIGHT - LEFT, height: ROW - 10 }),
        s("rect", { class: "bar", x: LEFT, y: top + 4, width: width(x, 0, spent), height: ROW - 10 }),
        s("rect", { class: "held", x: x(spent), y: top + 4, width: width(x, spent, held), height: ROW - 10 }),
        s("line", { class: "soft-mark", x1: x(b.soft_level), x2: x(b.soft_level), y1: top, y2: top + ROW - 2 }),
        s(
          "title",
          {},
          `${label} (${b.period_name}): ${shown}, held ${format(b.held)}, soft level ${format(b.soft_level)}`,
        ),
        s("text", { class: "bar-value", x: RIGHT + 6, y: top + 18 }, shown),
      ),
    );
  });
  return svg;
}
