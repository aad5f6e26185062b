#!/usr/bin/python3
"""numpy reads what attnviz-cli writes: runs `attend` on seed 002 and 004 and on the multi-head
case, loads the .npz outputs with np.load and compares them with the numpy references.
Usage: /usr/bin/python3 tests/cli/check_with_numpy.py path/to/attnviz-cli"""
import os
import subprocess
import sys
import tempfile

import numpy as np

cli = sys.argv[1]
data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
worst = 0.0
with tempfile.TemporaryDirectory() as tmp:
    for case, flags, heads in (("seed002", ["--score", "dot"], False), ("seed004", [], False),
                               ("mha", ["--heads", "2", "--compressed"], True)):
        out = os.path.join(tmp, case + ".npz")
        subprocess.run([cli, "attend", "--in", os.path.join(data, case + ".npz"), "--out", out, "--quiet"] + flags,
                       check=True)
        with np.load(out) as got, np.load(os.path.join(data, case + ".expected.npz")) as ref:
            names = ["output", "weights"] + (["head_weights"] if heads else [])
            assert sorted(got.files) == sorted(names), got.files
            for name in names:
                assert got[name].dtype == np.float32, got[name].dtype
                err = float(np.max(np.abs(got[name] - ref[name])))
                worst = max(worst, err / max(1.0, float(np.max(np.abs(ref[name])))))
                print("%-8s %-12s shape %-12s max |err| %.3g" % (case, name, got[name].shape, err))
print("largest relative error %.3g" % worst)
sys.exit(0 if worst < 1e-5 else 1)
