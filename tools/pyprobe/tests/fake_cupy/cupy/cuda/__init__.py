"""cupy.cuda's stand-in: Device, Stream, Event and the driver and runtime modules."""

import threading

from . import driver, runtime

_current = threading.local()


class Device:
    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)

    def use(self):
        runtime.setDevice(self.id)


class Stream:
    """A stream of its own (cudaStreamCreateWithFlags); `use` makes it the thread's current."""

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.ptr = 0 if null else runtime.streamCreateWithFlags(
            runtime.streamNonBlocking if non_blocking else runtime.streamDefault)

    def synchronize(self):
        runtime.streamSynchronize(self.ptr)

    def use(self):
        _current.stream = self
        return self


Stream.null = Stream(null=True)


def get_current_stream():
    return getattr(_current, "stream", Stream.null)


class Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.ptr = runtime.eventCreateWithFlags(
            runtime.eventDisableTiming if disable_timing else runtime.eventDefault)

    def record(self, stream=None):
        runtime.eventRecord(self.ptr, (stream or get_current_stream()).ptr)

    @property
    def done(self):
        return runtime.eventQuery(self.ptr) == 0
