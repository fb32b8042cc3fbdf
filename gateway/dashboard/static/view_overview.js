// Overview: traffic and latency over time, usage by feature, model and call kind, budgets, the latest calls.
import { api } from "./api.js";
import { barChart } from "./bar_chart.js";
import { budgetChart } from "./budget_chart.js";
import { h, link, panel, table } from "./dom.js";
import { legend, lineChart } from "./line_chart.js";
import * as fmt from "./format.js";

const RANGES = { "15m": 900e3, "1h": 3600e3, "6h": 6 * 3600e3, "24h": 24 * 3600e3 };
const SOURCES = ["all", "product", "eval", "live_sample"];

function controls(range, source) {
  const go = (r, src) => {
    window.location.hash = `#/overview?range=${r}&source=${src}`;
  };
  const rangeSelect = h(
    "select",
    { id: "range", "aria-label": "time range", onchange: (e) => go(e.target.value, source) },
    Object.keys(RANGES).map((r) => h("option", { value: r, selected: r === range }, `last ${r}`)),
  );
  const sourceSelect = h(
    "select",
    { id: "source", "aria-label": "call source", onchange: (e) => go(range, e.target.value) },
    SOURCES.map((src) =>
      h("option", { value: src, selected: src === source }, src === "all" ? "all sources" : src),
    ),
  );
  return h("div", { class: "controls" }, rangeSelect, sourceSelect);
}

function charts(traffic) {
  const times = traffic.data.map((p) => new Date(p.t));
  const pick = (key) => traffic.data.map((p) => p[key]);
  const perStep = `per ${traffic.step_s >= 60 ? `${traffic.step_s / 60} min` : `${traffic.step_s} s`}`;
  const specs = [
    ["traffic", `Calls and errors ${perStep}`, [["calls", "calls"], ["errors", "errors"]], (v) => fmt.num(v)],
    ["ttft", "Time to first token", [["ttft_p50_ms", "p50"], ["ttft_p95_ms", "p95"]], fmt.ms],
    ["e2e", "End-to-end time", [["e2e_p50_ms", "p50"], ["e2e_p95_ms", "p95"]], fmt.ms],
  ];
  return specs.map(([id, title, keys, format]) => {
    const series = keys.map(([key, name]) => ({ key, name, values: pick(key) }));
    return h(
      "figure",
      { class: "chart-box" },
      h("figcaption", {}, title),
      legend(series),
      lineChart({ id, title, times, series, format }),
    );
  });
}

// A call kind is shown as its route; usage rolled up before kinds were kept apart has none.
const kind = (endpoint) => endpoint ?? "(any kind)";

const USAGE_COLUMNS = [
  { label: "feature", cell: (r) => r.feature ?? "(none)" },
  { label: "model", cell: (r) => r.model ?? "–" },
  { label: "call kind", cell: (r) => kind(r.endpoint) },
  { label: "calls", cls: "num", cell: (r) => fmt.num(r.calls) },
  { label: "error rate", cls: "num", cell: (r) => fmt.pct(r.error_rate) },
  { label: "prompt tok", cls: "num", cell: (r) => fmt.num(r.prompt_tokens) },
  { label: "output tok", cls: "num", cell: (r) => fmt.num(r.completion_tokens) },
  { label: "cost", cls: "num", cell: (r) => fmt.cost(r.input_cost + r.output_cost) },
  { label: "TTFT p50", cls: "num", cell: (r) => fmt.ms(r.ttft_p50_ms) },
  { label: "TTFT p95", cls: "num", cell: (r) => fmt.ms(r.ttft_p95_ms) },
  { label: "ITL p95", cls: "num", cell: (r) => fmt.ms(r.itl_p95_ms) },
  { label: "e2e p95", cls: "num", cell: (r) => fmt.ms(r.e2e_p95_ms) },
];

