"""scripts/flags_md.py: README.md's flag table follows gpu_bench --flags_markdown, and a stale one is named."""

import importlib.util
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))  # flags_md imports families_md, as it does when run from scripts/
spec = importlib.util.spec_from_file_location("flags_md", SCRIPTS / "flags_md.py")
flags_md = importlib.util.module_from_spec(spec)
spec.loader.exec_module(flags_md)

TABLE = "| flag | meaning |\n| --- | --- |\n| `--full` | every combination |\n"


def readme(table_text):
    begin = flags_md.BEGIN.format(name="flags")
    return f"# gpu_bench\n\n## Flags\n\nProse.\n\n{begin}\n{table_text}<!-- end of flags -->\n\nMore prose.\n"


def fake_gpu_bench(tmp_path, printed, status=0):
    fake = tmp_path / "gpu_bench"
    fake.write_text(f"#!/bin/sh\n[ \"$1\" = --flags_markdown ] || exit 9\ncat <<'END'\n{printed}END\nexit {status}\n")
    fake.chmod(0o755)
    return str(fake)


def test_a_stale_table_fails_the_check_and_is_rewritten_with_the_prose_kept(tmp_path):
    md = tmp_path / "README.md"
    md.write_text(readme("\n| flag | meaning |\n| --- | --- |\n| `--full` | old words |\n\n"))
    gpu_bench = fake_gpu_bench(tmp_path, TABLE)
    assert flags_md.main(["--check", gpu_bench, str(md)]) == 1
    assert "old words" in md.read_text()  # --check changes nothing
    assert flags_md.main([gpu_bench, str(md)]) == 0
    assert md.read_text() == readme("\n" + TABLE + "\n")
    assert flags_md.main(["--check", gpu_bench, str(md)]) == 0


def test_a_readme_without_the_block_fails(tmp_path):
    md = tmp_path / "README.md"
    md.write_text("# gpu_bench\n\n| flag | meaning |\n")
    assert flags_md.main(["--check", fake_gpu_bench(tmp_path, TABLE), str(md)]) == 1


def test_a_gpu_bench_without_the_flag_is_named_not_compared(tmp_path, capsys):
    md = tmp_path / "README.md"
    md.write_text(readme("\n" + TABLE + "\n"))
    assert flags_md.main(["--check", fake_gpu_bench(tmp_path, "", status=2), str(md)]) == 2
    assert "--flags_markdown exited with 2" in capsys.readouterr().err
