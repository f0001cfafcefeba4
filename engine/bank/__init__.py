"""Banks: the format (schema), reading a bank file (loader), finding banks and caching them (finding),
the items a bank holds and how each becomes a question (loaded), instructors' plugins, the starter
bank, and the image files next to a bank."""
