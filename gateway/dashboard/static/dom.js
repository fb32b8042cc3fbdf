// Building DOM nodes from data without ever parsing markup: text goes in as text nodes,
// attributes through setAttribute, so data cannot become elements or script.
const SVG_NS = "http://www.w3.org/2000/svg";

function build(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) {
      if (typeof value !== "function") throw new TypeError(`${name} must be a function`);
      node.addEventListener(name.slice(2), value);
    } else if (name === "href" && !String(value).startsWith("#/")) {
      throw new TypeError("links stay inside the page (#/...)");
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** An HTML element: h("td", {class: "num"}, "12"). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element: s("rect", {x: 0, width: 10}). */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** A link to a route of this page; route parts are URL-encoded. */
export function link(parts, ...children) {
  const route = "#/" + parts.map((p) => encodeURIComponent(String(p))).join("/");
  return h("a", { href: route }, ...children);
}

/** A table from column specs [{label, cell: (row) => node|text, cls}] and rows. */
export function table(columns, rows, attrs = {}) {
  const head = h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.cls }, c.label))));
  const body = h(
    "tbody",
    {},
    rows.map((row) => h("tr", {}, columns.map((c) => h("td", { class: c.cls }, c.cell(row))))),
  );
  return h("table", { class: "data", ...attrs }, head, body);
}

/** A titled section. */
export function panel(title, ...children) {
  return h("section", { class: "panel" }, h("h2", {}, title), ...children);
}

/** A definition list of [label, value] pairs. */
export function facts(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs.flatMap(([label, value]) => [h("dt", {}, label), h("dd", {}, value ?? "–")]),
  );
}
