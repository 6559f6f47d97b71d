"""`ragdown_context`: the sections related to a prompt, through every gate, at most once per session."""
