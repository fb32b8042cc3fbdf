"""The compiled logprob scanner; optional, so an install without a C compiler still succeeds."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "plumbline._logprob_scan",
            ["plumbline/_logprob_scan.c", "plumbline/_logprob_keys.c", "plumbline/_logprob_pack.c"],
            depends=["plumbline/_logprob_scan.h"],
            # Without a compiler the build is skipped and logprob_scan reads with the reference.
            optional=True,
        )
    ]
)
