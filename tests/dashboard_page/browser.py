"""Headless Debian Chromium driven by Playwright, and a page object for the dashboard."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "dashboard"
VIEWPORT = {"width": 1400, "height": 1000}


def launch(playwright: Playwright) -> Browser:
    """Debian's chromium; a missing binary says how to install it."""
    if not Path(CHROMIUM).exists():
        raise AssertionError(f"{CHROMIUM} is missing: run `make chromium` (Debian's package)")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@dataclass
class DashboardPage:
    """One browser tab on the dashboard, recording console errors and uncaught exceptions."""

    page: Page
    base_url: str
    problems: list[str] = field(default_factory=list)
    # Console errors a test expects (regexes), e.g. the 404 of a call another team owns.
    expected: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"pageerror: {error}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")

    def unexpected_problems(self) -> list[str]:
        """Console errors and page errors no test asked for."""
        return [p for p in self.problems if not any(re.search(e, p) for e in self.expected)]

    def sign_in(self, key: str) -> None:
        """Open the page, submit the key, wait for the first view."""
        self.page.goto(f"{self.base_url}/dashboard")
        self.page.fill("#api-key", key)
        self.page.click("#login-form button[type=submit]")
        self.page.wait_for_selector("#nav:not([hidden])")
        self.page.wait_for_selector("main#view[data-state=ready], main#view[data-state=error]")

    def open(self, route: str, state: str = "ready") -> None:
        """Go to `#/route` and wait until that view has rendered (or failed, if `state`)."""
        target = f"#/{route}"
        self.page.evaluate("(h) => { window.location.hash = h; }", target)
        self.page.wait_for_function(
            """([route, state]) => {
                const v = document.getElementById("view");
                return v.dataset.route === route && (v.dataset.state === state);
            }""",
            arg=[target, state],
            timeout=15_000,
        )

    def attr_values(self, selector: str, name: str) -> list[str]:
        """The attribute `name` of every element matching `selector`."""
        return list(
            self.page.eval_on_selector_all(
                selector, "(els, n) => els.map((e) => e.getAttribute(n))", name
            )
        )

    def texts(self, selector: str) -> list[str]:
        """The text content of every element matching `selector` (SVG text too)."""
        return [t.strip() for t in self.page.locator(selector).all_text_contents()]

    def session_storage(self) -> dict[str, str]:
        """This tab's sessionStorage."""
        return dict(json.loads(self.page.evaluate("JSON.stringify({...sessionStorage})")))

    def screenshot(self, name: str) -> Path:
        """Save a full-page PNG as artifacts/dashboard/<name>.png."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path
