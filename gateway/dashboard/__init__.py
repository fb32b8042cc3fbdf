"""The built-in on-call dashboard: the page at /dashboard, its files and its JSON endpoints."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.dashboard import api_routes
from gateway.dashboard.assets import load_bundle
from gateway.dashboard.page_routes import page_router


def dashboard_router() -> APIRouter:
    """One router for the page, its static files (read now) and /api/dashboard/*."""
    router = APIRouter()
    router.include_router(page_router(load_bundle()))
    router.include_router(api_routes.router)
    return router


__all__ = ["dashboard_router"]
