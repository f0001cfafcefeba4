"""PDF worksheets, keys and answer sheets: Typst source, compiled by the typst wheel on worker processes,
joined page after page."""