export const CALL_COLUMNS = [
  { label: "time", cell: (c) => link(["calls", c.id], fmt.time(c.created_at)) },
  { label: "feature", cell: (c) => c.feature ?? "(none)" },
  { label: "source", cell: (c) => c.source },
  { label: "model", cell: (c) => c.model ?? "–" },
  { label: "kind", cell: (c) => kind(c.endpoint) },
  { label: "status", cell: (c) => h("span", { class: c.status_code >= 400 ? "bad" : "ok" }, c.status_code) },
  { label: "TTFT", cls: "num", cell: (c) => fmt.ms(c.ttft_ms) },
  { label: "e2e", cls: "num", cell: (c) => fmt.ms(c.e2e_ms) },
  { label: "tokens", cls: "num", cell: (c) => `${fmt.num(c.prompt_tokens)} → ${fmt.num(c.completion_tokens)}` },
  { label: "near ties", cls: "num", cell: (c) => fmt.num(c.near_ties) },
];

function costByKind(kinds) {
  const bars = kinds.map((k) => ({ label: kind(k.endpoint), value: k.cost }));
  const max = Math.max(...kinds.map((k) => k.cost), 0) || 1;
  return barChart({ id: "cost-by-kind", title: "Cost per call kind", bars, max, format: fmt.cost });
}

const BUDGET_COLUMNS = [
  { label: "budget", cell: (b) => `${b.scope} ${b.name}` },
  { label: "period", cell: (b) => `${b.period} ${b.period_name}` },
  { label: "spent", cls: "num", cell: (b) => fmt.cost(b.spent) },
  { label: "held", cls: "num", cell: (b) => fmt.cost(b.held) },
  { label: "soft level", cls: "num", cell: (b) => fmt.cost(b.soft_level) },
  { label: "limit", cls: "num", cell: (b) => fmt.cost(b.limit) },
  { label: "resets", cell: (b) => fmt.time(b.resets_at) },
];

// Spend is read live from the budget store; a blank spend means the store could not be read.
function budgetsPanel(report) {
  if (!report.budgets.length) {
    return h(
      "p",
      { class: "empty", id: "budgets-empty" },
      `No budgets set for team ${report.team}: plumbline teams set ${report.team} --budget-month N`,
    );
  }
  return h(
    "div",
    { id: "budgets" },
    budgetChart({ id: "budgets", title: `Spend against budget, team ${report.team}`, budgets: report.budgets, format: fmt.cost }),
    table(BUDGET_COLUMNS, report.budgets, { id: "budgets-table" }),
  );
}

/** The overview view; params: range (1h, 6h, 24h) and source. */
export async function overviewView(params) {
  const range = RANGES[params.get("range")] ? params.get("range") : "1h";
  const source = SOURCES.includes(params.get("source")) ? params.get("source") : "all";
  const until = new Date();
  const since = new Date(until.getTime() - RANGES[range]);
  const span = { since: since.toISOString(), until: until.toISOString() };
  const only = source === "all" ? undefined : source;
  const [traffic, usage, calls, budgets] = await Promise.all([
    api("/api/dashboard/traffic", { params: { ...span, source: only } }),
    api("/api/usage", { params: span }),
    api("/api/calls", { params: { limit: 20, source: only } }),
    api("/api/dashboard/budgets"),
  ]);
  return h(
    "div",
    { class: "overview" },
    h("h1", {}, "Overview"),
    controls(range, source),
    panel("Traffic and latency", h("div", { class: "chart-grid" }, charts(traffic))),
    panel(
      `Usage by feature, model and call kind (last ${range}, all sources)`,
      usage.data.length
        ? table(USAGE_COLUMNS, usage.data, { id: "usage-table" })
        : h("p", { class: "empty" }, "No calls in this window."),
    ),
    panel(
      `Cost per call kind (last ${range}, all sources)`,
      usage.by_endpoint.length
        ? costByKind(usage.by_endpoint)
        : h("p", { class: "empty" }, "No calls in this window."),
    ),
    panel(`Budgets (team ${budgets.team}, this UTC day and month)`, budgetsPanel(budgets)),
    panel(
      "Latest calls",
      calls.data.length
        ? table(CALL_COLUMNS, calls.data, { id: "calls-table" })
        : h("p", { class: "empty" }, "No calls yet."),
    ),
  );
}
