"""`ragdown eval`: a folder's own questions scored against its index (docs/evaluation.md).

Above the engine (it searches as the tools do) and below serving (whose golden routes write the
web UI's marks through it).
"""
