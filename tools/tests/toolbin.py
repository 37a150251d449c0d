"""For the tests that run the deploy recipes: the tools and a gpu_bench stand-in as a recipe finds them on
PATH, and a committed run made degraded."""

from __future__ import annotations

from pathlib import Path

import gatefiles as gf

TOOL_MODULES = {"gpu-bench-gate": "cli.gate", "gpu-bench-export": "cli.export", "gpu-bench-history": "cli.history"}


def write_exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def tool_bin(folder: Path, python: str, pythonpath: Path) -> Path:
    """gpu-bench-gate, -export and -history run by `python` from `pythonpath`, and gpu_bench-stub, a gpu_bench
    stand-in that copies $STUB_RESULTS to --benchmark_out or, with it empty, fails as gpu_bench does without
    a GPU."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, module in TOOL_MODULES.items():
        write_exe(folder / name,
                  f'#!/bin/sh\nPYTHONPATH="{pythonpath}" exec "{python}" -m gpu_bench_tools.{module} "$@"\n')
    write_exe(folder / "gpu_bench-stub", "#!/bin/sh\n"
              'for a in "$@"; do case "$a" in --benchmark_out=*) out=${a#--benchmark_out=};; esac; done\n'
              'if [ -z "$STUB_RESULTS" ]; then echo "gpu_bench: no CUDA GPU is visible (stand-in)" >&2; exit 1; fi\n'
              'cp "$STUB_RESULTS" "$out"\n')
    return folder


def degraded_copy(folder: Path) -> str:
    """The committed H200 gate run with its d2d copy 20% slower: the gate says DEGRADED: d2d ..."""
    doc = gf.scaled(gf.read(gf.GATE_H200), "Transfer/dir:d2d/", "gbps", 0.8)
    return gf.write(Path(folder) / "gate_h200_d2d_cut.json", doc)


def slow_once(folder: Path) -> Path:
    """A gpu_bench stand-in whose first run has the committed H200 gate run's d2d copy 20% slower, and whose
    later runs (the gate measuring again) have it as committed; both as made on this host."""
    import socket

    folder.mkdir(parents=True, exist_ok=True)
    first, again = (gf.scaled(gf.read(gf.GATE_H200), "Transfer/dir:d2d/", "gbps", k) for k in (0.8, 1.0))
    for doc in (first, again):
        doc["context"]["host_name"] = socket.gethostname()
    gf.write(folder / "first.json", first)
    gf.write(folder / "again.json", again)
    return write_exe(folder / "gpu_bench", "#!/bin/sh\n"
                     'for a in "$@"; do case "$a" in --benchmark_out=*) out=${a#--benchmark_out=};; esac; done\n'
                     f'here="{folder}"\n'
                     'if [ -e "$here/ran" ]; then cp "$here/again.json" "$out"; exit 0; fi\n'
                     'touch "$here/ran"\ncp "$here/first.json" "$out"\n')
