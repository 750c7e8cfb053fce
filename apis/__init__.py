"""Domain packs: one business's system each (``apis/<business>/``), found through the ``chops.domains``
entry-point group. This package itself holds nothing of any one business."""
