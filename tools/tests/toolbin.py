"""The tools and a gpu_bench stand-in as a deploy recipe finds them on PATH, for tests that run the recipes."""

from __future__ import annotations

from pathlib import Path

TOOL_MODULES = {"gpu-bench-gate": "cli_gate", "gpu-bench-export": "cli_export", "gpu-bench-history": "cli_history"}


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
        write_exe(folder / name, f'#!/bin/sh\nPYTHONPATH="{pythonpath}" exec "{python}" -m gpu_bench_tools.{module} "$@"\n')
    write_exe(folder / "gpu_bench-stub", "#!/bin/sh\n"
              'for a in "$@"; do case "$a" in --benchmark_out=*) out=${a#--benchmark_out=};; esac; done\n'
              'if [ -z "$STUB_RESULTS" ]; then echo "gpu_bench: no CUDA GPU is visible (stand-in)" >&2; exit 1; fi\n'
              'cp "$STUB_RESULTS" "$out"\n')
    return folder
