"""rpc.pool with real forked workers: jobs, stops, crashes, the bounded queue."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import pytest

from chorus_tools.rpc.process import pool as pool_module
from chorus_tools.rpc.process.pool import Pool
from chorus_tools.tools.context import ToolContext
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.confine.sandbox import Workspace
from chorus_tools.tools.task import Task


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def tool_ctx(root):
    ws = Workspace(str(root))
    yield ToolContext(ws=ws)
    os.close(ws.root_fd)


async def started(ctx, size=2, max_pending=8):
    pool = Pool(ctx, size, max_pending)
    pool.start()
    return pool


def test_jobs_run_in_worker_processes_in_parallel(tool_ctx):
    async def go():
        pool = await started(tool_ctx)
        jobs = [pool.submit(Task("pool_targets:sleep", {"seconds": 0.3})) for _ in range(2)]
        outcomes = [await j.future for j in jobs]
        await pool.close()
        return outcomes
    outcomes = run(go())
    assert all(ok for ok, _, _ in outcomes)
    pids = {payload["pid"] for _, payload, _ in outcomes}
    assert len(pids) == 2 and os.getpid() not in pids


def test_a_crashing_worker_fails_only_its_job_and_is_replaced(tool_ctx):
    async def go():
        pool = await started(tool_ctx)
        slow = pool.submit(Task("pool_targets:sleep", {"seconds": 0.3}))
        crash = pool.submit(Task("pool_targets:segfault", {}))
        ok, err, _ = await crash.future
        after = [pool.submit(Task("pool_targets:echo", {"n": i})) for i in range(4)]
        results = [await j.future for j in [slow, *after]]
        await pool.close()
        return ok, err, results
    ok, err, results = run(go())
    assert not ok and err.code == "worker_crashed" and err.details["exit_code"] == -11
    assert all(r[0] for r in results)


def test_a_bug_in_a_tool_is_an_internal_error_and_the_worker_lives(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1)
        first = await pool.submit(Task("pool_targets:bug", {})).future
        second = await pool.submit(Task("pool_targets:echo", {})).future
        await pool.close()
        return first, second
    (ok, err, _), (ok2, payload, _) = run(go())
    assert not ok and err.code == "internal_error" and "ValueError" in err.message
    assert ok2


def test_stop_drops_a_queued_job_and_kills_a_running_one(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1)
        running = pool.submit(Task("pool_targets:sleep", {"seconds": 30}))
        queued = pool.submit(Task("pool_targets:echo", {}))
        await asyncio.sleep(0.2)
        victim_pid = running.worker.process.pid
        assert pool.stop(queued, ToolError("cancelled", "x"))
        assert pool.stop(running, ToolError("timeout", "y"))
        outcomes = [await running.future, await queued.future]
        fresh = await pool.submit(Task("pool_targets:echo", {})).future
        await pool.close()
        return outcomes, victim_pid, fresh
    outcomes, victim_pid, fresh = run(go())
    assert [o[1].code for o in outcomes] == ["timeout", "cancelled"]
    assert fresh[0] and fresh[1]["pid"] != victim_pid
    assert not os.path.exists(f"/proc/{victim_pid}/status") or "Z" in open(
        f"/proc/{victim_pid}/status").read().split("State:")[1][:5]


def test_a_running_unstoppable_job_is_left_to_finish(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1)
        job = pool.submit(Task("pool_targets:sleep", {"seconds": 0.2}), stoppable=False)
        await asyncio.sleep(0.05)
        stopped = pool.stop(job, ToolError("cancelled", "x"))
        outcome = await job.future
        await pool.close()
        return stopped, outcome
    stopped, (ok, payload, _) = run(go())
    assert stopped is False and ok and payload["slept"] == 0.2


def test_queue_beyond_max_pending_is_server_busy(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1, max_pending=2)
        jobs = [pool.submit(Task("pool_targets:sleep", {"seconds": 0.2})) for _ in range(3)]
        with pytest.raises(ToolError) as err:
            pool.submit(Task("pool_targets:echo", {}))
        await asyncio.gather(*(j.future for j in jobs))
        await pool.close()
        return err.value
    err = run(go())
    assert err.code == "server_busy" and err.details["limit"] == 2


def test_close_answers_what_is_left_and_leaves_no_process(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1)
        running = pool.submit(Task("pool_targets:sleep", {"seconds": 30}))
        queued = pool.submit(Task("pool_targets:echo", {}))
        await asyncio.sleep(0.1)
        pid = running.worker.process.pid
        await pool.close(timeout=0.2)
        return await running.future, await queued.future, pid
    running, queued, pid = run(go())
    assert not running[0] and not queued[0]
    assert not os.path.exists(f"/proc/{pid}")


def test_regression_close_kills_a_worker_still_running_without_its_grace(tool_ctx):
    """Regression: a drain past --shutdown-timeout answered its requests `timeout` only
    after close had waited its whole grace for the busy worker to leave on end of pipe
    (which it cannot do while it runs), so the server overran the bound by 2 s. A worker
    still running at close is past the drain's bound: it is killed at once; the grace is
    for idle workers. (A grace of an hour makes the old wait a hang, not a timing.)"""
    async def go():
        pool = await started(tool_ctx, size=2)
        running = pool.submit(Task("pool_targets:sleep", {"seconds": 3600}))
        await asyncio.sleep(0.1)
        pid = running.worker.process.pid
        await asyncio.wait_for(pool.close(timeout=3600), 30)
        return await running.future, pid
    (ok, err, _), pid = run(go())
    assert not ok and err.code == "timeout"
    assert not os.path.exists(f"/proc/{pid}")


def test_a_finished_background_process_is_reaped_not_left_a_zombie(tool_ctx):
    """Regression: the start-up sweep stayed a zombie until shutdown."""
    async def go():
        pool = await started(tool_ctx, size=1)
        pool.background("pool_targets:echo")
        pid = pool._background[0].pid
        for _ in range(200):
            if not pool._background:
                break
            await asyncio.sleep(0.01)
        left = list(pool._background)
        await pool.close()
        return pid, left
    pid, left = run(go())
    assert left == [] and not os.path.exists(f"/proc/{pid}")


def test_queued_read_only_jobs_go_out_batched_and_a_mutation_alone(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1)
        first = pool.submit(Task("pool_targets:sleep", {"seconds": 0.2}))
        reads = [pool.submit(Task("pool_targets:echo", {"n": i})) for i in range(3)]
        write = pool.submit(Task("pool_targets:echo", {"w": 1}), stoppable=False)
        await first.future
        batch = list(first.worker.jobs) if first.worker else []
        outcomes = [await j.future for j in [*reads, write]]
        return batch, reads, write, outcomes
    batch, reads, write, outcomes = run(go())
    assert batch == reads  # the three reads in one message, the write not with them
    assert all(ok for ok, _, _ in outcomes)


def test_stopping_the_running_job_of_a_batch_requeues_the_others(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1)
        first = pool.submit(Task("pool_targets:sleep", {"seconds": 0.2}))
        stuck = pool.submit(Task("pool_targets:sleep", {"seconds": 30}))
        behind = [pool.submit(Task("pool_targets:echo", {"n": i})) for i in range(2)]
        await first.future
        await asyncio.sleep(0.1)
        assert stuck.worker is not None and stuck.worker.jobs[0] is stuck
        pool.stop(stuck, ToolError("timeout", "x"), force=True)
        outcomes = [await j.future for j in behind]
        await pool.close()
        return await stuck.future, outcomes
    (ok, err, _), outcomes = run(go())
    assert not ok and err.code == "timeout"
    assert all(ok for ok, _, _ in outcomes)


def test_stopping_a_job_waiting_in_a_batch_answers_it_and_spares_the_worker(tool_ctx):
    async def go():
        pool = await started(tool_ctx, size=1)
        first = pool.submit(Task("pool_targets:sleep", {"seconds": 0.2}))
        running = pool.submit(Task("pool_targets:sleep", {"seconds": 0.3}))
        waiting = pool.submit(Task("pool_targets:echo", {}))
        await first.future
        worker_pid = running.worker.process.pid
        assert pool.stop(waiting, ToolError("cancelled", "x"))
        cancelled = await waiting.future
        done = await running.future
        await pool.close()
        return cancelled, done, worker_pid
    (ok, err, _), (ok2, payload, _), worker_pid = run(go())
    assert not ok and err.code == "cancelled"
    assert ok2 and payload["pid"] == worker_pid  # the worker was not killed


def test_parts_of_a_split_job_are_never_batched_onto_one_worker(tool_ctx):
    """Regression: a split listing's queued parts all went to the first free worker as
    one batch, so they ran one after another instead of side by side."""
    async def go():
        pool = await started(tool_ctx, size=1)
        first = pool.submit(Task("pool_targets:sleep", {"seconds": 0.2}), batchable=False)
        parts = [pool.submit(Task("pool_targets:echo", {"n": i}), batchable=False)
                 for i in range(3)]
        await first.future
        in_flight = list(parts[0].worker.jobs) if parts[0].worker else []
        outcomes = [await p.future for p in parts]
        await pool.close()
        return in_flight, parts, outcomes
    in_flight, parts, outcomes = run(go())
    assert in_flight == parts[:1]
    assert all(ok for ok, _, _ in outcomes)


def test_regression_max_pending_ignored_jobs_waiting_in_a_busy_workers_batch(tool_ctx):
    """Regression (issue 11): jobs handed to a busy worker behind its running one were not
    counted against max_pending, so 3 waited where 2 may."""
    async def go():
        pool = await started(tool_ctx, size=1, max_pending=2)
        first = pool.submit(Task("pool_targets:sleep", {"seconds": 0.2}))
        long = pool.submit(Task("pool_targets:sleep", {"seconds": 0.5}))
        behind = pool.submit(Task("pool_targets:echo", {}))
        await first.future
        assert list(long.worker.jobs) == [long, behind]  # one batch, the queue is empty
        second = pool.submit(Task("pool_targets:echo", {}))
        with pytest.raises(ToolError) as err:
            pool.submit(Task("pool_targets:echo", {}))
        outcomes = [await j.future for j in (long, behind, second)]
        await pool.close()
        return err.value, outcomes
    err, outcomes = run(go())
    assert err.code == "server_busy" and err.details["pending"] == 2
    assert all(ok for ok, _, _ in outcomes)


def test_a_poison_read_fails_after_exactly_two_worker_deaths(tool_ctx, root):
    log = root / "deaths.log"  # in the workspace: workers may write nowhere else (Landlock)

    async def go():
        pool = await started(tool_ctx, size=2)
        poison = pool.submit(Task("pool_targets:crash_logged", {"log": str(log)}))
        outcome = await poison.future
        after = [pool.submit(Task("pool_targets:echo", {"n": i})) for i in range(4)]
        results = [await j.future for j in after]
        workers = [w.process for w in pool._workers]
        await pool.close()
        return outcome, results, workers
    (ok, err, _), results, workers = run(go())
    assert not ok and err.code == "worker_crashed" and err.details["started"] is True
    deaths = log.read_text().split()
    assert len(deaths) == len(set(deaths)) == 2  # tried once more, on another worker
    assert len(workers) == 2 and not set(deaths) & {str(p.pid) for p in workers}
    assert all(ok for ok, _, _ in results)


def test_a_started_mutation_whose_worker_dies_is_never_run_again(tool_ctx, root):
    target = root / "changed.txt"  # in the workspace: workers may write nowhere else

    async def go():
        pool = await started(tool_ctx, size=1)
        job = pool.submit(Task("pool_targets:append_and_hang", {"path": str(target)}),
                          stoppable=False)
        behind = pool.submit(Task("pool_targets:echo", {}))
        # the change is made once its bytes are in the file (one append, not a buffer
        # flushed at some point after the file appears: polling exists() raced that)
        while not (target.exists() and target.read_bytes() == b"applied\n"):
            assert not job.future.done(), job.future.result()  # it failed before its change
            await asyncio.sleep(0.01)
        os.kill(job.worker.process.pid, signal.SIGKILL)
        outcome = await job.future
        echoed = await behind.future
        await pool.close()
        return outcome, echoed
    (ok, err, _), echoed = run(go())
    assert not ok and err.code == "worker_crashed" and err.details["started"] is True
    assert echoed[0]  # the job waiting behind it was not failed with it
    assert target.read_text() == "applied\n"  # applied once, never again


def test_a_batch_its_dead_worker_never_took_runs_elsewhere(tool_ctx):
    """A job written to a worker that died before reading it is not failed: it never
    started, whatever its kind."""
    async def go():
        pool = await started(tool_ctx, size=1)
        await pool.submit(Task("pool_targets:echo", {})).future  # the worker is idle, reading
        worker = pool._workers[0]
        os.kill(worker.process.pid, signal.SIGSTOP)  # frozen: it cannot take what comes
        while _state(worker.process.pid) != "T":  # (a stop lands when the worker runs)
            await asyncio.sleep(0.005)
        mutation = pool.submit(Task("pool_targets:echo", {"w": 1}), stoppable=False)
        assert list(worker.jobs) == [mutation]
        os.kill(worker.process.pid, signal.SIGKILL)
        outcome = await mutation.future
        await pool.close()
        return outcome, worker.process.pid
    (ok, payload, _), dead = run(go())
    assert ok and payload["w"] == 1 and payload["pid"] != dead


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rpartition(")")[2].split()[0]


def test_regression_undecodable_outcome_failed_every_later_read(tool_ctx):
    """Regression (issue 22): after an outcome the pool could not unpickle, the frame
    reader kept the bad frame, so every later outcome of that worker failed too. The bad
    one fails its own job (a bug, said as such); the worker goes on serving."""
    async def go():
        pool = await started(tool_ctx, size=1)
        bad = await pool.submit(Task("pool_targets:unpicklable_outcome", {})).future
        after = [await pool.submit(Task("pool_targets:echo", {"n": i})).future
                 for i in range(3)]
        await pool.close()
        return bad, after
    (ok, err, _), after = run(go())
    assert not ok and isinstance(err, ValueError) and "cannot be unpickled" in str(err)
    assert [payload["n"] for ok, payload, _ in after if ok] == [0, 1, 2]


def test_regression_workers_that_cannot_start_were_forked_again_without_end(
        tool_ctx, tmp_path, monkeypatch):
    """Regression: a worker that died at once was replaced at once, forever: a test run
    whose process could not start workers spun in fork (py-spy: _crashed → _replace →
    _spawn) and never answered. Now the forks slow down, the waiting job is answered
    (`worker_crashed`, not started), and the pool comes back once workers can start."""
    can_start = tmp_path / "can-start"

    def unborn_until_allowed(*args):
        if not can_start.exists():
            os._exit(3)
        pool_module.worker_main_real(*args)

    monkeypatch.setattr(pool_module, "worker_main_real", pool_module.worker_main,
                        raising=False)
    monkeypatch.setattr(pool_module, "worker_main", unborn_until_allowed)

    async def go():
        pool = await started(tool_ctx)
        failed = await asyncio.wait_for(pool.submit(Task("pool_targets:echo", {})).future, 30)
        forks = pool.restarts
        await asyncio.sleep(1.0)
        forks_in_a_second = pool.restarts - forks
        can_start.write_text("")
        served = await asyncio.wait_for(pool.submit(Task("pool_targets:echo", {})).future, 30)
        await pool.close()
        return failed, forks_in_a_second, served
    (ok, err, _), forks_in_a_second, served = run(go())
    assert not ok and err.code == "worker_crashed"
    assert err.details == {"exit_code": 3, "started": False}
    assert forks_in_a_second <= 4  # two workers, each waiting ≥ 0.8 s by now
    assert served[0] and served[1]["pid"] != os.getpid()


def test_regression_a_big_job_for_a_slow_worker_held_the_whole_loop(tool_ctx):
    """Regression: the pool wrote a job into its worker's pipe blocking, so an 8 MiB
    upload part held the server's loop (stdin unread, no other answer) until the worker
    had read all of it. Now the pipe is written as it has room, the loop free meanwhile."""
    async def go():
        pool = await started(tool_ctx, size=1)
        await pool.submit(Task("pool_targets:echo", {})).future
        pid = pool._workers[0].process.pid
        os.kill(pid, signal.SIGSTOP)  # a worker that takes nothing for now
        while _state(pid) != "T":
            await asyncio.sleep(0.005)
        resume = threading.Timer(5.0, os.kill, (pid, signal.SIGCONT))  # else it held forever
        resume.start()
        big = pool.submit(Task("pool_targets:echo", {"data": "x" * (8 << 20)}))
        back_while_stopped = _state(pid) == "T"
        resume.cancel()
        os.kill(pid, signal.SIGCONT)
        ok, payload, _ = await big.future
        await pool.close()
        return back_while_stopped, ok, payload
    back_while_stopped, ok, payload = run(go())
    assert back_while_stopped
    assert ok and payload["data"] == "x" * (8 << 20)
