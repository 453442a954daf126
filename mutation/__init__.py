"""Mutation testing of the scoring path: a declared list of small plausible bugs (mutants.yaml), each
applied alone to a copy of the package, and the tests that cover its module run against it (run.py).
A mutant the tests do not fail "survives": either the tests miss a wrong number, or the change is
equivalent (listed with its reason in docs/mutation.md). Not part of `make test`: `make mutants`."""
