"""The nn.Module each method trains (a method's declaration, harness/methods/, names it by its registered
name, harness.registry.MODELS): the encoder and the method's heads, its training stages, and what the
evaluation encodes with. Importing this package registers every built-in model (torch)."""

from harness.networks import ensemble, glove, nli, pipeline, supcl_seq, tasks  # noqa: F401
