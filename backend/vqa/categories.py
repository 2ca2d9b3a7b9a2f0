"""MMComposition's 13 categories in its three dimensions (paper appendix A.3, counts from the project
website in ``../shared/data/mmcomposition/category_counts.json``), with the paper's short names (Table 2)."""

from __future__ import annotations

DIMENSIONS: dict[str, tuple[str, ...]] = {
    "Perception": (
        "Attribute Perception",
        "Object Perception",
        "Counting Perception",
        "Relation Perception",
        "Difference Spotting",
        "Text Rendering",
        "Visual Similarity",
    ),
    "Reasoning": (
        "Attribute Reasoning",
        "Object Reasoning",
        "Counting Reasoning",
        "Relation Reasoning",
        "Object Interaction",
    ),
    "Probing": ("VL Composition Probing",),
}

CATEGORIES: tuple[str, ...] = tuple(c for cats in DIMENSIONS.values() for c in cats)
DIMENSION_OF: dict[str, str] = {c: dim for dim, cats in DIMENSIONS.items() for c in cats}

SHORT_NAMES: dict[str, str] = {
    "Attribute Perception": "Attr-P",
    "Object Perception": "Obj-P",
    "Counting Perception": "Count-P",
    "Relation Perception": "Rel-P",
    "Difference Spotting": "Diff-S",
    "Text Rendering": "TR",
    "Visual Similarity": "Visual-Sim",
    "Attribute Reasoning": "Attr-R",
    "Object Reasoning": "Obj-R",
    "Counting Reasoning": "Count-R",
    "Relation Reasoning": "Rel-R",
    "Object Interaction": "Obj-Interact",
    "VL Composition Probing": "Prob",
}

DEFINITIONS: dict[str, str] = {
    "Attribute Perception": "Attributes or properties of objects that a person sees within a blink.",
    "Object Perception": "Identifying or recognising objects in the image.",
    "Counting Perception": "Counting the objects or elements in the image.",
    "Relation Perception": "Understanding the relationships between objects in the image.",
    "Difference Spotting": "Differences or changes between objects or scenes in two similar images.",
    "Text Rendering": "Reading or interpreting text in the image.",
    "Visual Similarity": "Comparing similarities between objects or elements across several images.",
    "Attribute Reasoning": "Reasoning about specific attributes or properties of objects.",
    "Object Reasoning": "Reasoning about objects in the image.",
    "Counting Reasoning": "Reasoning about the number of objects or elements.",
    "Relation Reasoning": "Reasoning about the spatial arrangement or positioning of objects.",
    "Object Interaction": "Understanding interactions among several objects.",
    "VL Composition Probing": "Finding all the compositional descriptions that are true of the image.",
}


def resolve_category(name: str) -> str | None:
    """The canonical category for a full or short name, any case; None if unknown.

    >>> resolve_category("rel-r"), resolve_category("object perception"), resolve_category("Prob")
    ('Relation Reasoning', 'Object Perception', 'VL Composition Probing')
    """
    wanted = (name or "").strip().lower()
    for full, short in SHORT_NAMES.items():
        if wanted in (full.lower(), short.lower()):
            return full
    return None
