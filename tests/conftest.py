import pytest

import frametrace as ft


@pytest.fixture(autouse=True)
def clean_state(tmp_path):
    ft.reset()
    with ft.config.patch(cache_dir=str(tmp_path / "cache"), pgo=False):
        yield
    ft.set_stance("default")
    ft.reset()
