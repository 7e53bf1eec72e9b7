"""Other libraries: BODi inside them (the Optuna sampler, the Ax generation node) and their
search spaces both ways (:mod:`bodi.integrations.spaces`). The host libraries are imported
inside the functions, so importing these modules needs none of them."""
