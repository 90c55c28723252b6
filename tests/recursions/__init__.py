"""Tests of ``recursions``, one folder per subpackage."""
