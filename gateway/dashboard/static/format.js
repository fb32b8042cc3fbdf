// Number, time and token formatting shared by the views. Times are shown in UTC.

export function ms(value) {
  if (value === null || value === undefined) return "–";
  if (value >= 10000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  return `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`;
}

export function num(value, digits = 0) {
  if (value === null || value === undefined) return "–";
  return Number(value).toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

export function pct(value, digits = 1) {
  if (value === null || value === undefined) return "–";
  return `${(value * 100).toFixed(digits)}%`;
}

export function prob(value) {
  return value === null || value === undefined ? "p=?" : value.toFixed(2);
}

export function cost(value) {
  if (value === null || value === undefined) return "–";
  return `$${value < 0.01 ? value.toFixed(6) : value.toFixed(4)}`;
}

export function time(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toISOString().slice(0, 19).replace("T", " ") + "Z";
}

export function clock(date) {
  return date.toISOString().slice(11, 16);
}

/** A token with its whitespace made visible: spaces as ␣, newlines as ⏎. */
export function token(text) {
  if (text === null || text === undefined) return "∅";
  if (text === "") return "«empty»";
  return String(text).replaceAll(" ", "␣").replaceAll("\n", "⏎").replaceAll("\t", "⇥");
}

/** exp(logprob), or null. */
export function probability(logprob) {
  return typeof logprob === "number" && Number.isFinite(logprob) ? Math.exp(logprob) : null;
}
