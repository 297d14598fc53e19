"""A second process, with an empty local cache dir, reuses what the first one put in Redis."""
from distributed_helpers import run_worker, worker_env


def test_second_process_reuses_pgo(redis_server, tmp_path):
    first = run_worker("compile", "10,20,30", "numpy", env=worker_env(tmp_path / "a", redis_server.url))
    assert first["ok"] and (first["frames_compiled"], first["recompiles"]) == (2, 1)
    assert first["remote"]["puts"] >= 1
    second = run_worker("compile", "40,50", "numpy", env=worker_env(tmp_path / "b", redis_server.url))
    assert second["ok"] and second["remote_pgo"]["hits"] >= 1
    assert (second["frames_compiled"], second["recompiles"]) == (1, 0)     # dynamic from the start
    assert list((tmp_path / "b" / "pgo").glob("*.txt"))                    # and kept a local copy


def test_without_remote_a_fresh_cache_relearns(redis_server, tmp_path):
    """The control: same programs, no FRAMETRACE_REMOTE_CACHE, so nothing is shared."""
    run_worker("compile", "10,20,30", "numpy", env=worker_env(tmp_path / "a"))
    second = run_worker("compile", "40,50", "numpy", env=worker_env(tmp_path / "b"))
    assert (second["frames_compiled"], second["recompiles"]) == (2, 1)


def test_second_process_reuses_kernels(redis_server, tmp_path):
    first = run_worker("compile", "10,20,30", "llvm", env=worker_env(tmp_path / "a", redis_server.url))
    assert first["ok"] and first["kernels"]["misses"] >= 1
    assert first["remote_kernel"]["puts"] >= 1, (
        "no kernel was put in the remote cache: frametrace/backends/llvm/jit.py does not call "
        "remote_cache.get/put yet (see the kernel-cache patch of issue 7)")
    second = run_worker("compile", "20,30", "llvm", env=worker_env(tmp_path / "b", redis_server.url))
    assert second["ok"] and second["remote_kernel"]["hits"] == 1
    assert second["kernels"] == {"hits": 1, "misses": 0, "corrupt": 0}, second
    assert list((tmp_path / "b" / "llvm").glob("*.o"))                     # copied to the local cache


def test_kernel_signed_with_another_key_is_recompiled(redis_server, tmp_path):
    first = run_worker("compile", "10,20", "llvm", env=worker_env(tmp_path / "a", redis_server.url))
    assert first["remote_kernel"]["puts"] >= 1, "jit.py does not call remote_cache.put yet (issue 7 patch)"
    env = worker_env(tmp_path / "b", redis_server.url, FRAMETRACE_CACHE_KEY="an-attacker-key-0000000000")
    second = run_worker("compile", "20,30", "llvm", env=env)
    assert second["ok"] and second["kernels"]["hits"] == 0
    assert second["remote_pgo"]["rejected"] >= 1 and "rejected entry" in second["stderr"]
    assert second["remote_kernel"]["hits"] == 0 and second["remote_kernel"]["rejected"] >= 1
