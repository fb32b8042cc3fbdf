"""The compiled logprob scanner; optional, so an install without a C compiler still succeeds."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "plumbline._logprob_scan",
            ["plumbline/_logprob_scan.c"],
            # Without a compiler the build is skipped and logprob_scan reads with the reference.
            optional=True,
        )
    ]
)
