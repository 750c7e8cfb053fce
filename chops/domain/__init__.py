"""The seam between the agent and a business's system: what every domain pack's operations return and
raise (``chops.domain.outcomes``). Knows nothing of models and nothing of any one business."""
