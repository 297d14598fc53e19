"""What users read about a run: `ft.report()`, `python -m frametrace --report`, `%%frametrace`.

records  what each compile leaves behind (frame, time, graph size, break and recompile reasons)
watch    compiles in flight: their total time, and a `compile` log line when one runs long
sampler  where the main thread spends its time: compiling, compiled code, or eager Python
summary  the report itself, as a dict and as text
ipython  the `%%frametrace` cell magic (IPython imported only when the extension is loaded)
"""
