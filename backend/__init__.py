"""CompStudio's library: everything except the Gradio UI.

Importing ``backend`` is light: it never imports torch or transformers (heavy libraries load lazily,
inside the functions that need them).
"""
