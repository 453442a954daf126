"""The nn.Module each method trains (a method's declaration, harness/methods/, names its class here):
the encoder and the method's heads, its training stages, and what the evaluation encodes with."""
