"""ViLPAct multiple-choice planning: questions, STRIPS checks, baselines, metrics, validation, results."""
