"""`create_app(config)`: the simulator as an ASGI app, all state built here or in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from simulator.admin import build_admin_router
from simulator.audio_routes import build_audio_router
from simulator.batch_chat_route import build_batch_chat_router
from simulator.chat_route import build_chat_router, create_chat_completion
from simulator.completion_route import build_completion_router, create_completion
from simulator.config import SimulatorConfig
from simulator.generation_shortcut import GenerationShortcut
from simulator.headers_middleware import ResponseHeadersMiddleware
from simulator.info_routes import build_info_router
from simulator.messages_route import build_messages_router
from simulator.operator_routes import build_operator_router
from simulator.pooling_routes import build_pooling_router
from simulator.responses_route import build_responses_router
from simulator.state import SimulatorState
from simulator.tokenize_routes import build_tokenize_router
from simulator.tokens_routes import build_tokens_router


def create_app(config: SimulatorConfig | None = None) -> FastAPI:
    """A simulated vLLM 0.32 OpenAI-compatible server; the engine clock runs in the lifespan."""
    state = SimulatorState(config or SimulatorConfig())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.engine.start()
        try:
            yield
        finally:
            await state.engine.stop()

    app = FastAPI(title="vLLM API (simulated)", lifespan=lifespan)
    app.state.sim = state
    # vLLM registers routes by the runner's tasks: a route of the other runner is a plain 404.
    routers = [build_info_router(), build_tokenize_router(), build_admin_router()]
    if state.config.runner == "generate":
        routers += [build_chat_router(), build_completion_router()]
        routers += [build_responses_router(), build_messages_router(), build_tokens_router()]
        routers.append(build_batch_chat_router())
    else:
        routers.append(build_pooling_router(state.config.convert))
    if state.config.dev_mode:
        routers.append(build_operator_router())
    if state.config.transcription:
        routers.append(build_audio_router())
    for router in routers:
        app.include_router(router)
    if state.config.runner == "generate":
        app.add_middleware(
            GenerationShortcut,
            routes={
                "/v1/chat/completions": create_chat_completion,
                "/v1/completions": create_completion,
            },
        )
    app.add_middleware(
        ResponseHeadersMiddleware, request_id_headers=state.config.enable_request_id_headers
    )
    return app
