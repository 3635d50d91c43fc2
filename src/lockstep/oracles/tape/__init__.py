"""The tape oracle: the calls a target makes to its collaborators, in order."""
