"""Search spaces of other libraries, both ways: the one home of every adapter.

* :mod:`bodi.integrations.spaces.codecs`: one host parameter <-> one bodi parameter (Optuna
  and Ax);
* :mod:`bodi.integrations.spaces.optuna`: Optuna distributions, both ways (``tpe`` baseline,
  Optuna sampler);
* :mod:`bodi.integrations.spaces.configspace`: ConfigSpace spaces (``smac`` baseline);
* :mod:`bodi.integrations.spaces.ax`: Ax parameters (Ax generation node).

The host libraries are imported inside the functions, so importing these modules needs none.
"""
