"""Confinement of commands and tool servers: profiles, bubblewrap and Landlock backends, the egress proxy."""
