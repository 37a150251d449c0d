"""scripts/families_md.py: docs/families.md's blocks follow gpu_bench --help, and a stale or missing one is named."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "families_md.py"
spec = importlib.util.spec_from_file_location("families_md", SCRIPT)
families_md = importlib.util.module_from_spec(spec)
spec.loader.exec_module(families_md)

HELP = """gpu_bench 0.1.0: intro

families:
Alpha: the first family
  Alpha/x:{a,b}
    what it does.

Beta: the second
  Beta/y:{N}
    counters  gbps.

Exit status: 0 when every selected case ran.
"""


def doc(alpha_text, beta=True):
    text = "# Families\n\n## Alpha\n\n" + families_md.block("Alpha", alpha_text) + "\nProse.\n"
    if beta:
        text += "\n## Beta\n\n" + families_md.BEGIN.format(name="Beta") + "\n" + families_md.END.format(name="Beta") + "\n"
    return text


def test_sections_are_read_from_the_help_and_the_text_after_them_left_out():
    sections = families_md.help_sections(HELP)
    assert list(sections) == ["Alpha", "Beta"]
    assert sections["Beta"] == "Beta: the second\n  Beta/y:{N}\n    counters  gbps.\n"


def test_a_stale_block_is_named_and_rewritten_and_the_prose_kept():
    sections = families_md.help_sections(HELP)
    out, problems = families_md.rewrite(doc("Alpha: old text\n"), sections)
    assert problems == ["Alpha's block differs from gpu_bench --help", "Beta's block differs from gpu_bench --help"]
    assert "  Alpha/x:{a,b}\n" in out and "Prose.\n" in out and "old text" not in out
    again, none = families_md.rewrite(out, sections)
    assert none == [] and again == out


def test_a_family_without_a_block_fails_the_check(tmp_path):
    sections = families_md.help_sections(HELP)
    _, problems = families_md.rewrite(doc(sections["Alpha"], beta=False), sections)
    assert problems == ["Beta has no block (add the two comments under its heading)"]
    fake = tmp_path / "gpu_bench"
    fake.write_text("#!/bin/sh\ncat <<'END'\n" + HELP + "END\n")
    fake.chmod(0o755)
    md = tmp_path / "families.md"
    md.write_text(doc(sections["Alpha"], beta=False))
    assert families_md.main(["--check", str(fake), str(md)]) == 1
    assert families_md.main([str(fake), str(md)]) == 1  # written, but Beta still has no block
    md.write_text(doc("stale\n"))
    assert families_md.main([str(fake), str(md)]) == 0
    assert families_md.main(["--check", str(fake), str(md)]) == 0
