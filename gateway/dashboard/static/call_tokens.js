// A call's sampled tokens coloured by probability, and the top-k alternatives of one token.
import { barChart } from "./bar_chart.js";
import { h } from "./dom.js";
import * as fmt from "./format.js";

/** Tokens of one choice as [{token, logprob, top: [{token, logprob}]}], chat or completion. */
export function tokensOf(format, choice) {
  if (!choice) return [];
  if (format === "chat") {
    return (Array.isArray(choice) ? choice : []).map((t) => ({
      token: t.token,
      logprob: t.logprob,
      top: (t.top_logprobs || []).map((a) => ({ token: a.token, logprob: a.logprob })),
    }));
  }
  const tokens = choice.tokens || [];
  return tokens.map((token, i) => ({
    token,
    logprob: (choice.token_logprobs || [])[i],
    top: Object.entries((choice.top_logprobs || [])[i] || {}).map(([t, lp]) => ({ token: t, logprob: lp })),
  }));
}

/** Probability bucket 0..9 (the CSS colour class p0..p9). */
export function bucketOf(p) {
  return p === null ? "none" : Math.min(9, Math.floor(p * 10));
}

function alternativesChart(step, index) {
  const chosen = step.token;
  const top = step.top.length ? step.top : [{ token: chosen, logprob: step.logprob }];
  const bars = [...top]
    .sort((a, b) => b.logprob - a.logprob)
    .map((a) => ({
      key: a.token,
      label: a.token,
      shown: fmt.token(a.token),
      value: fmt.probability(a.logprob),
      cls: a.token === chosen ? "taken" : "untaken",
      note: a.token === chosen ? "sampled" : "",
    }));
  return h(
    "div",
    { class: "alternatives", "data-index": index },
    h(
      "p",
      {},
      `Token ${index}: `,
      h("code", {}, fmt.token(chosen)),
      ` p=${fmt.prob(fmt.probability(step.logprob))}`,
    ),
    barChart({
      id: "alternatives",
      title: `top-k alternatives at token ${index}`,
      bars,
      max: 1,
      format: fmt.prob,
    }),
  );
}

/** The coloured token strip and, below it, the alternatives of the selected token. */
export function tokenStrip(steps) {
  const detail = h("div", { class: "token-detail" });
  const spans = [];
  const select = (i) => {
    spans.forEach((span, j) => span.classList.toggle("selected", i === j));
    detail.replaceChildren(alternativesChart(steps[i], i));
  };
  steps.forEach((step, i) => {
    const p = fmt.probability(step.logprob);
    spans.push(
      h(
        "span",
        {
          class: `tok p${bucketOf(p)}`,
          tabindex: 0,
          role: "button",
          "data-i": i,
          "data-p": p === null ? "" : p.toFixed(6),
          title: `${fmt.token(step.token)}  p=${fmt.prob(p)}  logprob=${step.logprob}`,
          onclick: () => select(i),
          onkeydown: (e) => (e.key === "Enter" || e.key === " ") && select(i),
        },
        step.token,
      ),
    );
  });
  if (steps.length) {
    // Start on the least likely token: where a different sample would most likely have gone.
    let lowest = 0;
    steps.forEach((step, i) => {
      if (step.logprob < steps[lowest].logprob) lowest = i;
    });
    select(lowest);
  }
  const scale = h(
    "div",
    { class: "prob-legend" },
    "p: ",
    [...Array(10).keys()].map((b) => h("span", { class: `tok p${b}` }, `${b / 10}`)),
  );
  return h("div", { class: "token-view" }, scale, h("p", { class: "tokens", id: "tokens" }, spans), detail);
}
