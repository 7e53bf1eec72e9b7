"""Short BODi runs shared by the optimizer tests."""

import bodi

# smaller acquisition settings than the defaults keep the suite short
FAST = {"dictionary_size": 32, "num_restarts": 4, "raw_samples": 256}


def run_bodi(problem, asks: int, **options) -> bodi.Study:
    """BODi (``FAST`` settings and ``options``) after ``asks`` sequential suggestions on
    ``problem``."""
    return drive(bodi.create_study(bodi.BODi(problem.space, **options, **FAST)), problem, asks)


def drive(opt, problem, asks: int):
    """``opt`` after ``asks`` sequential suggestions, each told its value on ``problem``."""
    for _ in range(asks):
        x = opt.ask()
        opt.tell(x, float(problem(x)))
    return opt
