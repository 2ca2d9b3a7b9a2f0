"""``compstudio serve``: serving engines (vLLM, SGLang) started, registered and stopped by CompStudio."""
