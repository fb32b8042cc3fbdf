"""Where a suite's alerts go: channel names from settings, or channels written in the suite."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ChannelKind = Literal["webhook", "slack", "alertmanager"]


class NotifyChannel(BaseModel):
    """A channel written in the suite: generic JSON webhook, Slack webhook or Alertmanager."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
    kind: ChannelKind
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)


# A string names a channel defined in settings (PLUMBLINE_WORKER__NOTIFY__CHANNELS).
NotifyTarget = str | NotifyChannel
