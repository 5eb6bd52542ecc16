"""Progress reporting for long calls: progress=None | False | True | "tqdm" | callable.

The compiled core calls progress(done, total, what) with the GIL held after each unit of work
(a point of a sweep, a seed of a simulation, and within a seed each CG iteration, as the stage
"seed k CG iteration") and checks for Ctrl-C there, so an interrupt raises KeyboardInterrupt
instead of waiting for the whole call.
"""
import contextlib
import sys


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError as e:
        raise ImportError(
            "progress='tqdm' needs tqdm, an optional dependency: pip install tqdm "
            "(Debian: apt-get install python3-tqdm); or pass progress=True for a plain "
            "stderr line, or a callable(done, total, what)") from e
    return tqdm


class _Bar:
    """A tqdm bar (or, for progress=True without tqdm, one stderr line) fed by the core."""

    def __init__(self, desc, use_tqdm):
        self.desc, self.use_tqdm, self.bar, self.last = desc, use_tqdm, None, None

    def __call__(self, done, total, what):
        if self.use_tqdm:
            if "CG iteration" in what:  # a seed's inner stage: the bar counts seeds
                return
            if self.bar is None:
                self.bar = _tqdm()(total=total, desc=self.desc, unit=what)
            self.bar.total = total
            self.bar.update(done - self.bar.n)
        elif (done, total) != self.last:
            self.last = (done, total)
            sys.stderr.write(f"\r[{self.desc}] {done}/{total} {what}")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    def close(self):
        if self.bar is not None:
            self.bar.close()


@contextlib.contextmanager
def reporter(progress, desc):
    """The callable to hand to the core for `progress` (None for no reporting)."""
    if progress is None or progress is False:
        yield None
    elif callable(progress):
        yield progress
    elif progress is True or progress == "tqdm":
        use_tqdm = progress == "tqdm"
        if progress is True:
            try:
                _tqdm()
                use_tqdm = True
            except ImportError:
                pass
        else:
            _tqdm()  # a clear ImportError before any work
        bar = _Bar(desc, use_tqdm)
        try:
            yield bar
        finally:
            bar.close()
    else:
        raise TypeError("progress must be None, False, True, 'tqdm' or a callable(done, total, "
                        f"what), got {progress!r}")
