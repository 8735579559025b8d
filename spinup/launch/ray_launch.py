"""The Ray launcher of a grid (``--launcher ray``): each variant is a Ray task that starts
the variant's process on its node (:func:`ray_task`), watched and stopped by
:mod:`spinup.launch.grid_launch` through a :class:`_RayHandle`.
"""
import os
import os.path as osp
import time

from spinup.launch.processes import POLL_SECONDS, _LocalHandle, _stop
from spinup.machinery.run_dir import LaunchError

#: Written into a run directory to ask the Ray task running there to stop (Ctrl-C).
STOP_NAME = ".spinup-stop"


def _remove(path):
    if osp.exists(path):
        os.remove(path)


def ray_task(encoded, log_path, threads):
    """What a Ray task runs: the variant's process on the task's node, stopped with SIGINT
    (keeping its last checkpoint) when ``STOP_NAME`` appears in the run directory or on a
    ``KeyboardInterrupt`` (``ray.cancel``). Returns the variant's exit code.
    """
    stop_path = osp.join(osp.dirname(log_path), STOP_NAME)
    handle = _LocalHandle(encoded, log_path, threads)
    handle.start()
    try:
        while not osp.exists(stop_path) and handle.poll() is None:
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        pass
    _stop([handle])
    _remove(stop_path)
    return handle.proc.wait()


class _RayHandle:
    """A variant run as a Ray task of ``num_cpu`` CPUs, never retried (a rerun would
    start the run again over itself)."""

    def __init__(self, remote_fn, encoded, log_path, num_cpu):
        self.stop_path = osp.join(osp.dirname(log_path), STOP_NAME)
        self.args, self.code, self.cause = (remote_fn, encoded, log_path, num_cpu), None, None
        self.ref = None

    @property
    def started(self):
        """Whether the task was submitted (a signal can come before :meth:`start`)."""
        return self.ref is not None

    def start(self):
        remote_fn, encoded, log_path, num_cpu = self.args
        _remove(self.stop_path)   # left by an earlier launcher that was killed
        self.ref = remote_fn.options(num_cpus=num_cpu, max_retries=0).remote(
            encoded, log_path, num_cpu)

    def poll(self):
        import ray
        if self.code is None and self.ref is not None and ray.wait([self.ref], timeout=0)[0]:
            try:
                self.code = ray.get(self.ref)
            except ray.exceptions.RayError as e:   # the task or its worker failed
                lines = str(e).strip().splitlines()
                self.cause = f"{type(e).__name__}: {lines[-1] if lines else ''}"
                self.code = 130 if isinstance(e, ray.exceptions.TaskCancelledError) else 1
        return self.code

    def interrupt(self):
        if self.poll() is None:
            open(self.stop_path, "w").close()

    def kill(self):
        import ray
        if self.poll() is None:
            ray.cancel(self.ref, force=True)
        _remove(self.stop_path)


def require_ray():
    """Import and return Ray, or raise a one-line :class:`LaunchError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise LaunchError("--launcher ray needs Ray, which is not installed: pip install -e "
                          "'.[ray]' (or pip install ray)") from None
    return ray


def _check_reachable(ray_address):
    """Raise LaunchError if nothing accepts a connection at ``host:port`` within 10 s (Ray
    itself would retry for minutes); other addresses (``auto``, ``ray://``) are left to Ray."""
    import socket
    host, colon, port = ray_address.rpartition(":")
    if not colon or not port.isdigit() or "://" in ray_address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as e:
        raise LaunchError(f"--ray_address {ray_address}: no Ray cluster answers there "
                          f"({e.strerror or e}); start one with 'ray start --head' and give "
                          "its address") from None


def _start_ray(ray_address, num_cpu):
    """Connect to the cluster at ``ray_address`` (``None``: start a local Ray); return
    whether this call started Ray. Raises LaunchError if no node has ``num_cpu`` CPUs."""
    ray = require_ray()
    started = not ray.is_initialized()
    if started:
        from spinup.machinery.cores import available_cores
        options = dict(address=ray_address) if ray_address else dict(
            num_cpus=available_cores(), include_dashboard=False)
        try:
            ray.init(log_to_driver=False, configure_logging=False, **options)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = f"the Ray cluster at {ray_address}" if ray_address else "a local Ray"
            raise LaunchError(f"--launcher ray: cannot start or reach {where} "
                              f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") \
                from None
    largest = max((node.get("Resources", {}).get("CPU", 0) for node in ray.nodes()
                   if node.get("Alive")), default=0)
    if largest < num_cpu:
        if started:
            ray.shutdown()
        raise LaunchError(f"--cpu {num_cpu}: no node of the Ray cluster has {num_cpu} CPUs "
                          f"(the largest has {int(largest)})")
    return started
