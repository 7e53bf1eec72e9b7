"""Settings and fixtures shared by every test."""

import pytest
import torch
from postgres_server import new_database, postgres_server

# One torch thread. The tests' models are small, so on an idle machine a second thread gains
# nothing (tests/models, tests/hed and tests/test_device.py: 34 s with one thread, 33 s with
# two). On a loaded machine two threads wait for each other: with a CPU burner and another test
# run beside them, the same GP tests took 41 s with two threads and 6 s with one. `make test`
# also sets OMP_NUM_THREADS=1 for the processes the tests start.
torch.set_num_threads(1)


def pytest_collection_modifyitems(items):
    """The tests marked ``heavy`` (tens of seconds on a loaded 2-core machine) run first, so
    that none of them is the last to run while the other test process has nothing left."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)


@pytest.fixture(scope="session")
def postgres_server_url():
    """A real PostgreSQL server on loopback for the whole session (started when first used)."""
    with postgres_server() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server_url):
    """A new empty database of that server."""
    return new_database(postgres_server_url)
