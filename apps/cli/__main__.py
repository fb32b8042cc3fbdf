"""`python -m apps.cli` runs the `plumbline` command line (how child processes start it)."""

from apps.cli import main

main()
