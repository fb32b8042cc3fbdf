"""Call kinds: one adapter per API the proxy serves (chat, completions), all of one shape."""
