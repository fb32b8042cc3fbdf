"""`python -m plumbline` runs the CLI."""

from plumbline.cli import main

main()
