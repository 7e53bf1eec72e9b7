"""Search spaces of other libraries, both ways: the one home of every adapter.

* :mod:`bodi.adapters.codecs`: one host parameter <-> one bodi parameter (Optuna and Ax);
* :mod:`bodi.adapters.optuna`: Optuna distributions, both ways (``tpe`` baseline, Optuna sampler);
* :mod:`bodi.adapters.configspace`: ConfigSpace spaces (``smac`` baseline);
* :mod:`bodi.adapters.ax`: Ax parameters (Ax generation node).

The host libraries are imported inside the functions, so importing these modules needs none.
"""
