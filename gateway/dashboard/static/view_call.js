// One call: phase timeline, tokens coloured by probability, metadata.
import { api } from "./api.js";
import { tokenStrip, tokensOf } from "./call_tokens.js";
import { facts, h, panel } from "./dom.js";
import { timelineChart } from "./timeline_chart.js";
import * as fmt from "./format.js";

function timeline(c) {
  const q = c.engine_queue_ms;
  const p = c.engine_prefill_ms;
  const rows = [
    {
      label: "engine",
      segments: [
        { phase: "queue", start: 0, ms: q },
        { phase: "prefill", start: q ?? 0, ms: p },
        { phase: "decode", start: (q ?? 0) + (p ?? 0), ms: c.engine_decode_ms },
      ],
    },
    {
      label: "client",
      segments: [
        { phase: "ttft", start: 0, ms: c.ttft_ms },
        { phase: "client-decode", start: c.ttft_ms, ms: c.decode_ms },
      ],
    },
    { label: "end to end", segments: [{ phase: "e2e", start: 0, ms: c.e2e_ms }] },
  ];
  return timelineChart({ id: "call-timeline", title: "call phases", rows });
}

function metadata(c) {
  const dash = (v) => v ?? "–";
  const tokens = `${fmt.num(c.prompt_tokens)} prompt (${fmt.num(c.cached_tokens)} cached)`;
  const sampling = [
    `temperature ${dash(c.temperature)}`,
    `top_p ${dash(c.top_p)}`,
    `seed ${dash(c.seed)}`,
    `max_tokens ${dash(c.max_tokens)}`,
    `n ${c.n ?? 1}`,
  ];
  const itl = [c.itl_mean_ms, c.itl_p50_ms, c.itl_p95_ms, c.itl_max_ms].map(fmt.ms);
  const engine = [c.engine_queue_ms, c.engine_prefill_ms, c.engine_decode_ms, c.engine_itl_ms].map(fmt.ms);
  const logprobs = c.logprob_mode
    ? `${c.logprob_mode}: mean ${c.logprob_mean?.toFixed(3)}, ` +
      `min margin ${c.logprob_min_margin?.toFixed(3)}, near ties ${c.near_ties}`
    : c.logprobs_note ?? null;
  return facts([
    ["call id", c.id],
    ["request id", c.request_id],
    ["trace id", c.trace_id ? `${c.trace_id} (gateway span ${c.span_id})` : null],
    ["created", fmt.time(c.created_at)],
    ["feature", c.feature],
    ["end user", c.end_user],
    ["source", c.source],
    ["endpoint", c.endpoint],
    ["model", c.model],
    ["backend", c.backend],
    ["response id", c.response_id ? `${c.response_id} (model ${c.response_model ?? "?"})` : null],
    ["stream", c.stream ? "yes" : "no"],
    ["status", c.cancelled ? `${c.status_code} (cancelled)` : String(c.status_code)],
    ["error", c.error_message ? `${c.error_type}: ${c.error_message}` : null],
    ["finish reason", c.finish_reason],
    ["tokens", `${tokens} → ${fmt.num(c.completion_tokens)} output`],
    ["cost", `${fmt.cost(c.input_cost)} in + ${fmt.cost(c.output_cost)} out`],
    ["sampling", sampling.join(", ")],
    ["ITL", `mean ${itl[0]}, p50 ${itl[1]}, p95 ${itl[2]}, max ${itl[3]}`],
    ["engine", `queue ${engine[0]}, prefill ${engine[1]}, decode ${engine[2]}, ITL ${engine[3]}`],
    ["gateway overhead", fmt.ms(c.overhead_ms)],
    ["decode floor", fmt.ms(c.decode_floor_ms)],
    ["logprobs", logprobs],
  ]);
}

function tokensPanel(c) {
  const lp = c.logprobs;
  const none = c.logprobs_note ?? "No logprobs were recorded for this call.";
  if (!lp) return panel("Tokens", h("p", { class: "empty" }, none));
  const indices = Object.keys(lp.choices).sort((a, b) => a - b);
  const body = h("div", { class: "choice-body" });
  const show = (index) => {
    body.replaceChildren(tokenStrip(tokensOf(lp.format, lp.choices[index])));
    buttons.forEach((b) => b.classList.toggle("active", b.dataset.choice === index));
  };
  const buttons = indices.map((i) =>
    h("button", { type: "button", "data-choice": i, onclick: () => show(i) }, `choice ${i}`),
  );
  show(indices[0]);
  return panel(
    `Tokens by probability (${lp.format}, top ${lp.top_k})`,
    indices.length > 1 ? h("div", { class: "controls" }, buttons) : null,
    body,
  );
}

/** The call view. */
export async function callView(params, callId) {
  const c = await api(`/api/calls/${encodeURIComponent(callId)}`);
  return h(
    "div",
    { class: "call" },
    h("h1", {}, `Call ${c.id}`),
    panel("Timeline", timeline(c)),
    tokensPanel(c),
    panel("Metadata", metadata(c)),
  );
}
