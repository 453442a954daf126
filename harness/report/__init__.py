"""Reports rebuilt from MLflow alone: collect runs, render LaTeX tables and figures, compile a PDF."""
