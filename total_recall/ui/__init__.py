"""`total-recall ui`: a read-only local web viewer over the index (sessions, search, memory, usage), and
the HTML exports built from the same templates. Reads only through the index packages' APIs."""
