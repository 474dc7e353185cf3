"""Shared setup for the scripted model server tests."""

import os

# Before anything imports litellm: otherwise the import fetches the cost map over the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
