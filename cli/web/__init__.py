"""The web front end of `quiz serve`."""
