"""The broker as a sans-IO state machine: typed requests in, typed responses out."""
