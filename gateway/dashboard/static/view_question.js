// One question of a run: the divergent token's alternatives, and the samples grouped by answer.
import { api } from "./api.js";
import { barChart } from "./bar_chart.js";
import { facts, h, link, panel } from "./dom.js";
import * as fmt from "./format.js";

const UNPARSED = "(no answer)";

function divergencePanel(divergence) {
  if (!divergence) {
    const none = "All samples agree, or the backend sent no logprobs.";
    return panel("First divergent token", h("p", { class: "empty" }, none));
  }
  const bars = divergence.branches.map((b) => ({
    key: b.token,
    label: b.token,
    shown: fmt.token(b.token),
    value: b.probability,
    note: b.answers.map(([answer, n]) => `${answer ?? UNPARSED} ×${n}`).join(", "),
    cls: b.answers.length ? "taken" : "untaken",
  }));
  return panel(
    "First divergent token",
    h(
      "p",
      { class: "divergence-where" },
      `Token ${divergence.position} after `,
      h("code", { class: "prefix" }, divergence.prefix || "(start)"),
      ` — ${divergence.verdict.replace("_", " ")}, margin ${divergence.margin.toFixed(3)}`,
    ),
    barChart({
      id: "divergence",
      title: "top-k alternatives at the divergent token",
      bars,
      max: 1,
      format: fmt.prob,
    }),
    h("p", { class: "explanation" }, divergence.explanation),
  );
}

/** The sample's text with the prefix dimmed and the divergent token marked. */
function sampleText(text, divergence) {
  if (text === null || text === undefined) return h("span", { class: "muted" }, "(no text)");
  if (!divergence || !text.startsWith(divergence.prefix)) return text;
  const rest = text.slice(divergence.prefix.length);
  const taken = divergence.branches
    .map((b) => b.token)
    .filter((t) => t && t !== "<end>" && rest.startsWith(t))
    .sort((a, b) => b.length - a.length)[0];
  if (!taken) return [h("span", { class: "prefix" }, divergence.prefix), rest];
  return [
    h("span", { class: "prefix" }, divergence.prefix),
    h("mark", { class: "divergent", "data-token": taken }, taken),
    rest.slice(taken.length),
  ];
}

function sampleCard(sample, divergence) {
  return h(
    "li",
    { class: "sample", "data-sample": sample.id, "data-answer": sample.answer_key ?? "" },
    h(
      "div",
      { class: "sample-head" },
      `wording ${sample.paraphrase_index} · sample ${sample.sample_index}`,
      sample.call_id ? link(["calls", sample.call_id], "call →") : null,
    ),
    h("p", { class: "sample-text" }, sampleText(sample.text, divergence)),
    sample.parse_error ? h("p", { class: "error" }, sample.parse_error) : null,
    sample.error ? h("p", { class: "error" }, sample.error) : null,
  );
}

function groups(samples, modal) {
  const byAnswer = new Map();
  for (const sample of samples) {
    const key = sample.answer_key ?? UNPARSED;
    if (!byAnswer.has(key)) byAnswer.set(key, []);
    byAnswer.get(key).push(sample);
  }
  return [...byAnswer.entries()].sort(
    ([a, x], [b, y]) => (b === modal) - (a === modal) || y.length - x.length || a.localeCompare(b),
  );
}

function samplesPanel(data, result) {
  const answered = data.samples.filter((s) => s.status === "done" || s.status === "rejected");
  const columns = groups(answered, result?.modal_answer).map(([answer, list]) =>
    h(
      "section",
      { class: "answer-group", "data-answer": answer },
      h(
        "h3",
        {},
        h("span", { class: "answer" }, answer),
        ` ${list.length} (${fmt.pct(list.length / answered.length, 0)})`,
      ),
      h("ol", { class: "samples" }, list.map((s) => sampleCard(s, result?.divergence))),
    ),
  );
  return panel("Samples by answer", h("div", { class: "answer-groups" }, columns));
}

function withInterval(r) {
  return `${fmt.pct(r.agreement)} [${fmt.pct(r.agreement_lower)}, ${fmt.pct(r.agreement_upper)}]`;
}

/** A question of a run, from the run's results and the question's samples. */
export async function questionView(params, runId, key) {
  const [run, data] = await Promise.all([
    api(`/api/evals/runs/${encodeURIComponent(runId)}`),
    api(`/api/dashboard/runs/${encodeURIComponent(runId)}/questions/${encodeURIComponent(key)}/samples`),
  ]);
  const result = run.questions.find((q) => q.question_key === key);
  return h(
    "div",
    { class: "question" },
    h("h1", {}, `Question ${key} · run #${run.id} (${run.suite})`),
    h("p", {}, link(["evals", "runs", run.id], "← run")),
    panel(
      "Result",
      facts([
        ["agreement", result ? withInterval(result) : "not scored"],
        ["modal answer", result?.modal_answer],
        ["expected", result?.expected_answer],
        ["samples", result ? fmt.num(result.n_samples) : fmt.num(data.samples.length)],
        ["parse failures", result ? fmt.num(result.parse_failures) : null],
      ]),
      h("ol", { class: "wordings", start: 0 }, data.wordings.map((w) => h("li", {}, w))),
    ),
    divergencePanel(result?.divergence),
    samplesPanel(data, result),
  );
}
