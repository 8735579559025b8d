"""The launchers: the command line's grids and their scheduler, experiment processes and
signals, Ray and MPI launching. They call the algorithms; nothing below imports them
(docs/dev/rooms.rst)."""
