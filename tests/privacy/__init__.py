"""The "prove it" suite (issue 9): privacy-correctness, statistical and robustness tests."""
