// Alerts: state, rule, summary; firing ones can be acknowledged from here.
import { api, ApiError } from "./api.js";
import { h, link, panel, table } from "./dom.js";
import * as fmt from "./format.js";

const FILTERS = ["open", "firing", "acknowledged", "resolved", "all"];

function ackButton(alert, rerender) {
  if (alert.status !== "firing") return "";
  const message = h("span", { class: "error" });
  const button = h(
    "button",
    {
      type: "button",
      class: "ack",
      "data-alert": alert.id,
      onclick: async () => {
        button.disabled = true;
        try {
          await api(`/api/alerts/${alert.id}/ack`, { method: "POST", body: {} });
          await rerender();
        } catch (error) {
          button.disabled = false;
          message.textContent = error instanceof ApiError ? error.message : String(error);
        }
      },
    },
    "Acknowledge",
  );
  return h("span", {}, button, message);
}

function runLink(id) {
  return id ? link(["evals", "runs", id], `#${id}`) : "–";
}

function columns(rerender) {
  return [
    { label: "id", cls: "num", cell: (a) => String(a.id) },
    { label: "state", cell: (a) => h("span", { class: `state state-${a.status}` }, a.status) },
    { label: "team / suite", cell: (a) => `${a.team} / ${a.suite}` },
    { label: "rule", cell: (a) => a.rule },
    { label: "summary", cell: (a) => a.summary },
    { label: "since", cell: (a) => fmt.time(a.started_at) },
    { label: "fired by", cell: (a) => runLink(a.fired_run_id) },
    { label: "latest run", cell: (a) => runLink(a.last_run_id) },
    {
      label: "acknowledged",
      cell: (a) => (a.acknowledged_by ? `${a.acknowledged_by} at ${fmt.time(a.acknowledged_at)}` : ""),
    },
    { label: "resolved", cell: (a) => fmt.time(a.resolved_at) },
    { label: "", cell: (a) => ackButton(a, rerender) },
  ];
}

/** The alert list; params: status (open by default). */
export async function alertsView(params) {
  const status = FILTERS.includes(params.get("status")) ? params.get("status") : "open";
  const holder = h("div", { class: "alert-list" });
  const load = async () => {
    const alerts = await api("/api/alerts", { params: { status, limit: 200 } });
    holder.replaceChildren(
      alerts.data.length
        ? table(columns(load), alerts.data, { id: "alerts-table" })
        : h("p", { class: "empty" }, `No ${status === "all" ? "" : `${status} `}alerts visible to this key.`),
    );
  };
  await load();
  const filter = h(
    "select",
    {
      id: "alert-status",
      "aria-label": "alert state",
      onchange: (e) => {
        window.location.hash = `#/alerts?status=${e.target.value}`;
      },
    },
    FILTERS.map((f) => h("option", { value: f, selected: f === status }, f)),
  );
  return h(
    "div",
    { class: "alerts" },
    h("h1", {}, "Alerts"),
    h("div", { class: "controls" }, filter),
    panel("Alerts", holder),
  );
}
