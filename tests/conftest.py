import pytest

import frametrace as ft


@pytest.fixture(autouse=True)
def clean_state(tmp_path):
    ft.reset()
    # a backend bug or a malformed graph fails the test instead of falling back to NumPy
    with ft.config.patch(cache_dir=str(tmp_path / "cache"), pgo=False, strict_backend=True, verify_ir=True):
        yield
    ft.set_stance("default")
    ft.reset()
