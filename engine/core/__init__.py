"""The rules core: colours and coordinates, the 8 symmetries, the Zobrist table, the numba kernels
and ``Board``, the one place that decides legality.  Pure: no I/O, no GTP, no SQL."""
