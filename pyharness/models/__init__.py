"""Model backends behind one protocol; see `resolve` for how a spec becomes a model."""
