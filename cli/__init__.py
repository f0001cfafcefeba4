"""The `quiz` command line."""
