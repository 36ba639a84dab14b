"""The `cuzk` command line."""
