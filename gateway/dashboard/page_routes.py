"""Routes: the page at /dashboard and its static files, with strict security headers."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import RedirectResponse

from gateway.auth.scopes import no_key_needed
from gateway.dashboard.assets import Asset, DashboardBundle

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        # Any innerHTML-like sink taking a string throws: data can only reach the DOM as text.
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    )
)
SECURITY_HEADERS = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()"),
)
# Files under the current build id never change; the page itself is revalidated every time.
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def _send(request: Request, asset: Asset, cache_control: str) -> Response:
    headers = dict(SECURITY_HEADERS)
    headers.update({"Cache-Control": cache_control, "ETag": asset.etag})
    if asset.etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(asset.body, media_type=asset.content_type, headers=headers)


def _not_found() -> Response:
    headers = dict(SECURITY_HEADERS) | {"Cache-Control": REVALIDATE}
    return Response("Not found\n", 404, media_type="text/plain; charset=utf-8", headers=headers)


def page_router(bundle: DashboardBundle) -> APIRouter:
    """GET /dashboard (the page) and /dashboard/static/{build}/{name} (its files)."""
    router = APIRouter(include_in_schema=False, dependencies=[Depends(no_key_needed)])

    @router.api_route("/dashboard", methods=["GET", "HEAD"])
    def page(request: Request) -> Response:
        return _send(request, bundle.index, REVALIDATE)

    @router.api_route("/dashboard/", methods=["GET", "HEAD"])
    def page_slash() -> Response:
        return RedirectResponse("/dashboard", status_code=308)

    @router.api_route("/dashboard/static/{build}/{name}", methods=["GET", "HEAD"])
    def asset(request: Request, build: str, name: str) -> Response:
        found = bundle.assets.get(name)
        if found is None:
            return _not_found()
        # An older build id (a page loaded before a deploy) still gets today's file, uncached.
        return _send(request, found, IMMUTABLE if build == bundle.build else REVALIDATE)

    @router.api_route("/dashboard/{rest:path}", methods=["GET", "HEAD"])
    def elsewhere(rest: str) -> Response:
        return _not_found()

    return router
