"""Iterating what another thread produces ahead: decoding the next pieces of a stream or of a
column while the current one is worked on, so that decoding and a numba kernel (both release the
GIL) overlap on two cores, in bounded memory."""

from __future__ import annotations

import threading
from queue import Empty, Full, Queue


def prefetch(batches, depth: int = 2):
    """Iterate ``batches`` while a second thread decodes the next ones (zstd, zlib and numpy release the
    GIL, and so do the numba kernels): decoding and the work on the items overlap on two cores. At most
    ``depth`` decoded batches wait, so memory stays bounded."""
    queue: Queue = Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def produce() -> None:
        try:
            for item in batches:
                while not stop.is_set():
                    try:
                        queue.put(item, timeout=0.1)
                        break
                    except Full:
                        continue
                if stop.is_set():
                    return
            queue.put(done)
        except BaseException as error:  # handed to the consumer, raised there
            queue.put(error)

    worker = threading.Thread(target=produce, name="jbgui-decode", daemon=True)
    worker.start()
    try:
        while True:
            item = queue.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():
            try:
                queue.get(timeout=0.05)
            except Empty:
                pass
        worker.join()
