"""Updates on a GPU, eagerly or replayed as one CUDA graph (docs/user/gpu.rst teaches this).

An off-policy gradient step is a few hundred small kernels, and launched one by one from
Python it can be slower on a GPU than on the CPU (docs/benchmarks/device.rst). A CUDA graph
records the kernels of a whole round of steps once; a replay launches them in one call.
"""
import numpy as np
import torch

from spinup.machinery.env_checks import check_finite_rows

#: The replay columns of DDPG, TD3 and SAC: batch key -> the buffer's array attribute.
REPLAY_COLUMNS = dict(obs="obs_buf", obs2="obs2_buf", act="act_buf", rew="rew_buf", done="done_buf")


class CapturedCall:
    """``fn(inputs, key)`` on fixed-shape tensors: plainly, or captured once and replayed.

    The inputs are copied into tensors allocated once on ``device`` (a graph reads and
    writes fixed addresses). With ``graph`` on a CUDA device the first call runs ``fn``
    eagerly on a side stream (lazy set-up such as Adam's state and the cuBLAS workspace
    must happen outside a capture; this call is a real update), the next call with a new
    ``key`` records ``fn``'s kernels (recording runs nothing) and every call replays the
    graph of its key, whose outputs are the tensors the capture produced, refilled.
    The warm-up, every capture and every replay run with ``device`` made the current CUDA
    device, on one side stream of that device: on ``cuda:1`` the capture stream and the
    random-number generator a capture registers are those of GPU 1, not of GPU 0.

    Args:
        algo (str): the algorithm, for messages.
        fn (callable): returns a dict of tensors, ``inputs`` a dict of tensors on ``device``;
            under capture it may not read values on the host (``.item()``, ``if`` on a tensor).
        device (torch.device): where ``fn`` runs.
        graph (bool): capture on a CUDA device (the CPU always runs ``fn`` plainly).
        log (callable): prints a line when the first capture succeeds or a capture fails.

    Attributes:
        graph (bool): whether calls replay graphs (False after a failed capture).
    """

    def __init__(self, algo, fn, device, graph, log=print):
        self.algo, self.fn, self.device, self.log = algo, fn, torch.device(device), log
        self.graph = bool(graph) and self.device.type == "cuda"
        self.static = None       # name -> input tensor on device, allocated once
        self._graphs = {}        # key -> (CUDAGraph, its output tensors), each its own memory
        self._warm = False
        self._stream = None      # the side stream of the warm-up and the captures

    def __call__(self, inputs, key=0):
        """Run on ``inputs`` (name -> numpy array or tensor; each call the same shapes and
        dtypes) and return ``fn``'s dict of output tensors (valid until the next call)."""
        if not self.graph and self.device.type == "cpu":   # no graph: no copies either
            return self.fn({name: torch.as_tensor(value) for name, value in inputs.items()},
                           key)
        self._load(inputs)
        if not self.graph:
            return self.fn(self.static, key)
        # the current device decides the stream a capture records on and the generator it
        # registers (its random numbers); without this, cuda:N would get those of whichever
        # device is current, usually GPU 0
        with torch.cuda.device(self.device):
            return self._graph_call(key)

    def _graph_call(self, key):
        if key not in self._graphs:
            if not self._warm:
                return self._warm_up(key)
            try:
                self._graphs[key] = self._capture(key)
                if len(self._graphs) == 1:
                    self.log(f"{self.algo}: captured the update as a CUDA graph; it is replayed "
                             f"from here on")
            except Exception as error:    # noqa: BLE001 - any failure: say why, go on eagerly
                self.graph = False
                why = str(error).strip().splitlines()[0] if str(error).strip() else ""
                self.log(f"{self.algo}: could not capture the update as a CUDA graph "
                         f"({type(error).__name__}: {why[:200]}); updating eagerly from here "
                         f"on (cuda_graph=False skips the attempt)")
                return self.fn(self.static, key)
        graph, outputs = self._graphs[key]
        graph.replay()
        return outputs

    def _load(self, inputs):
        if self.static is None:
            self.static = {name: torch.as_tensor(value).to(self.device).clone()
                           for name, value in inputs.items()}
            return
        for name, value in inputs.items():
            self.static[name].copy_(torch.as_tensor(value))

    def _side_stream(self):
        if self._stream is None:
            self._stream = torch.cuda.Stream(self.device)
        return self._stream

    def _warm_up(self, key):
        stream = self._side_stream()
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            outputs = self.fn(self.static, key)
        torch.cuda.current_stream(self.device).wait_stream(stream)
        self._warm = True
        return outputs

    def _capture(self, key):
        graph = torch.cuda.CUDAGraph()
        # an explicit stream: torch.cuda.graph's own default is made once per process, on
        # whichever device was current at its first use
        with torch.cuda.graph(graph, stream=self._side_stream()):
            outputs = self.fn(self.static, key)
        return graph, outputs


