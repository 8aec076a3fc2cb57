"""The group coordinator: classic groups, their rebalances, and committed offsets."""
