// The page: sign-in with an API key, then a hash router over the views.
import { api, ApiError, forgetKey, storeKey, storedKey } from "./api.js";
import { h } from "./dom.js";
import { alertsView } from "./view_alerts.js";
import { callView } from "./view_call.js";
import { overviewView } from "./view_overview.js";
import { questionView } from "./view_question.js";
import { runsView, runView } from "./view_runs.js";

const ROUTES = [
  [/^$|^overview$/, "overview", overviewView],
  [/^evals$/, "evals", runsView],
  [/^evals\/runs\/(\d+)$/, "run", runView],
  [/^evals\/runs\/(\d+)\/questions\/([^/]+)$/, "question", questionView],
  [/^calls\/([^/]+)$/, "call", callView],
  [/^alerts$/, "alerts", alertsView],
];
const NAV_OF = {
  overview: "overview",
  evals: "evals",
  run: "evals",
  question: "evals",
  call: "overview",
  alerts: "alerts",
};

const view = document.getElementById("view");
let generation = 0;

function parseHash() {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?", 2);
  return { path: path.replace(/\/$/, ""), params: new URLSearchParams(query || "") };
}

function showError(name, hash, error) {
  const notVisible = error instanceof ApiError && error.status === 404;
  view.replaceChildren(
    h(
      "div",
      { class: "failure" },
      h("h1", {}, notVisible ? "Not found" : "Could not load this view"),
      h("p", { class: "error", id: "view-error" }, error instanceof Error ? error.message : String(error)),
    ),
  );
  view.dataset.view = name;
  view.dataset.route = hash;
  view.dataset.state = "error";
}

async function route() {
  if (!storedKey()) return;
  const mine = ++generation;
  const hash = window.location.hash;
  const { path, params } = parseHash();
  const match = ROUTES.map(([re, name, fn]) => [path.match(re), name, fn]).find(([m]) => m);
  if (!match) {
    showError("unknown", hash, new Error(`No such view: ${path}`));
    return;
  }
  const [found, name, render] = match;
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("active", a.dataset.nav === NAV_OF[name]);
  }
  view.dataset.view = name;
  view.dataset.route = "";
  view.dataset.state = "loading";
  try {
    const args = found.slice(1).map((part) => decodeURIComponent(part));
    const node = await render(params, ...args);
    if (mine !== generation) return; // a newer navigation won
    view.replaceChildren(node);
    view.dataset.route = hash;
    view.dataset.state = "ready";
  } catch (error) {
    if (mine !== generation) return;
    if (error instanceof ApiError && error.status === 401) return; // signed out instead
    showError(name, hash, error);
  }
}

function signedOut(message) {
  forgetKey();
  generation++;
  view.replaceChildren();
  view.dataset.state = "idle";
  document.getElementById("nav").hidden = true;
  document.getElementById("logout").hidden = true;
  document.getElementById("who").textContent = "";
  document.getElementById("login").hidden = false;
  document.getElementById("login-error").textContent = message || "";
  document.getElementById("api-key").focus();
}

async function signedIn() {
  const me = await api("/api/dashboard/me");
  document.getElementById("who").textContent = me.admin ? `${me.team} (admin: all teams)` : `team ${me.team}`;
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  document.getElementById("logout").hidden = false;
  await route();
}

function start() {
  document.getElementById("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = document.getElementById("api-key");
    storeKey(input.value.trim());
    input.value = "";
    try {
      await signedIn();
    } catch (error) {
      const refused = error instanceof ApiError && error.status === 401;
      signedOut(refused ? "That key was not accepted." : String(error.message || error));
    }
  });
  document.getElementById("logout").addEventListener("click", () => signedOut(""));
  window.addEventListener("plumbline:signed-out", () => signedOut("The key was not accepted; sign in again."));
  window.addEventListener("hashchange", route);
  if (storedKey()) {
    signedIn().catch((error) => signedOut(String(error.message || error)));
  } else {
    signedOut("");
  }
}

start();