class DeviceReplay:
    """A copy on ``device`` of a replay buffer's arrays, brought up to date by :meth:`sync`,
    which copies only the slots ``store`` wrote (cyclically from ``ptr``) since the last
    sync: each transition crosses to the GPU once, not once per batch that draws it.

    Args:
        buffer: a replay buffer as in DDPG/TD3/SAC: numpy arrays (named in ``columns``) of
            ``max_size`` rows, ``ptr`` and ``size``.
        device (torch.device): where the copy lives.
        columns (dict): batch key -> the buffer's attribute name.
        check (callable or None): ``check(rows)`` on the numpy slot numbers each sync
            copies (e.g. a NaN check).
    """

    def __init__(self, buffer, device, columns=REPLAY_COLUMNS, check=None):
        self.buffer, self.columns, self.check = buffer, dict(columns), check
        self.data = {key: torch.zeros_like(torch.from_numpy(getattr(buffer, name)), device=device)
                     for key, name in self.columns.items()}
        self._ptr = None     # buffer.ptr at the last sync (None: copy everything next)

    def sync(self, stores_since=None):
        """Copy the slots written since the last sync (all of them at the first sync, or
        when ``stores_since``, the number of ``store`` calls since then, is unknown or
        reaches the capacity)."""
        buf = self.buffer
        if self._ptr is None or stores_since is None or stores_since >= buf.max_size:
            rows = np.arange(buf.size)
        else:
            rows = (self._ptr + np.arange(stores_since)) % buf.max_size
        self._ptr = buf.ptr
        if len(rows) == 0:
            return
        if self.check is not None:
            self.check(rows)
        # a run of consecutive slots, or two when it wraps past the end
        for part in np.split(rows, np.flatnonzero(np.diff(rows) != 1) + 1):
            lo, hi = int(part[0]), int(part[-1]) + 1
            for key, name in self.columns.items():
                self.data[key][lo:hi].copy_(torch.from_numpy(getattr(buf, name)[lo:hi]))

    def gather(self, rows):
        """The batch of slots ``rows`` (an int64 tensor on the device): a dict like
        ``buffer.sample_batch``'s, its tensors on the device."""
        return {key: column.index_select(0, rows) for key, column in self.data.items()}


def uses_device_path(device):
    """Whether an update round on ``device`` takes the device path (a device copy of the
    buffer, the rows of the round drawn at once, static inputs): on every device but the CPU,
    where the algorithm runs the plain loop of its pseudocode."""
    return device.type != "cpu"


class UpdateRound:
    """``n`` gradient steps, each on a fresh batch drawn uniformly from a replay buffer: the
    round of DDPG, TD3 and SAC. On the CPU it is that loop, with ``buffer.sample_batch``. On
    a GPU the rows of all ``n`` batches are drawn first by the same numpy calls (the same
    numbers as on the CPU) and sent over once, the batches are gathered from a
    :class:`DeviceReplay`, and with ``graph`` the whole round is one replayed CUDA graph.

    Args:
        algo (str): the algorithm, for messages.
        update (callable): one gradient step, ``update(data)``, or ``update(data, count)``
            with ``period`` (``count``: the steps taken before it in the run), ``data`` a
            batch as from ``buffer.sample_batch``. It returns a dict of detached tensors to
            log, 0-d (one number per step) or one value per sample.
        buffer: the replay buffer (``sample_batch`` and what :class:`DeviceReplay` reads).
        batch_size (int): transitions per batch.
        n (int): gradient steps per round (``update_every``).
        device (torch.device): where the networks train.
        graph (bool): on a CUDA device, replay the round as one graph.
        period (int or None): ``update``'s work depends on the step count modulo ``period``
            only (TD3: ``policy_delay``); one graph per phase.
        log (callable): prints one line.
    """

    def __init__(self, algo, update, buffer, batch_size, n, device, graph=True, period=None,
                 log=print):
        self.update, self.buffer, self.batch_size, self.n = update, buffer, batch_size, n
        self.period = period
        self._stored = 0   # buffer.stored at the last round
        self.device = torch.device(device)
        self.on_device = uses_device_path(self.device)
        if self.on_device:
            def check(rows):   # NaN/inf observations, once per transition (not per batch)
                check_finite_rows(buffer.obs_buf[rows], buffer.obs2_buf[rows], rows, buffer)
            self.replay = DeviceReplay(buffer, self.device, check=check)
            self.call = CapturedCall(algo, self._steps, self.device, graph, log)

    def __call__(self, count=0):
        """Run the round; ``count`` is the number of steps taken before it (with ``period``).

        Returns:
            dict: name -> numpy array of the values logged over the round, in step order;
            one-number-per-step values as float64 (what ``.item()`` gives).
        """
        if not self.on_device:
            steps = [self._update(self.buffer.sample_batch(self.batch_size), count + j)
                     for j in range(self.n)]
            return _to_numpy(_stack(steps))
        # the rows stored since the last round: counted by the buffer (``stored``, all it
        # ever stored), else one per update (update_every stores, update_every updates)
        stored = getattr(self.buffer, "stored", None)
        self.replay.sync(self.n if stored is None else stored - self._stored)
        self._stored = stored
        rows = np.stack([np.random.randint(0, self.buffer.size, size=self.batch_size)
                         for _ in range(self.n)])
        phase = count % self.period if self.period else 0
        return _to_numpy(self.call(dict(rows=rows), phase))

    def _update(self, data, count):
        return self.update(data, count) if self.period else self.update(data)

    def _steps(self, inputs, phase):
        rows = inputs["rows"]
        steps = [self._update(self.replay.gather(rows[j]), phase + j) for j in range(self.n)]
        return _stack(steps)


def _stack(steps):
    """A list of per-step dicts of tensors -> one dict, each name's values stacked."""
    names = dict.fromkeys(name for step in steps for name in step)
    return {name: torch.stack([step[name] for step in steps if name in step])
            for name in names}


def _to_numpy(stacked):
    arrays = {name: value.detach().cpu().numpy() for name, value in stacked.items()}
    return {name: a.astype(np.float64) if a.ndim == 1 else a for name, a in arrays.items()}
