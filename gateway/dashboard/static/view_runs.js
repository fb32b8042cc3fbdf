// Evals: the latest runs with agreement and interval, and one run's questions.
import { api } from "./api.js";
import { facts, h, link, panel, table } from "./dom.js";
import { intervalChart } from "./interval_chart.js";
import * as fmt from "./format.js";

function agreementCell(summary) {
  if (!summary) return h("span", { class: "muted" }, "not scored");
  return h(
    "span",
    { class: "agreement" },
    intervalChart({
      point: summary.agreement,
      lower: summary.agreement_lower,
      upper: summary.agreement_upper,
      threshold: summary.threshold,
    }),
    h(
      "span",
      { class: "agreement-text" },
      `${fmt.pct(summary.agreement)} ` +
        `[${fmt.pct(summary.agreement_lower)}, ${fmt.pct(summary.agreement_upper)}]`,
    ),
  );
}

function samplesCell(run) {
  const done = (run.samples.done || 0) + (run.samples.rejected || 0);
  return `${fmt.num(done)} / ${fmt.num(run.n_samples)}`;
}

const RUN_COLUMNS = [
  { label: "run", cell: (r) => link(["evals", "runs", r.id], `#${r.id}`) },
  { label: "suite", cell: (r) => r.suite },
  { label: "status", cell: (r) => h("span", { class: `status status-${r.status}` }, r.status) },
  { label: "trigger", cell: (r) => r.trigger },
  { label: "model", cell: (r) => r.model },
  { label: "created", cell: (r) => fmt.time(r.created_at) },
  { label: "samples", cls: "num", cell: samplesCell },
  { label: "agreement [interval]", cell: (r) => agreementCell(r.summary) },
  { label: "threshold", cls: "num", cell: (r) => fmt.pct(r.summary?.threshold, 0) },
];

/** The latest runs visible to the key. */
export async function runsView() {
  const runs = await api("/api/evals/runs", { params: { limit: 50 } });
  return h(
    "div",
    { class: "evals" },
    h("h1", {}, "Eval runs"),
    panel(
      "Latest runs",
      runs.data.length
        ? table(RUN_COLUMNS, runs.data, { id: "runs-table" })
        : h("p", { class: "empty" }, "No eval runs visible to this key."),
    ),
  );
}

function verdict(value) {
  if (!value) return "–";
  return h("span", { class: `verdict verdict-${value}` }, value.replace("_", " "));
}

function questionColumns(runId, threshold) {
  return [
    {
      label: "question",
      cell: (q) => link(["evals", "runs", runId, "questions", q.question_key], q.question_key),
    },
    { label: "samples", cls: "num", cell: (q) => fmt.num(q.n_samples) },
    {
      label: "agreement [interval]",
      cell: (q) =>
        agreementCell({
          agreement: q.agreement,
          agreement_lower: q.agreement_lower,
          agreement_upper: q.agreement_upper,
          threshold,
        }),
    },
    { label: "modal answer", cell: (q) => q.modal_answer ?? "–" },
    { label: "answers", cls: "num", cell: (q) => fmt.num(q.n_answers) },
    { label: "critical", cell: (q) => (q.critical ? "yes" : "") },
    { label: "divergence", cell: (q) => verdict(q.divergence_verdict) },
    { label: "explanation", cell: (q) => q.divergence_explanation ?? "" },
    { label: "flags", cell: (q) => (q.flags ? q.flags.split(",").join(", ") : "") },
  ];
}

/** One run: its summary and per-question results. */
export async function runView(params, runId) {
  const run = await api(`/api/evals/runs/${encodeURIComponent(runId)}`);
  const sum = run.summary || {};
  return h(
    "div",
    { class: "run" },
    h("h1", {}, `Run #${run.id} · ${run.suite}`),
    h("p", {}, link(["evals"], "← all runs")),
    panel(
      "Summary",
      agreementCell(run.summary),
      facts([
        ["status", run.status],
        ["model", run.model],
        ["samples", samplesCell(run)],
        ["threshold", fmt.pct(sum.threshold, 0)],
        ["pairwise agreement", fmt.pct(sum.pairwise_agreement)],
        ["accuracy", fmt.pct(sum.accuracy)],
        ["parse failures", fmt.pct(sum.parse_failure_rate)],
        ["change vs baseline", sum.change_verdict ? `${sum.change_verdict} (${fmt.pct(sum.delta)})` : "–"],
        ["started", fmt.time(run.started_at)],
        ["finished", fmt.time(run.finished_at)],
        ["error", run.error],
      ]),
    ),
    panel("Questions", table(questionColumns(run.id, sum.threshold), run.questions, { id: "questions-table" })),
  );
}
