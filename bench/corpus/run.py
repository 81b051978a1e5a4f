"""Run a corpus's shards on this process or on a Dask cluster, and merge the partial counts.

Each shard is decoded, decided and counted by :func:`process_shard` alone, wherever it runs; the
merge (:meth:`bench.corpus.aggregate.Partial.merge`) is order-free, so the aggregate of a Dask run is
the local one, bit for bit. A worker loads the predicates once (from the same folder path, which on
a real cluster must be visible to every worker, like the corpus paths) and the time limit per
decision applies only to a local run (a Dask worker runs tasks in threads, where no signal can
interrupt a decision).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from bench.corpus.aggregate import Partial, count_records, load_predicates
from bench.corpus.sources import Shard, records
from bench.errors import UnusableInput

__all__ = ["Job", "client", "process_shard", "run_dask", "run_local", "run_on_client"]


class Job:
    """What every shard is processed with: the predicates (by folder) and the safety cap."""

    __slots__ = ("entry_points", "folder", "only", "safety_cap")

    def __init__(self, folder: str, entry_points: bool, only: tuple[str, ...], safety_cap: int) -> None:
        self.folder, self.entry_points, self.only, self.safety_cap = folder, entry_points, only, safety_cap

    def __reduce__(self) -> tuple[type[Job], tuple[str, bool, tuple[str, ...], int]]:
        return Job, (self.folder, self.entry_points, self.only, self.safety_cap)


def process_shard(shard: Shard, job: Job) -> Partial:
    """Decode, decide and count one shard (on this process or a worker)."""
    preds = load_predicates(job.folder, job.entry_points, job.only)
    return count_records(records(shard), preds, job.safety_cap)


def run_local(shards: list[Shard], job: Job, done: Callable[[Shard], None] | None = None) -> Partial:
    """Every shard in order on this process."""
    total = Partial(predicates=[p.name for p in load_predicates(job.folder, job.entry_points, job.only)])
    for shard in shards:
        total.merge(process_shard(shard, job))
        if done is not None:
            done(shard)
    return total


@contextlib.contextmanager
def client(address: str, workers: int) -> Iterator[Any]:
    """A Dask client on `address`, or on a local cluster of `workers` processes for ``local``."""
    from distributed import Client, LocalCluster

    for name in ("distributed", "distributed.worker", "distributed.scheduler", "distributed.nanny"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if address == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1,  # type: ignore[no-untyped-call]
                               processes=True, dashboard_address=None, silence_logs=logging.ERROR)
        with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
            yield client
    else:
        try:
            client = Client(address, timeout="20s")  # type: ignore[no-untyped-call]
        except OSError as exc:
            raise UnusableInput(f"--dask {address}: cannot reach the scheduler: {exc}") from None
        except ValueError as exc:  # distributed's word for an address it cannot parse (an unknown scheme)
            raise UnusableInput(f"--dask {address}: not a scheduler address: {exc}") from None
        with client:
            yield client


def run_dask(shards: list[Shard], job: Job, address: str, workers: int = 2,
             done: Callable[[Shard], None] | None = None) -> Partial:
    """Every shard on a Dask cluster (``local``: a cluster of `workers` processes on this machine)."""
    with client(address, workers) as connected:
        return run_on_client(connected, shards, job, done)


def run_on_client(client: Any, shards: list[Shard], job: Job, done: Callable[[Shard], None] | None = None) -> Partial:
    """Every shard on the cluster of a connected Dask client; the partials merged as they arrive."""
    from distributed import as_completed

    total = Partial(predicates=[p.name for p in load_predicates(job.folder, job.entry_points, job.only)])
    futures = client.map(process_shard, shards, job=job, pure=False)
    index = {f.key: s for f, s in zip(futures, shards, strict=True)}
    try:
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            total.merge(fut.result())
            if done is not None:
                done(index[fut.key])
    except BaseException:
        client.cancel(futures)
        raise
    return total
