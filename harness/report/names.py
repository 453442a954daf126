"""How tasks are named in tables, figures and default column headers."""

SHORT_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}  # as SimCSE's tables print them
