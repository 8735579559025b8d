"""The machinery: what keeps a run safe, reproducible and resumable (argument rules, env
checks, the run directory, checkpoints, devices and CUDA graphs, provenance, memory refusals).
An algorithm reaches it through one door, :mod:`spinup.machinery.door` (docs/dev/rooms.rst)."""
