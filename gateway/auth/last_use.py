"""LastUse: when each key was last used in this process, held in memory until the next flush."""

from __future__ import annotations

import time


class LastUse:
    """Per key id, the latest use since the last flush; at most `max_keys` are held.

    Noting a use is a dict write on the hot path; the database sees one UPDATE per key per
    flush (`gateway.auth.last_use_flusher`). Past `max_keys` distinct keys a new key's use is
    counted as dropped until the next flush makes room: memory stays bounded under a flood.
    """

    def __init__(self, max_keys: int) -> None:
        self.max_keys = max_keys
        self._pending: dict[int, float] = {}
        self.dropped = 0

    def note(self, key_id: int) -> None:
        """Remember that key `key_id` was used now (wall clock)."""
        if key_id <= 0:
            return  # a team's policies without a key (admin acting for it)
        pending = self._pending
        if key_id in pending or len(pending) < self.max_keys:
            pending[key_id] = time.time()
        else:
            self.dropped += 1

    def take(self) -> dict[int, float]:
        """Everything noted since the last take (Unix seconds by key id); empties the buffer."""
        taken, self._pending = self._pending, {}
        return taken

    def put_back(self, uses: dict[int, float]) -> None:
        """Return uses a failed flush could not write, keeping newer ones and the bound."""
        for key_id, used in uses.items():
            newer = self._pending.get(key_id)
            if newer is not None:
                self._pending[key_id] = max(newer, used)
            elif len(self._pending) < self.max_keys:
                self._pending[key_id] = used
            else:
                self.dropped += 1

    def __len__(self) -> int:
        return len(self._pending)
