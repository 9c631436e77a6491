"""`ph eval --on ray`: each run (task x model x configuration x repeat) is a Ray task; the driver hands out server
slots, re-queues the runs whose worker or server died, and alone writes results.jsonl and the transcripts.

- Joining: `--ray-address` or RAY_ADDRESS joins that cluster; otherwise a local Ray starts with this machine's cores
  and stops at the end. A Ray this process already started (a test, a notebook) is used as it is.
- Resources: an embedded (llamacpp) run asks Ray for its threads' CPUs (`--threads`, default this machine's cores) and
  its worker process keeps the loaded model for its later runs; any other run asks for one CPU (its tests). A served
  run also needs a slot of one of its model's servers: the driver starts at most `--per-server` runs per server at
  once (an actor pool's rule, kept by the driver), so no server sees more concurrent requests than that.
- Failures: a run whose worker or node died goes back to the queue. A server that fails its check is taken out,
  before the eval or when a run on it ends in a model error; its runs in flight are cancelled and re-queued. A run is
  re-queued at most `--retries` times, then recorded as a model error (`--retry-errors` runs it again). The notes
  say what happened; runs left when every server of their model is out stay unrecorded, for the next run.
- Writing: the driver writes each record the moment its run comes back, so Ctrl-C or a kill loses at most the runs in
  flight, and the same command, with `--on ray` or without, resumes.
"""

import logging
import os
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyharness.errors import ModelError, UserError
from pyharness.evals.records import ResultsFile, RunOutput
from pyharness.evals.remote import Recipes, Shipped, execute
from pyharness.evals.report import record_key
from pyharness.evals.runner import EvalPlan, RunSpec, given_up, pending
from pyharness.evals.servers import SERVED, parse_target, server_problem

RAY_MISSING = "--on ray needs Ray: pip install 'py-harness[scale]' (or pip install 'ray>=2.9')"
WINDOW = 2
"""Runs handed to Ray per CPU slot: the next one is ready when a run ends, the rest of the queue stays here."""


def import_ray():
    """The ray module, or the one-line error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError(RAY_MISSING) from None
    return ray


@dataclass
class Server:
    """One server of a served model: its runs in flight, and why it was taken out ('' while it takes runs)."""

    url: str
    busy: int = 0
    out: str = ""


@dataclass
class Flight:
    """A run handed to Ray; an orphan's server was taken out, so its result is dropped (the run was re-queued)."""

    run: RunSpec
    server: Server | None
    orphaned: bool = False


@dataclass
class Fanout:
    """What the driver did besides writing records: notes for the summary, and the runs left unrun."""

    written: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    left: int = 0


def run_on_ray(plan: EvalPlan, out: Path, *, address: str | None = None, per_server: int = 1, retries: int = 2,
               threads: int | None = None, retry_errors: bool = False, ship: bool | None = None,
               on_result: Callable[[dict, int, int], None] = lambda record, done, total: None) -> Fanout:
    """Run every planned run not yet in OUT/results.jsonl as a Ray task; `ship` forces (True) or forbids (False)
    packing task folders for other machines (default: when the cluster has more than one node)."""
    ray = import_ray()
    results = ResultsFile(out)
    todo = pending(plan, results.path, retry_errors)
    driver = Driver(ray, plan, results, per_server=per_server, retries=retries,
                    threads=threads or os.cpu_count() or 1, on_result=on_result, total=len(todo))
    driver.check_servers()
    if not todo:
        return driver.fanout
    with connected(ray, address):
        driver.start(todo, ship)
    return driver.fanout


