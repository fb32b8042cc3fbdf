"""The applications on top of the kit: the `plumbline` command line and the demo."""
