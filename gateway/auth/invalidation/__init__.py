"""Key invalidations: what a committed key or team change announces, and who hears it."""
