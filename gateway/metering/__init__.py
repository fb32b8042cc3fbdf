"""What the gateway measures about each call, and how it summarises it."""