@contextmanager
def connected(ray, address: str | None) -> Iterator[None]:
    """Inside: connected to the cluster at `address` (or RAY_ADDRESS), else to a local Ray started for the block."""
    if ray.is_initialized():
        yield
        return
    where = address or os.environ.get("RAY_ADDRESS")
    quiet = dict(log_to_driver=False, logging_level=logging.WARNING)
    try:
        if where:
            ray.init(address=where, **quiet)
        else:
            ray.init(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as err:
        what = f"join the Ray cluster at {where}" if where else "start a local Ray"
        raise UserError(f"cannot {what}: {str(err).strip().splitlines()[0] if str(err).strip() else err}") from None
    try:
        yield
    finally:
        ray.shutdown()


class Driver:
    """The queue, the slots, the flights and the one writer of a Ray eval."""

    def __init__(self, ray, plan: EvalPlan, results: ResultsFile, *, per_server: int, retries: int, threads: int,
                 on_result: Callable[[dict, int, int], None], total: int):
        self.ray, self.plan, self.results = ray, plan, results
        self.per_server, self.retries, self.threads = per_server, retries, threads
        self.on_result, self.total = on_result, total
        self.targets = {spec: parse_target(spec) for spec in plan.models}
        self.servers = {spec: [Server(url) for url in t.servers] for spec, t in self.targets.items()}
        self.fanout = Fanout()
        self.flights: dict[object, Flight] = {}
        self.queues: dict[str, deque[RunSpec]] = {spec: deque() for spec in plan.models}
        self.attempts: Counter[int] = Counter()
        self.requeued: Counter[str] = Counter()
        self.keys: set[tuple] = set()
        self.recipes = Recipes(self.targets, threads)

    def check_servers(self) -> None:
        """Take out every server that fails its check; a model left with none is a one-line error."""
        pairs = [(spec, s) for spec, servers in self.servers.items() for s in servers]
        with ThreadPoolExecutor(max_workers=min(16, len(pairs) or 1)) as pool:
            problems = list(pool.map(lambda pair: server_problem(self.targets[pair[0]], pair[1].url), pairs))
        for (spec, server), problem in zip(pairs, problems):
            if problem:
                server.out = problem
                self.fanout.notes.append(f"server {server.url} of {spec} taken out before the eval: {problem}")
        for spec, servers in self.servers.items():
            if servers and all(s.out for s in servers):
                raise ModelError(f"no server of {spec} answers: {servers[0].out}")

    def start(self, todo: list[RunSpec], ship: bool | None) -> None:
        """Hand the runs to Ray, settle them as they come back, write each record."""
        ray = self.ray
        self.cpus = {spec: self.threads if t.kind == "llamacpp" else 1 for spec, t in self.targets.items()}
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        biggest = max((n["Resources"].get("CPU", 0) for n in nodes), default=0)
        for spec, cpus in self.cpus.items():
            if cpus > biggest:
                raise UserError(f"runs of {spec} ask for {cpus} CPUs (llama.cpp threads) but the largest Ray node has "
                                f"{biggest:g}: use --threads {int(biggest) or 1}")
        total = sum(n["Resources"].get("CPU", 0) for n in nodes)
        self.limit = {spec: max(1, int(total // cpus)) * WINDOW for spec, cpus in self.cpus.items()}
        self.inflight: Counter[str] = Counter()
        self.task = ray.remote(max_retries=0)(execute)
        self.plan_ref = ray.put(replace(self.plan, tasks=[]))  # each run carries its own task
        self.shipped = self._ship(todo) if (len(nodes) > 1 if ship is None else ship) else Shipped()
        from pyharness.workspace import sandbox

        self.sandbox_on = sandbox.enabled()
        for run in todo:
            self.queues[run.model].append(run)
        try:
            self._loop()
        finally:
            for ref in self.flights:  # Ctrl-C or a fault: the runs in flight are dropped, unrecorded
                ray.cancel(ref, force=all(f.orphaned for f in self.flights.values()))
        self._summarise()

    def _loop(self) -> None:
        while True:
            self._fill()
            if not self.flights or all(f.orphaned for f in self.flights.values()):
                return
            done, _ = self.ray.wait(list(self.flights), num_returns=1, timeout=1.0)
            for ref in done:
                self._settle(ref)

    def _fill(self) -> None:
        """Submit runs in the plan's order while their model has a free slot."""
        while True:
            heads = [(q[0].order, spec) for spec, q in self.queues.items() if q and self._has_slot(spec)]
            if not heads:
                return
            run = self.queues[min(heads)[1]].popleft()
            server = self._free_server(run.model)
            if server is not None:
                server.busy += 1
            self.inflight[run.model] += 1
            ref = self.task.options(num_cpus=self.cpus[run.model]).remote(
                self.plan_ref, run, self.recipes.recipe(run, server.url if server else ""), self.sandbox_on,
                self.shipped)
            self.flights[ref] = Flight(run, server)

    def _has_slot(self, spec: str) -> bool:
        if self.targets[spec].kind in SERVED:
            return self._free_server(spec) is not None
        return self.inflight[spec] < self.limit[spec]

    def _free_server(self, spec: str) -> Server | None:
        free = [s for s in self.servers[spec] if not s.out and s.busy < self.per_server]
        return min(free, key=lambda s: s.busy) if free else None

    def _settle(self, ref) -> None:
        flight = self.flights.pop(ref)
        self.inflight[flight.run.model] -= 1
        if flight.server is not None:
            flight.server.busy -= 1
        try:
            output: RunOutput = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as err:  # ph's own code failed on the worker: a set-up problem
            if flight.orphaned:
                return
            cause = getattr(err, "cause", None)
            if isinstance(cause, UserError | ModelError):
                raise cause from None
            raise UserError(f"run {flight.run.task.id} failed on its worker: {_first_line(cause or err)}") from None
        except self.ray.exceptions.RayError as err:  # the worker or its node died, or the run was cancelled
            if not flight.orphaned:
                self._retry(flight.run, "their worker died", _first_line(err))
            return
        if flight.orphaned:
            return
        server = flight.server
        if output.record["outcome"] == "error" and server is not None:
            problem = server_problem(self.targets[flight.run.model], server.url)
            if problem:
                self._take_out(flight.run.model, server, problem)
                self._retry(flight.run, "their server went away", problem)
                return
        self._write(output)

    def _take_out(self, spec: str, server: Server, problem: str) -> None:
        """Stop sending runs to a server; its runs in flight are cancelled and re-queued."""
        server.out = problem
        orphans = [(ref, f) for ref, f in self.flights.items() if f.server is server]
        for ref, flight in orphans:
            flight.orphaned = True
            self.ray.cancel(ref)
            self._retry(flight.run, "their server went away", problem)
        self.fanout.notes.append(f"server {server.url} of {spec} taken out mid-eval: {problem}; "
                                 f"{len(orphans) + 1} run(s) on it re-queued")

    def _retry(self, run: RunSpec, why: str, detail: str) -> None:
        self.attempts[run.order] += 1
        if self.attempts[run.order] > self.retries:
            self._write(given_up(self.plan, run, f"gave up after {self.attempts[run.order]} tries: {why}: {detail}"))
            self.requeued["given up"] += 1
            return
        self.queues[run.model].appendleft(run)
        self.requeued[why] += 1

    def _write(self, output: RunOutput) -> None:
        key = record_key(output.record)
        if key in self.keys:  # never expected (a run is in flight once at a time): a record is written once
            return
        self.keys.add(key)
        record = self.results.add(output)
        self.fanout.written.append(record)
        self.on_result(record, len(self.fanout.written), self.total)

    def _ship(self, todo: list[RunSpec]) -> Shipped:
        """Each task folder packed once into the object store, for workers on other machines."""
        from pyharness.evals.bundles import pack, task_folder

        bundles: dict[str, tuple[str, object]] = {}
        for run in todo:
            folder = task_folder(run.task)
            if folder is not None and str(folder) not in bundles:
                digest, data = pack(folder)
                bundles[str(folder)] = (digest, self.ray.put(data))
        return Shipped(bundles)

    def _summarise(self) -> None:
        notes = self.fanout.notes
        for why in ("their worker died", "their server went away"):
            if self.requeued[why]:
                notes.append(f"{self.requeued[why]} run(s) re-queued: {why}")
        if self.requeued["given up"]:
            notes.append(f"{self.requeued['given up']} run(s) given up after {self.retries + 1} tries, recorded as "
                         "errors (--retry-errors runs them again)")
        for spec, queue in self.queues.items():
            if queue:
                self.fanout.left += len(queue)
                notes.append(f"{len(queue)} run(s) of {spec} not run: every server of it was taken out; start one "
                             "and run the same command again")


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"[:300]
