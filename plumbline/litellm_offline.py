"""Keep litellm from fetching catalogs (its price map, header lists) from the internet."""

from __future__ import annotations

import os

# litellm downloads these from GitHub when first imported or used unless told not to; the
# gateway makes no outbound call that its configuration did not name, so they are forced on
# (an operator's "False" too) and litellm uses the copies bundled with it.
OFFLINE_SWITCHES = {
    "LITELLM_OFFLINE_MODE": "true",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
}


def keep_litellm_offline() -> None:
    """Set litellm's offline switches in this process (and so in its children)."""
    os.environ.update(OFFLINE_SWITCHES)
