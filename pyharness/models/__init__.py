"""models: the backends behind one `Model` protocol (ollama, llamacpp, openai, scripted), the embedded packs, retries
and streaming timeouts; see `resolve` for how a spec becomes a model.

Imports only `pyharness.errors`: models know nothing of actions, the harness or the workspace.
"""
